// norma playground: plain JavaScript, no build step. Every value from the server is written with textContent,
// never as HTML. The API key stays in this tab (sessionStorage); a key passed as #key=... is moved there and
// removed from the address bar.
"use strict";

const $ = (id) => document.getElementById(id);

const AUDIT_EXAMPLE = {
  input: "Implementa la clase FlowShaper de NetShaper",
  output:
    "Creo la clase `FlowShaper` que aplica una política a cada flujo.\n\n```csharp\npublic sealed class FlowShaper\n{\n" +
    "    private readonly IShapingPolicy _policy;\n}\n```",
  active_documents: [],
};

const NAMES_LABELS = {
  variation_count: 5,
  phonetic_similarity: { Medium: 1.0 },
  orthographic_similarity: { Medium: 1.0 },
  rule_based: { selected_rules: ["swap_random_letter"], rule_percentage: 20 },
};

function takeKeyFromHash() {
  const match = /(?:^#|&)key=([^&]+)/.exec(window.location.hash);
  if (match) {
    sessionStorage.setItem("norma-key", decodeURIComponent(match[1]));
    history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  $("api-key").value = sessionStorage.getItem("norma-key") || "";
}

async function api(method, path, body) {
  const key = $("api-key").value.trim();
  sessionStorage.setItem("norma-key", key);
  const response = await fetch(path, {
    method,
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + key },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const field = data.field ? " [" + data.field + "]" : "";
    throw new Error(response.status + " " + (data.title || "") + ": " + (data.detail || "") + field);
  }
  return data;
}

function setStatus(id, text, isError) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle("error", Boolean(isError));
}

function cell(row, text, className) {
  const td = document.createElement("td");
  td.textContent = text === undefined || text === null ? "" : String(text);
  if (className) td.className = className;
  row.appendChild(td);
  return td;
}

function fmt(value) {
  return typeof value === "number" ? value.toFixed(3) : value === undefined || value === null ? "" : String(value);
}

function parseJson(text, what) {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(what + " is not valid JSON: " + error.message);
  }
}

function why(match) {
  const explanation = match.explanation || {};
  const parts = [];
  if (explanation.matched_text) {
    const what = explanation.matched_example === null ? "rule text" : "example " + explanation.matched_example;
    parts.push(what + ": \u201c" + explanation.matched_text + "\u201d");
  }
  if (explanation.matched_terms && explanation.matched_terms.length) {
    parts.push("terms: " + explanation.matched_terms.join(", "));
  }
  if (typeof explanation.priority_normalized === "number") {
    parts.push("priority " + explanation.priority_normalized.toFixed(2) + ", scope " + fmt(explanation.scope_weight));
  }
  return parts.join("; ");
}

async function runMatch() {
  const tbody = $("match-results").querySelector("tbody");
  tbody.replaceChildren();
  setStatus("match-status", "matching\u2026");
  try {
    const body = { message: $("match-message").value, explain: $("match-explain").checked };
    const session = parseJson($("match-session").value, "the session");
    if (session !== undefined) body.session = session;
    const tenant = encodeURIComponent($("tenant").value.trim());
    const data = await api("POST", "/v1/tenants/" + tenant + "/match", body);
    for (const match of data.matches) {
      const row = document.createElement("tr");
      const rule = match.rule || {};
      cell(row, rule.id, "code");
      cell(row, rule.action_text);
      cell(row, fmt(match.similarity_score), "num");
      cell(row, fmt(match.bm25_score), "num");
      cell(row, fmt(match.final_score), "num");
      cell(row, why(match));
      tbody.appendChild(row);
    }
    for (const dropped of data.dropped || []) {
      const row = document.createElement("tr");
      row.className = "dropped";
      cell(row, dropped.rule_id, "code");
      cell(row, "dropped: " + dropped.reason);
      cell(row, fmt(dropped.similarity), "num");
      cell(row, "");
      cell(row, fmt(dropped.final_score), "num");
      cell(row, dropped.detail);
      tbody.appendChild(row);
    }
    setStatus("match-status", data.matches.length + " rule(s) matched (matcher version " + data.matcher_version + ")");
  } catch (error) {
    setStatus("match-status", error.message, true);
  }
}

async function runAudit() {
  const tbody = $("audit-lines").querySelector("tbody");
  tbody.replaceChildren();
  $("audit-other").replaceChildren();
  $("audit-verdict").textContent = "-";
  setStatus("audit-status", "auditing\u2026");
  try {
    const request = parseJson($("audit-request").value, "the audit request");
    if (request === undefined) throw new Error("paste an audit request first");
    const report = await api("POST", "/v1/audit", request);
    const verdict = $("audit-verdict");
    verdict.textContent = report.result;
    verdict.className = "verdict-" + report.result;
    const byLine = new Map();
    for (const violation of report.violations) {
      if (violation.line) {
        if (!byLine.has(violation.line)) byLine.set(violation.line, []);
        byLine.get(violation.line).push(violation);
      } else {
        const item = document.createElement("li");
        item.textContent = violation.rule + " " + violation.severity + " (" + violation.location + "): " + violation.description;
        item.className = "sev-" + violation.severity;
        $("audit-other").appendChild(item);
      }
    }
    String(request.output || "").split("\n").forEach((text, index) => {
      const number = index + 1;
      const row = document.createElement("tr");
      cell(row, number, "num");
      cell(row, text, "code");
      const list = cell(row, "");
      for (const violation of byLine.get(number) || []) {
        const span = document.createElement("span");
        span.className = "violation sev-" + violation.severity;
        span.textContent = violation.rule + " " + violation.severity + ": " + violation.description;
        list.appendChild(span);
      }
      if (byLine.has(number)) row.className = "flagged";
      tbody.appendChild(row);
    });
    setStatus("audit-status", report.violations.length + " violation(s)");
  } catch (error) {
    setStatus("audit-status", error.message, true);
  }
}

async function drawLabels() {
  try {
    const data = await api("POST", "/v1/names/query", { name: $("names-name").value });
    $("names-labels").value = JSON.stringify(data.labels, null, 2);
    setStatus("names-status", "labels drawn");
  } catch (error) {
    setStatus("names-status", error.message, true);
  }
}

async function runNames() {
  const tbody = $("names-details").querySelector("tbody");
  tbody.replaceChildren();
  $("names-final").textContent = "-";
  setStatus("names-status", "scoring\u2026");
  try {
    const variations = $("names-variations").value.split("\n").map((v) => v.trim()).filter(Boolean);
    const labels = parseJson($("names-labels").value, "the labels");
    const data = await api("POST", "/v1/names/score", { name: $("names-name").value, variations, labels });
    $("names-final").textContent = fmt(data.final);
    for (const [name, value] of Object.entries(data)) {
      if (typeof value === "object" && value !== null) continue;
      const row = document.createElement("tr");
      cell(row, name, "code");
      cell(row, fmt(value), "num");
      tbody.appendChild(row);
    }
    setStatus("names-status", "scored " + variations.length + " variation(s)");
  } catch (error) {
    setStatus("names-status", error.message, true);
  }
}

function showTab(name) {
  for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("active", tab.dataset.tab === name);
  for (const panel of document.querySelectorAll(".panel")) panel.hidden = panel.id !== "tab-" + name;
}

document.addEventListener("DOMContentLoaded", () => {
  takeKeyFromHash();
  window.addEventListener("hashchange", takeKeyFromHash);
  $("audit-request").value = JSON.stringify(AUDIT_EXAMPLE, null, 2);
  $("names-labels").value = JSON.stringify(NAMES_LABELS, null, 2);
  for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => showTab(tab.dataset.tab));
  $("match-run").addEventListener("click", runMatch);
  $("audit-example").addEventListener("click", () => {
    $("audit-request").value = JSON.stringify(AUDIT_EXAMPLE, null, 2);
  });
  $("audit-run").addEventListener("click", runAudit);
  $("names-query").addEventListener("click", drawLabels);
  $("names-run").addEventListener("click", runNames);
  document.body.dataset.ready = "true";
});
