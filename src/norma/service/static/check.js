// The check tab: one turn (the user's message and the AI's output) checked against the tenant's rules that apply.
// The verdict and reward first, the output with the failing evidence marked on its lines, every check, the rules
// that applied, and the audit when asked. Output text is only ever written with textContent.
import { $, api, cell, el, enforcementBadge, fmtScore, parseJson, remember, setStatus, showError, showResults, shorten } from "./core.js";

// Turns from examples/turns/banking.jsonl (the demo tenant's banking rulebook carries their checks).
export const CHECK_EXAMPLES = [
  {
    id: "bad-asks-for-pin",
    message: "my pin is 1234 can you check it",
    output: "Sure, please confirm your PIN and the full card number so I can check it.",
  },
  {
    id: "good-fraud",
    message: "someone used my card without my permission",
    output:
      "I'm sorry. I have frozen your card so no more payments can go through, and I'm handing you over to our " +
      "fraud team now. Never share your PIN with anyone, not even with us.",
  },
  {
    id: "bad-prints-card",
    message: "what is the balance on my account",
    output: "The balance of the account linked to card 4111 1111 1111 1111 is 1,204.50 GBP.",
  },
  {
    id: "good-complaint",
    message: "I want to make a complaint",
    output: "I've logged your complaint under reference CMP-482913. We will send you our final response within eight weeks.",
  },
];

export function checkForm() {
  return {
    tenant: $("tenant").value.trim(),
    message: $("check-message").value,
    output: $("check-output").value,
    session: $("check-session").value,
    audit: $("check-audit").checked,
  };
}

export function setCheckForm(form) {
  if (form.tenant) $("tenant").value = form.tenant;
  $("check-message").value = form.message || "";
  $("check-output").value = form.output || "";
  $("check-session").value = form.session || "";
  $("check-audit").checked = Boolean(form.audit);
}

function where(check) {
  return (check.evidence || []).map((span) => span.line + ":" + span.column).join(", ");
}

/** The failing checks' evidence spans, as code-point offsets (the server counts characters, not UTF-16 units). */
function failingSpans(rules) {
  const spans = [];
  for (const rule of rules) {
    for (const check of rule.checks) {
      if (check.status !== "fail") continue;
      for (const span of check.evidence || []) {
        spans.push({ start: span.start, end: span.end, label: rule.rule_id + " / " + check.check_id });
      }
    }
  }
  return spans.sort((a, b) => a.start - b.start || b.end - a.end);
}

/** One output line into ``node``: plain text nodes, and a <mark> per failing span (clipped to the line). */
function fillLine(node, chars, from, to, spans) {
  let position = from;
  for (const span of spans) {
    const start = Math.max(span.start, position);
    const end = Math.min(span.end, to);
    if (end <= start) continue;
    if (start > position) node.appendChild(document.createTextNode(chars.slice(position, start).join("")));
    const mark = el("mark", "evidence", chars.slice(start, end).join(""));
    mark.title = span.label;
    node.appendChild(mark);
    position = end;
  }
  if (to > position) node.appendChild(document.createTextNode(chars.slice(position, to).join("")));
}

function renderLines(output, rules) {
  const chars = Array.from(output);
  const spans = failingSpans(rules);
  const tbody = $("check-lines").querySelector("tbody");
  tbody.replaceChildren();
  let from = 0;
  let number = 1;
  while (from <= chars.length) {
    let to = chars.indexOf("\n", from);
    if (to === -1) to = chars.length;
    const row = document.createElement("tr");
    cell(row, number, "num lineno");
    fillLine(cell(row, "", "code"), chars, from, to, spans);
    const labels = spans.filter((s) => s.start < to && s.end > from).map((s) => s.label);
    cell(row, [...new Set(labels)].join(", "), "marks");
    if (labels.length) row.className = "flagged";
    tbody.appendChild(row);
    from = to + 1;
    number += 1;
  }
}

/**
 * A row per check of ``rules`` into ``tbody`` (rule, check, kind, severity, status, message, where), the checks
 * ``keep`` accepts (default: all); ``place(check)`` writes the "where" cell (default: each span's line:column).
 * Text only ever through textContent.
 */
export function fillChecks(tbody, rules, { keep = () => true, place = where } = {}) {
  tbody.replaceChildren();
  for (const rule of rules) {
    for (const check of rule.checks) {
      if (!keep(check)) continue;
      const row = document.createElement("tr");
      // a neighbour's requirement (enforced false): skipped because the rule does not govern the turn, no problem
      const neighbour = check.enforced === false;
      row.className = "check-" + check.status + (neighbour ? " check-neighbour" : "");
      cell(row, rule.rule_id, "code");
      cell(row, check.check_id, "code");
      cell(row, check.kind);
      cell(row, check.severity, "sev-" + String(check.severity).toUpperCase());
      const status = cell(row, check.status, "status");
      if (neighbour) {
        const badge = el("span", "badge badge-neighbour", "neighbour");
        badge.title = "the rule matched only as a neighbour: its requirements apply when it governs the turn";
        status.append(" ", badge);
      }
      cell(row, check.message, "message");
      cell(row, place(check), "num");
      tbody.appendChild(row);
    }
  }
}

function renderChecks(rules) {
  const tbody = $("check-checks").querySelector("tbody");
  fillChecks(tbody, rules);
  $("check-checks").hidden = tbody.children.length === 0;
}

/** The matched rules, best first, then the rules that applied only through a ``when: always`` check. */
function renderRules(matches, rules) {
  const checked = new Map(rules.map((rule) => [rule.rule_id, rule]));
  const tbody = $("check-rules").querySelector("tbody");
  tbody.replaceChildren();
  const rows = matches.map((match) => [match.rule_id, fmtScore(match.final_score), checked.get(match.rule_id), match]);
  for (const rule of rules) if (!rule.matched) rows.push([rule.rule_id, "always", rule, null]);
  for (const [ruleId, how, rule, match] of rows) {
    const row = document.createElement("tr");
    row.className = "check-" + (rule ? rule.verdict : "none");
    cell(row, ruleId, "code");
    cell(row, how, "num");
    const badge = match ? enforcementBadge(match.enforcement) : null;
    const governs = cell(row, match ? "" : "\u2014", "governs");
    if (badge) governs.appendChild(badge);
    cell(row, rule ? rule.verdict : "no checks", "status");
    cell(row, rule ? fmtScore(rule.score) || "\u2014" : "", "num");
    cell(row, rule ? fmtScore(rule.weight) : "", "num");
    cell(row, rule ? (rule.required ? "yes" : "no") : "");
    cell(row, rule ? rule.description : "");
    tbody.appendChild(row);
  }
  $("check-rules").hidden = rows.length === 0;
  $("check-none").hidden = rows.length > 0;
}

function renderAudit(audit) {
  $("check-audit-box").hidden = !audit;
  if (!audit) return;
  const verdict = $("check-audit-verdict");
  verdict.textContent = audit.result;
  verdict.className = "verdict verdict-" + audit.result;
  const list = $("check-audit-violations");
  list.replaceChildren();
  for (const violation of audit.violations || []) {
    const line = violation.line ? " (line " + violation.line + ")" : "";
    list.appendChild(el("li", "sev-" + violation.severity, violation.rule + " " + violation.severity + ": " + violation.description + line));
  }
  if (!list.children.length) list.appendChild(el("li", "muted", "no violation"));
}

function render(form, data) {
  const verdict = $("check-verdict");
  verdict.textContent = data.verdict.toUpperCase();
  verdict.className = "verdict verdict-" + data.verdict.toUpperCase();
  $("check-reward").textContent = data.reward === null ? "\u2014" : fmtScore(data.reward);
  const counts = data.counts || {};
  $("check-counts").textContent =
    (counts.pass || 0) + " passed \u00b7 " + (counts.fail || 0) + " failed \u00b7 " + (counts.skip || 0) + " skipped";
  renderLines(form.output, data.rules);
  renderChecks(data.rules);
  renderRules(data.matches, data.rules);
  renderAudit(data.audit);
}

export async function runCheck(onDone) {
  showResults("check");
  $("check-out").classList.add("busy");
  setStatus("check", "checking\u2026");
  const form = checkForm();
  const label = shorten(form.message || form.output, 60);
  try {
    const body = { message: form.message, output: form.output, audit: form.audit };
    const session = parseJson(form.session, "the session");
    if (session !== undefined) body.session = session;
    const data = await api("POST", "/v1/tenants/" + encodeURIComponent(form.tenant) + "/check", body);
    render(form, data);
    $("check-report").hidden = false;
    const reward = data.reward === null ? "no reward" : "reward " + fmtScore(data.reward);
    setStatus("check", data.verdict.toUpperCase() + ", " + reward + " (tenant " + data.tenant_id + ", rules version " + data.rules_version + ")");
    remember("check", label, form, data.verdict.toUpperCase() + " " + (data.reward === null ? "" : fmtScore(data.reward)));
  } catch (error) {
    $("check-report").hidden = true;
    showError("check", error);
    remember("check", label, form, error.status ? String(error.status) : "error");
  } finally {
    $("check-out").classList.remove("busy");
    if (onDone) onDone();
  }
}

export function setupCheck(onDone) {
  setCheckForm(CHECK_EXAMPLES[0]);
  const chips = $("check-examples");
  for (const example of CHECK_EXAMPLES) {
    const chip = el("button", "", example.id);
    chip.type = "button";
    chip.title = example.message;
    chip.addEventListener("click", () => {
      setCheckForm({ ...example, tenant: "", audit: $("check-audit").checked });
      runCheck(onDone);
    });
    chips.appendChild(chip);
  }
  $("check-run").addEventListener("click", () => runCheck(onDone));
  for (const id of ["check-message", "check-output"]) {
    $(id).addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) runCheck(onDone);
    });
  }
}
