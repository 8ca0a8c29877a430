// The audit tab: input, output and documents as separate fields; the verdict, the output with numbered lines and
// each violation on its line, the metrics, notes, INFO findings, the rules not evaluated and any other field of
// the report (shown as it comes, so fields a newer server adds are never hidden).
import { $, api, cell, el, fillPairs, fmtValue, parseJson, remember, setStatus, showError, showResults, shorten } from "./core.js";

export const AUDIT_EXAMPLE = {
  input: "Implementa la clase FlowShaper de NetShaper",
  output:
    "Creo la clase `FlowShaper` que aplica una política a cada flujo.\n\n```csharp\npublic sealed class FlowShaper\n{\n" +
    "    private readonly IShapingPolicy _policy;\n}\n```",
  documents: "",
  context: "",
  extra: "",
};

const KNOWN_FIELDS = new Set([
  "result",
  "context_type_detected",
  "context_type_applied",
  "violations",
  "metrics",
  "notes",
  "info",
  "rules",
  "analyzer_version",
  "lang",
]);
const KNOWN_VIOLATION_FIELDS = new Set(["rule", "severity", "description", "location", "line", "evidence"]);
const EVALUATED = new Set(["passed", "failed"]);

export function auditForm() {
  return {
    input: $("audit-input").value,
    output: $("audit-output").value,
    documents: $("audit-documents").value,
    context: $("audit-context").value,
    extra: $("audit-extra").value,
  };
}

export function setAuditForm(form) {
  $("audit-input").value = form.input || "";
  $("audit-output").value = form.output || "";
  $("audit-documents").value = form.documents || "";
  $("audit-context").value = form.context || "";
  $("audit-extra").value = form.extra || "";
}

/** The request the form stands for: the extra JSON object's fields (reruns, document_versions...) merged in. */
export function auditRequest(form) {
  const request = {
    input: form.input,
    output: form.output,
    active_documents: form.documents.split("\n").map((line) => line.trim()).filter(Boolean),
  };
  if (form.context) request.context_type = form.context;
  const extra = parseJson(form.extra, "the other fields");
  if (extra !== undefined) {
    if (typeof extra !== "object" || extra === null || Array.isArray(extra)) {
      throw new Error("the other fields must be a JSON object, e.g. {\"reruns\": [\"...\", \"...\"]}");
    }
    Object.assign(request, extra);
  }
  return request;
}

function violationText(violation) {
  let text = violation.rule + " " + violation.severity + ": " + violation.description;
  if (violation.evidence) text += " \u2014 \u201c" + shorten(violation.evidence, 80) + "\u201d";
  const extra = Object.entries(violation).filter(([key]) => !KNOWN_VIOLATION_FIELDS.has(key));
  for (const [key, value] of extra) text += "; " + key + ": " + fmtValue(key, value);
  return text;
}

function isOutputLine(violation, lineCount) {
  const where = String(violation.location || "");
  return Number.isInteger(violation.line) && violation.line >= 1 && violation.line <= lineCount && !/^input/.test(where);
}

function renderLines(output, violations) {
  const lines = String(output).split("\n");
  const byLine = new Map();
  const other = $("audit-other");
  other.replaceChildren();
  for (const violation of violations) {
    if (isOutputLine(violation, lines.length)) {
      if (!byLine.has(violation.line)) byLine.set(violation.line, []);
      byLine.get(violation.line).push(violation);
    } else {
      const item = el("li", "sev-" + violation.severity, violationText(violation) + " (" + violation.location + ")");
      other.appendChild(item);
    }
  }
  $("audit-other-box").hidden = other.children.length === 0;
  const tbody = $("audit-lines").querySelector("tbody");
  tbody.replaceChildren();
  lines.forEach((text, index) => {
    const number = index + 1;
    const row = document.createElement("tr");
    cell(row, number, "num lineno");
    cell(row, text, "code");
    const list = cell(row, "", "marks");
    for (const violation of byLine.get(number) || []) {
      list.appendChild(el("span", "violation sev-" + violation.severity, violationText(violation)));
    }
    if (byLine.has(number)) row.className = "flagged";
    tbody.appendChild(row);
  });
}

function renderFindings(listId, boxId, findings) {
  const list = $(listId);
  list.replaceChildren();
  for (const finding of findings || []) {
    const where = finding.location ? " (" + finding.location + ")" : "";
    list.appendChild(el("li", "", finding.rule + ": " + finding.description + where));
  }
  $(boxId).hidden = list.children.length === 0;
}

function renderRules(rules) {
  const skipped = $("audit-skipped");
  skipped.replaceChildren();
  const tbody = $("audit-rules").querySelector("tbody");
  tbody.replaceChildren();
  for (const rule of rules || []) {
    const row = document.createElement("tr");
    row.className = "status-" + rule.status;
    cell(row, rule.rule, "code");
    cell(row, rule.title);
    cell(row, rule.severity);
    cell(row, String(rule.status).replace(/_/g, " "));
    cell(row, rule.reason);
    tbody.appendChild(row);
    if (!EVALUATED.has(rule.status)) {
      const item = el("li");
      item.appendChild(el("strong", "code", rule.rule));
      item.appendChild(document.createTextNode(" " + (rule.title || "") + " \u2014 " + String(rule.status).replace(/_/g, " ")));
      if (rule.reason) item.appendChild(document.createTextNode(": " + rule.reason));
      skipped.appendChild(item);
    }
  }
  $("audit-skipped-box").hidden = skipped.children.length === 0;
  $("audit-rules-count").textContent = String((rules || []).length);
  $("audit-rules-box").hidden = !(rules || []).length;
}

function renderExtra(report) {
  const list = $("audit-extra-fields");
  list.replaceChildren();
  for (const [key, value] of Object.entries(report)) {
    if (KNOWN_FIELDS.has(key)) continue;
    list.appendChild(el("dt", "code", key));
    const simple = value === null || typeof value !== "object";
    list.appendChild(el("dd", simple ? "" : "json", simple ? fmtValue(key, value) : JSON.stringify(value, null, 2)));
  }
  $("audit-extra-box").hidden = list.children.length === 0;
}

function renderReport(request, report) {
  const verdict = $("audit-verdict");
  verdict.textContent = report.result;
  verdict.className = "verdict verdict-" + report.result;
  const detected = report.context_type_detected;
  const applied = report.context_type_applied;
  $("audit-context-used").textContent =
    "context " + (applied || detected || "?") + (detected && applied && detected !== applied ? " (detected " + detected + ")" : "") +
    (report.analyzer_version ? " \u00b7 analyzer " + report.analyzer_version : "") +
    (report.lang ? " \u00b7 language " + report.lang : "");
  renderLines(request.output, report.violations || []);
  fillPairs($("audit-metrics").querySelector("tbody"), Object.entries(report.metrics || {}));
  const notes = Array.isArray(report.notes) ? report.notes.join("\n") : report.notes || "";
  $("audit-notes").textContent = notes;
  $("audit-notes-box").hidden = !notes;
  renderFindings("audit-info", "audit-info-box", report.info);
  renderRules(report.rules);
  renderExtra(report);
}

export async function runAudit(onDone) {
  showResults("audit");
  setStatus("audit", "auditing\u2026");
  const form = auditForm();
  $("audit-report").hidden = true;
  try {
    const request = auditRequest(form);
    if (!request.output.trim()) throw new Error("write the AI output to audit first (and the user's input it answers)");
    const report = await api("POST", "/v1/audit", request);
    renderReport(request, report);
    $("audit-report").hidden = false;
    const count = (report.violations || []).length;
    setStatus("audit", report.result + ": " + count + " violation" + (count === 1 ? "" : "s"));
    remember("audit", shorten(form.input || form.output, 60), form, report.result);
  } catch (error) {
    showError("audit", error);
    if (error.status) remember("audit", shorten(form.input || form.output, 60), form, String(error.status));
  } finally {
    if (onDone) onDone();
  }
}

export function setupAudit(onDone) {
  $("audit-example").addEventListener("click", () => setAuditForm(AUDIT_EXAMPLE));
  $("audit-run").addEventListener("click", () => runAudit(onDone));
}
