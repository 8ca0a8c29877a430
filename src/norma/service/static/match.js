// The match tab: the matches first, the applied gate, then a collapsed "why not" list of the rules left out,
// closest first.
import { $, api, cell, enforcementBadge, fillPairs, fmtScore, parseJson, remember, setStatus, showError, showResults, shorten } from "./core.js";

const SCORE_NAMES = {
  final: "the final score",
  hybrid: "the hybrid score (vector and BM25)",
  similarity: "the cosine similarity",
  hybrid_or_similarity: "max(hybrid, similarity \u2212 slack)",
};

export function matchForm() {
  return {
    tenant: $("tenant").value.trim(),
    message: $("match-message").value,
    session: $("match-session").value,
    explain: $("match-explain").checked,
  };
}

export function setMatchForm(form) {
  if (form.tenant) $("tenant").value = form.tenant;
  $("match-message").value = form.message || "";
  $("match-session").value = form.session || "";
  $("match-explain").checked = form.explain !== false;
}

/** The gate as the server reports it (``gate``), or read back from the explanations of an older server. */
export function appliedGate(data) {
  if (data.gate && typeof data.gate === "object") return { ...data.gate, source: "server" };
  const explained = (data.matches || []).map((m) => m.explanation).find((e) => e && "threshold" in e);
  if (explained) {
    const threshold = explained.threshold;
    const terms = {};
    if (typeof threshold === "number") terms.threshold = threshold;
    if (explained.threshold_on === "hybrid_or_similarity" && typeof explained.similarity_slack === "number") {
      terms.similarity_slack = explained.similarity_slack;
    }
    return {
      kind: threshold === null || threshold === undefined ? "none" : "fixed",
      score: explained.threshold_on || "",
      threshold: typeof threshold === "number" ? threshold : null,
      terms,
      description: gateSentence(explained.threshold_on, threshold, terms.similarity_slack),
      source: "explanation",
    };
  }
  for (const dropped of data.dropped || []) {
    const found = /^(\S+) score \S+ < threshold ([0-9.]+)/.exec(dropped.detail || "");
    if (dropped.reason === "threshold" && found) {
      const threshold = Number(found[2]);
      return {
        kind: "fixed",
        score: found[1],
        threshold,
        terms: { threshold },
        description: gateSentence(found[1], threshold, undefined),
        source: "dropped",
      };
    }
  }
  return null;
}

function gateSentence(scoreName, threshold, slack) {
  if (typeof threshold !== "number") return "No threshold: every rule in scope is a match, best first.";
  const score = SCORE_NAMES[scoreName] || scoreName || "the score";
  let text = "A rule matches when " + score + " is at least " + fmtScore(threshold);
  if (typeof slack === "number") text += " (similarity slack " + fmtScore(slack) + ")";
  return text + ".";
}

const GATE_SOURCES = {
  explanation: "Read from the matches' explanations: this server's answer has no gate object.",
  dropped: "Read from the dropped rules' details: this server's answer has no gate object.",
};

function renderGate(gate) {
  const box = $("match-gate");
  box.hidden = false;
  if (!gate) {
    $("match-gate-kind").textContent = "not reported";
    $("match-gate-description").textContent =
      "Nothing matched and no rule was left out by the threshold, so this answer does not show the gate " +
      "(with \u201clist the rules left out\u201d ticked, the rules the threshold stopped name it).";
    $("match-gate-terms").replaceChildren();
    $("match-gate-source").textContent = "";
    return;
  }
  $("match-gate-kind").textContent = gate.kind + (gate.score ? " \u00b7 " + gate.score : "");
  $("match-gate-description").textContent = gate.description || "";
  const terms = Object.entries(gate.terms || {});
  if (typeof gate.threshold === "number" && !terms.some(([name]) => name === "threshold")) {
    terms.unshift(["threshold", gate.threshold]);
  }
  fillPairs($("match-gate-terms"), terms);
  $("match-gate-source").textContent = GATE_SOURCES[gate.source] || "";
}

function gateScore(explanation, enforcement) {
  if (!explanation || typeof explanation.threshold !== "number") return "";
  const on = explanation.threshold_on;
  let value = on === "confidence" ? (enforcement || {}).confidence : explanation[on];
  let formula = "";
  if (on === "hybrid_or_similarity" && typeof explanation.hybrid === "number") {
    const slack = explanation.similarity_slack || 0;
    value = Math.max(explanation.hybrid, explanation.similarity - slack);
    formula = "max(" + fmtScore(explanation.hybrid) + ", " + fmtScore(explanation.similarity) + " \u2212 " + fmtScore(slack) + ") = ";
  }
  if (typeof value !== "number") return "";
  const name = on === "confidence" ? "confidence " : "";
  return "gate " + name + formula + fmtScore(value) + " \u2265 " + fmtScore(explanation.threshold);
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
    parts.push("priority " + fmtScore(explanation.priority_normalized) + ", scope " + fmtScore(explanation.scope_weight));
  }
  const gate = gateScore(explanation, match.enforcement);
  if (gate) parts.push(gate);
  return parts.join("; ");
}

function renderMatches(matches) {
  const tbody = $("match-results").querySelector("tbody");
  tbody.replaceChildren();
  $("match-results").hidden = matches.length === 0;
  $("match-none").hidden = matches.length > 0;
  for (const match of matches) {
    const row = document.createElement("tr");
    const rule = match.rule || {};
    cell(row, rule.id || match.rule_id, "code");
    cell(row, rule.action_text);
    cell(row, fmtScore(match.similarity_score), "num");
    cell(row, fmtScore(match.bm25_score), "num");
    cell(row, fmtScore(match.final_score), "num");
    const badge = enforcementBadge(match.enforcement);
    const governs = cell(row, "", "governs");
    if (badge) governs.appendChild(badge);
    if (match.enforcement && match.enforcement.enforced === false) row.classList.add("neighbour");
    cell(row, why(match), "why");
    tbody.appendChild(row);
  }
}

/** The rules left out, closest (highest similarity) first, in the collapsed "why not" list. */
function renderDropped(dropped, explained) {
  const box = $("match-dropped");
  box.open = false;
  box.hidden = !explained;
  const sorted = [...dropped].sort((a, b) => (b.similarity ?? -Infinity) - (a.similarity ?? -Infinity));
  $("match-dropped-count").textContent = String(sorted.length);
  const tbody = $("match-dropped-list").querySelector("tbody");
  tbody.replaceChildren();
  for (const item of sorted) {
    const row = document.createElement("tr");
    row.className = "reason-" + item.reason;
    cell(row, item.rule_id, "code");
    cell(row, item.reason);
    cell(row, fmtScore(item.similarity), "num");
    cell(row, item.final_score === null || item.final_score === undefined ? "\u2014" : fmtScore(item.final_score), "num");
    cell(row, item.detail);
    tbody.appendChild(row);
  }
}

export async function runMatch(onDone) {
  showResults("match");
  $("match-out").classList.add("busy");
  setStatus("match", "matching\u2026");
  const form = matchForm();
  try {
    const body = { message: form.message, explain: form.explain };
    const session = parseJson(form.session, "the session");
    if (session !== undefined) body.session = session;
    const data = await api("POST", "/v1/tenants/" + encodeURIComponent(form.tenant) + "/match", body);
    renderMatches(data.matches);
    renderGate(appliedGate(data));
    renderDropped(data.dropped || [], form.explain);
    const count = data.matches.length;
    setStatus("match", count + " rule" + (count === 1 ? "" : "s") + " matched (tenant " + data.tenant_id + ", rules version " + data.rules_version + ")");
    remember("match", shorten(form.message, 60), form, count + " matched");
  } catch (error) {
    for (const id of ["match-results", "match-none", "match-gate", "match-dropped"]) $(id).hidden = true;
    showError("match", error);
    remember("match", shorten(form.message, 60), form, error.status ? String(error.status) : "error");
  } finally {
    $("match-out").classList.remove("busy");
    if (onDone) onDone();
  }
}

export function setupMatch(onDone) {
  for (const button of document.querySelectorAll("#match-examples button")) {
    button.addEventListener("click", () => {
      $("match-message").value = button.textContent;
      runMatch(onDone);
    });
  }
  $("match-run").addEventListener("click", () => runMatch(onDone));
  $("match-message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) runMatch(onDone);
  });
}
