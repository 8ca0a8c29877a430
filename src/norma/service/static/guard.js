// The guard tab: one guarded turn through POST /v1/tenants/{tenant}/chat/completions (norma serve --upstream URL):
// the tenant's rules that govern the message go into the system message, the model answers, the turn check reviews
// the answer and the policy repairs, blocks or flags it. Shows the answer, the action and the verdict, the rules
// injected, each model call and the failing checks with their evidence. Text is only ever written with textContent.
import { $, api, el, fmtScore, remember, setStatus, showError, showResults, shorten } from "./core.js";
import { fillChecks } from "./check.js";

// Messages of the demo tenant's banking rulebook (examples/rulebooks/banking-support.yaml) whose rules carry checks.
export const GUARD_EXAMPLES = ["someone used my card without my permission", "I want to make a complaint"];

export const NO_MODEL_HINT = "No model is configured: start norma serve with --upstream URL (norma docs guard)";

export function guardForm() {
  return {
    tenant: $("tenant").value.trim(),
    message: $("guard-message").value,
    system: $("guard-system").value,
    model: $("guard-model").value.trim(),
    policy: $("guard-policy").value,
  };
}

export function setGuardForm(form) {
  if (form.tenant) $("tenant").value = form.tenant;
  $("guard-message").value = form.message || "";
  $("guard-system").value = form.system || "";
  if (form.model) $("guard-model").value = form.model;
  if (form.policy) $("guard-policy").value = form.policy;
}

function ms(value) {
  return typeof value === "number" ? value.toFixed(1) + " ms" : "\u2014";
}

/** Each evidence span as ``line:column "text"`` (the text as the server cut and masked it). */
function evidence(check) {
  return (check.evidence || []).map((span) => span.line + ":" + span.column + " \u201c" + span.text + "\u201d").join(", ");
}

/** Whether the answer is the 503 of a server started without --upstream. */
function noUpstream(error) {
  return error.status === 503 && /--upstream/.test(error.message + " " + (error.hint || ""));
}

function showNoModel() {
  setStatus("guard", "No model is configured", true);
  const hint = $("guard-hint");
  const line = el("p");
  line.append("No model is configured: start ", el("code", "", "norma serve"), " with ", el("code", "", "--upstream URL"));
  line.append(" (", el("code", "", "norma docs guard"), ")");
  hint.replaceChildren(line);
  hint.hidden = false;
}

function renderRules(rules) {
  const list = $("guard-rules");
  list.replaceChildren();
  for (const rule of rules) {
    const item = el("li");
    item.append(el("code", "", rule.rule_id), " ", el("span", "rule-text", rule.text), " ");
    const badge = el("span", "badge " + (rule.why === "matched" ? "badge-enforced" : "badge-neighbour"), rule.why);
    badge.title = rule.why === "matched" ? "the message matched the rule and it governs the turn" : "a rule with a when: always check";
    item.appendChild(badge);
    list.appendChild(item);
  }
  $("guard-rules-none").hidden = rules.length > 0;
}

function renderAttempts(attempts) {
  const tbody = $("guard-attempts").querySelector("tbody");
  tbody.replaceChildren();
  attempts.forEach((attempt, index) => {
    const row = document.createElement("tr");
    row.className = "check-" + attempt.verdict;
    row.appendChild(el("td", "num", index + 1));
    row.appendChild(el("td", "status", attempt.verdict));
    row.appendChild(el("td", "num", ms(attempt.model_ms)));
    row.appendChild(el("td", "num", ms(attempt.check_ms)));
    tbody.appendChild(row);
  });
}

function render(data) {
  const norma = data.norma;
  const report = norma.report;
  const action = $("guard-action");
  action.textContent = norma.action;
  action.className = "verdict action-" + norma.action;
  const verdict = $("guard-verdict");
  verdict.textContent = report.verdict.toUpperCase();
  verdict.className = "verdict verdict-" + report.verdict.toUpperCase();
  $("guard-policy-used").textContent =
    "policy " + norma.policy + " \u00b7 reward " + (report.reward === null ? "\u2014" : fmtScore(report.reward));
  const choice = (data.choices || [])[0] || {};
  $("guard-answer").textContent = (choice.message && choice.message.content) || "";
  $("guard-answer-note").hidden = norma.action !== "blocked";
  renderRules(norma.rules || []);
  renderAttempts(norma.attempts || []);
  $("guard-timings").textContent =
    "prepare " + ms(norma.prepare_ms) + " \u00b7 guard " + ms(norma.guard_ms) + " \u00b7 total " + ms(norma.total_ms);
  const tbody = $("guard-checks").querySelector("tbody");
  fillChecks(tbody, report.rules || [], { keep: (check) => check.status === "fail", place: evidence });
  $("guard-checks").hidden = tbody.children.length === 0;
  $("guard-checks-none").hidden = tbody.children.length > 0;
}

export async function runGuard(onDone) {
  showResults("guard");
  $("guard-out").classList.add("busy");
  setStatus("guard", "asking the model\u2026");
  const form = guardForm();
  const label = shorten(form.message, 60);
  try {
    const messages = [];
    if (form.system.trim()) messages.push({ role: "system", content: form.system });
    messages.push({ role: "user", content: form.message });
    const body = { model: form.model, messages, norma: { policy: form.policy } };
    const data = await api("POST", "/v1/tenants/" + encodeURIComponent(form.tenant) + "/chat/completions", body);
    render(data);
    $("guard-report").hidden = false;
    const norma = data.norma;
    const calls = norma.attempts.length === 1 ? "1 model call" : norma.attempts.length + " model calls";
    setStatus("guard", norma.action + ", " + norma.report.verdict.toUpperCase() + " (" + calls + ", tenant " + form.tenant + ")");
    remember("guard", label, form, norma.action);
  } catch (error) {
    $("guard-report").hidden = true;
    if (noUpstream(error)) showNoModel();
    else showError("guard", error);
    remember("guard", label, form, error.status ? String(error.status) : "error");
  } finally {
    $("guard-out").classList.remove("busy");
    if (onDone) onDone();
  }
}

/** Ask the server for the upstream's models (GET /v1/tenants/{tenant}/models) when the tab opens: a server without
 * --upstream is said at once, not after a Send; the model names fill the model field's suggestions, and a model
 * field still at its default takes the first of them. Any other failure (no key yet, a tenant typo) says nothing
 * here: sending a turn shows it. */
export async function probeModels() {
  const tenant = $("tenant").value.trim();
  if (!tenant || !$("api-key").value.trim()) return;
  let data;
  try {
    data = await api("GET", "/v1/tenants/" + encodeURIComponent(tenant) + "/models");
  } catch (error) {
    if (noUpstream(error)) showNoModel();
    return;
  }
  const ids = (data.data || []).map((model) => model && model.id).filter((id) => typeof id === "string" && id);
  $("guard-models").replaceChildren(...ids.map((id) => {
    const option = document.createElement("option");
    option.value = id;
    return option;
  }));
  const field = $("guard-model");
  if (ids.length > 0 && field.value === field.defaultValue && !ids.includes(field.value)) field.value = ids[0];
  $("guard-hint").hidden = true;
  $("guard-hint").replaceChildren();
}

export function setupGuard(onDone) {
  setGuardForm({ message: GUARD_EXAMPLES[0] });
  const chips = $("guard-examples");
  for (const message of GUARD_EXAMPLES) {
    const chip = el("button", "", message);
    chip.type = "button";
    chip.addEventListener("click", () => {
      $("guard-message").value = message;
      runGuard(onDone);
    });
    chips.appendChild(chip);
  }
  $("guard-run").addEventListener("click", () => runGuard(onDone));
  for (const id of ["guard-message", "guard-system"]) {
    $(id).addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) runGuard(onDone);
    });
  }
}
