// The diff tab: recorded turns (JSON Lines) checked against two versions of the tenant's rules
// (POST /v1/tenants/{tenant}/diff). The summary first, the rule edits, then the turns that changed, worst first, with
// what changed in each. Text from the server and the turns is only ever written with textContent.
import { $, api, cell, el, fmtScore, remember, setStatus, showError, showResults } from "./core.js";
import { CHECK_EXAMPLES } from "./check.js";

/** The example turns: those of the check tab (examples/turns/banking.jsonl), one JSON object a line. */
export const DIFF_EXAMPLE_TURNS = CHECK_EXAMPLES.map((turn) => JSON.stringify(turn)).join("\n");

export function diffForm() {
  return {
    tenant: $("tenant").value.trim(),
    old: $("diff-old").value.trim(),
    new: $("diff-new").value.trim(),
    turns: $("diff-turns").value,
  };
}

export function setDiffForm(form) {
  if (form.tenant) $("tenant").value = form.tenant;
  $("diff-old").value = form.old || "";
  $("diff-new").value = form.new || "";
  $("diff-turns").value = form.turns || "";
}

/** The turns of the textarea: one JSON object a line, blank lines skipped; an error names the line. */
export function parseTurns(text) {
  const turns = [];
  text.split("\n").forEach((line, index) => {
    if (!line.trim()) return;
    let turn;
    try {
      turn = JSON.parse(line);
    } catch (error) {
      throw new Error("turn on line " + (index + 1) + " is not valid JSON: " + error.message);
    }
    if (typeof turn !== "object" || turn === null || Array.isArray(turn)) {
      throw new Error('turn on line ' + (index + 1) + ' is not a JSON object: write {"message": "...", "output": "..."}');
    }
    turns.push(turn);
  });
  if (!turns.length) throw new Error('give the turns: one {"message": "...", "output": "..."} a line');
  return turns;
}

function version(text, what, required) {
  if (!text) {
    if (required) throw new Error("give the " + what + " version (GET /v1/tenants/{tenant} shows the current one)");
    return null;
  }
  const number = Number(text);
  if (!Number.isInteger(number) || number < 1) throw new Error("the " + what + " version is a whole number from 1, not " + text);
  return number;
}

function reward(value) {
  return value === null ? "\u2014" : fmtScore(value);
}

/** What changed in a turn, one line each: checks newly failing (with their message), no longer failing, rule moves. */
function evidence(change) {
  const lines = [];
  for (const check of change.failures.added) lines.push("fails " + check.rule_id + "/" + check.check_id + ": " + check.message);
  for (const check of change.failures.removed) lines.push("no longer fails " + check.rule_id + "/" + check.check_id);
  for (const move of change.moves) lines.push(move.rule_id + ": " + move.old.replace("_", " ") + " \u2192 " + move.new.replace("_", " "));
  return lines;
}

function renderEdits(edits) {
  const tbody = $("diff-edits").querySelector("tbody");
  tbody.replaceChildren();
  for (const edit of edits) {
    const row = document.createElement("tr");
    cell(row, edit.rule_id, "code");
    cell(row, edit.edit);
    cell(row, edit.fields.join(", "));
    cell(row, edit.turns, "num");
    tbody.appendChild(row);
  }
  $("diff-edits").hidden = edits.length === 0;
}

function renderChanges(changes, turns) {
  const tbody = $("diff-changes").querySelector("tbody");
  tbody.replaceChildren();
  for (const change of changes) {
    const row = document.createElement("tr");
    row.className = "change-" + change.change;
    const name = change.id === null || change.id === undefined ? "" : " (" + change.id + ")";
    cell(row, String(change.index + 1) + name, "code");
    cell(row, turns[change.index] ? turns[change.index].message : change.message);
    cell(row, change.verdict.old + " \u2192 " + change.verdict.new, "status");
    cell(row, reward(change.reward.old) + " \u2192 " + reward(change.reward.new), "num");
    const what = cell(row, "", "message");
    for (const line of evidence(change)) what.appendChild(el("div", "", line));
    tbody.appendChild(row);
  }
  $("diff-changes").hidden = changes.length === 0;
  $("diff-none").hidden = changes.length > 0;
}

function render(data, turns) {
  $("diff-summary").textContent = data.summary;
  const counts = data.counts;
  $("diff-counts").textContent =
    counts.changed + " changed \u00b7 " + counts.newly_failing + " newly failing \u00b7 " + counts.newly_passing +
    " newly passing \u00b7 " + counts.unchanged + " unchanged";
  renderEdits(data.edits);
  renderChanges(data.changes, turns);
}

export async function runDiff(onDone) {
  showResults("diff");
  $("diff-out").classList.add("busy");
  setStatus("diff", "comparing\u2026");
  const form = diffForm();
  const label = "version " + (form.old || "?") + " \u2192 " + (form.new || "current");
  try {
    const turns = parseTurns(form.turns);
    const body = { old_version: version(form.old, "old", true), new_version: version(form.new, "new", false), turns };
    const data = await api("POST", "/v1/tenants/" + encodeURIComponent(form.tenant) + "/diff", body);
    render(data, turns);
    $("diff-report").hidden = false;
    setStatus("diff", "tenant " + data.new.tenant + ", rules version " + data.old.version + " \u2192 " + data.new.version + ": " + data.counts.changed + " of " + data.counts.turns + " turns changed");
    remember("diff", label, form, data.counts.newly_failing + " newly failing");
  } catch (error) {
    $("diff-report").hidden = true;
    showError("diff", error);
    remember("diff", label, form, error.status ? String(error.status) : "error");
  } finally {
    $("diff-out").classList.remove("busy");
    if (onDone) onDone();
  }
}

export function setupDiff(onDone) {
  setDiffForm({ old: "1", new: "", turns: DIFF_EXAMPLE_TURNS });
  $("diff-run").addEventListener("click", () => runDiff(onDone));
  $("diff-turns").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) runDiff(onDone);
  });
}
