// Shared pieces of the playground: the API call, number formatting, DOM helpers, status lines and the session
// history. Every value from the server is written with textContent, never as HTML.

export const $ = (id) => document.getElementById(id);

const HISTORY_SIZE = 10;

/** An API answer that is not 2xx: the status and the problem body's title, detail, field and hint. */
export class ApiError extends Error {
  constructor(status, problem) {
    const field = problem.field ? " [" + problem.field + "]" : "";
    super(status + " " + (problem.title || "error") + ": " + (problem.detail || "") + field);
    this.status = status;
    this.hint = problem.hint || "";
  }
}

export async function api(method, path, body) {
  const key = $("api-key").value.trim();
  sessionStorage.setItem("norma-key", key);
  const response = await fetch(path, {
    method,
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + key },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// Keys whose numbers are scores or ratios (three decimals even when the value happens to be whole); any other
// whole number is a count and is shown as one ("5", never "5.000"). toFixed is locale-independent.
const SCORE_KEY = /score|ratio|similarity|final|base|compliance|threshold|slack|weight|hybrid|bm25|vector|centroid/i;

export function fmtScore(value) {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(3) : value == null ? "" : String(value);
}

export function fmtValue(key, value) {
  if (value === null || value === undefined) return "\u2014";
  if (typeof value === "number") {
    if (Number.isInteger(value) && !SCORE_KEY.test(key)) return String(value);
    return fmtScore(value);
  }
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) {
    if (value.length === 0) return "none";
    if (value.every((item) => typeof item !== "object" || item === null)) return value.map(String).join(", ");
  }
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** An element with a class and text (textContent only). */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const ENFORCEMENT_LABELS = { governs: "governs", neighbour: "neighbour" };

/**
 * Whether a match governs the turn (its ``enforcement``: a check applies its requirements), as a badge whose title
 * is the reason with its figures; null for an answer without one (an older server).
 */
export function enforcementBadge(enforcement) {
  if (!enforcement || typeof enforcement !== "object") return null;
  const word = ENFORCEMENT_LABELS[enforcement.reason] || (enforcement.enforced ? "enforced" : "not enforced");
  const label = typeof enforcement.confidence === "number" ? `${word} \u00b7 ${enforcement.confidence.toFixed(2)}` : word;
  const badge = el("span", "badge " + (enforcement.enforced ? "badge-enforced" : "badge-neighbour"), label);
  badge.title = enforcement.detail || "";
  return badge;
}

export function cell(row, text, className) {
  const td = el("td", className, text === undefined || text === null ? "" : text);
  row.appendChild(td);
  return td;
}

/** A two-column table of key / value rows (numbers formatted by key), into ``tbody``. */
export function fillPairs(tbody, entries) {
  tbody.replaceChildren();
  for (const [key, value] of entries) {
    const row = document.createElement("tr");
    cell(row, key, "code");
    cell(row, fmtValue(key, value), typeof value === "number" || value === null ? "num" : "");
    tbody.appendChild(row);
  }
}

export function setStatus(prefix, text, isError) {
  const node = $(prefix + "-status");
  node.textContent = text;
  node.classList.toggle("error", Boolean(isError));
  const hint = $(prefix + "-hint");
  if (hint) {
    hint.replaceChildren();
    hint.hidden = true;
  }
}

/** The error in the tab's status line; for a 401, what to do to get a key (the server's hint too). */
export function showError(prefix, error) {
  setStatus(prefix, error.message, true);
  const hint = $(prefix + "-hint");
  if (!hint) return;
  const lines = [];
  if (error.status === 401) {
    const tenant = $("tenant").value.trim() || "demo";
    lines.push(["Paste the API key ", "norma serve --demo", " printed at start (the playground URL it printed carries it after #key=), or create one:"]);
    lines.push(["", "norma keys create --tenant " + tenant, ""]);
  } else if (error.hint) {
    lines.push(["", "", error.hint]);
  }
  if (!lines.length) return;
  for (const [before, code, after] of lines) {
    const line = el("p");
    if (before) line.appendChild(document.createTextNode(before));
    if (code) line.appendChild(el("code", "", code));
    if (after) line.appendChild(document.createTextNode(after));
    hint.appendChild(line);
  }
  hint.hidden = false;
}

export function parseJson(text, what) {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(what + " is not valid JSON: " + error.message);
  }
}

/** Show the results area of a tab and hide its empty state. */
export function showResults(prefix) {
  $(prefix + "-empty").hidden = true;
  $(prefix + "-out").hidden = false;
}

// Session history: the last requests of each tab (the form's values, never the key), newest first, in this
// browser tab's sessionStorage.

function historyKey(tab) {
  return "norma-history-" + tab;
}

export function loadHistory(tab) {
  try {
    const entries = JSON.parse(sessionStorage.getItem(historyKey(tab)) || "[]");
    return Array.isArray(entries) ? entries : [];
  } catch (error) {
    return [];
  }
}

export function remember(tab, label, form, outcome) {
  const entries = loadHistory(tab).filter((entry) => JSON.stringify(entry.form) !== JSON.stringify(form));
  entries.unshift({ label, form, outcome, at: new Date().toISOString() });
  sessionStorage.setItem(historyKey(tab), JSON.stringify(entries.slice(0, HISTORY_SIZE)));
}

export function clearHistory(tab) {
  sessionStorage.removeItem(historyKey(tab));
}

/** Fill each ``<div class="card history" data-history="TAB" data-noun="...">`` with its heading, empty-state
line, list and Clear button (ids ``TAB-history``, ``TAB-history-empty``, ``TAB-history-clear``). */
export function buildHistoryCards() {
  for (const card of document.querySelectorAll(".card.history[data-history]")) {
    const tab = card.dataset.history;
    const empty = el("p", "muted small", "Your " + card.dataset.noun + " in this tab show here; click one to run it again.");
    empty.id = tab + "-history-empty";
    const list = el("ol", "history-list");
    list.id = tab + "-history";
    const clear = el("button", "link", "Clear");
    clear.type = "button";
    clear.id = tab + "-history-clear";
    clear.hidden = true;
    card.replaceChildren(el("h3", "", "History"), empty, list, clear);
  }
}

/** The tab's history as a list of buttons; a click calls ``onPick(form)`` (restore the form and run it). */
export function renderHistory(tab, onPick) {
  const list = $(tab + "-history");
  const entries = loadHistory(tab);
  list.replaceChildren();
  $(tab + "-history-empty").hidden = entries.length > 0;
  $(tab + "-history-clear").hidden = entries.length === 0;
  for (const entry of entries) {
    const item = el("li");
    const button = el("button", "history-entry");
    button.type = "button";
    button.title = "run it again";
    button.appendChild(el("span", "history-label", entry.label));
    const time = entry.at ? clock(new Date(entry.at)) : "";
    button.appendChild(el("span", "history-meta", [entry.outcome, time].filter(Boolean).join(" \u00b7 ")));
    button.addEventListener("click", () => onPick(entry.form));
    item.appendChild(button);
    list.appendChild(item);
  }
}

function clock(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return pad(date.getHours()) + ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds());
}

export function shorten(text, size) {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length > size ? flat.slice(0, size - 1) + "\u2026" : flat;
}
