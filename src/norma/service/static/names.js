// The names tab: draw a validator's labels, generate variations aimed at them, score variations.
import { $, api, fillPairs, fmtScore, parseJson, remember, setStatus, showError, showResults } from "./core.js";

export const NAMES_LABELS = {
  variation_count: 5,
  phonetic_similarity: { Medium: 1.0 },
  orthographic_similarity: { Medium: 1.0 },
  rule_based: { selected_rules: ["swap_random_letter"], rule_percentage: 20 },
};

export function namesForm() {
  return { name: $("names-name").value, labels: $("names-labels").value, variations: $("names-variations").value };
}

export function setNamesForm(form) {
  $("names-name").value = form.name || "";
  $("names-labels").value = form.labels || "";
  $("names-variations").value = form.variations || "";
}

function variationsOf(form) {
  return form.variations.split("\n").map((v) => v.trim()).filter(Boolean);
}

function labelsOf(form) {
  const labels = parseJson(form.labels, "the labels");
  if (labels === undefined) throw new Error("draw or write the labels first (JSON: variation_count, phonetic_similarity, ...)");
  if (typeof labels !== "object" || labels === null || Array.isArray(labels)) throw new Error("the labels must be a JSON object");
  return labels;
}

/** Every scalar of the score answer, nested objects flattened to ``outer.inner``. */
function flatten(data, prefix) {
  const rows = [];
  for (const [key, value] of Object.entries(data)) {
    const name = prefix ? prefix + "." + key : key;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) rows.push(...flatten(value, name));
    else if (key !== "name") rows.push([name, value]);
  }
  return rows;
}

async function score(form) {
  const variations = variationsOf(form);
  const labels = labelsOf(form);
  const data = await api("POST", "/v1/names/score", { name: form.name, variations, labels });
  $("names-final").textContent = fmtScore(data.final);
  fillPairs($("names-details").querySelector("tbody"), flatten(data, ""));
  $("names-report").hidden = false;
  return { data, variations };
}

export async function runNames(onDone) {
  showResults("names");
  setStatus("names", "scoring\u2026");
  const form = namesForm();
  try {
    const { data, variations } = await score(form);
    setStatus("names", "scored " + variations.length + " variation" + (variations.length === 1 ? "" : "s"));
    remember("names", form.name + " \u00d7 " + variations.length, form, "final " + fmtScore(data.final));
  } catch (error) {
    showError("names", error);
  } finally {
    if (onDone) onDone();
  }
}

export async function generateNames(onDone) {
  showResults("names");
  setStatus("names", "generating\u2026");
  try {
    const labels = labelsOf(namesForm());
    const rules = labels.rule_based || {};
    const body = {
      name: $("names-name").value,
      count: Math.min(100, Math.max(1, Number(labels.variation_count) || 5)),
      phonetic_similarity: labels.phonetic_similarity || null,
      orthographic_similarity: labels.orthographic_similarity || null,
      rules: rules.selected_rules || [],
    };
    const percentage = rules.rule_percentage ?? rules.percentage;
    if (typeof percentage === "number") body.rule_percentage = percentage;
    const data = await api("POST", "/v1/names/generate", body);
    $("names-variations").value = data.variations.join("\n");
    const form = namesForm();
    const { data: scored } = await score(form);
    setStatus("names", "generated and scored " + data.variations.length + " variation" + (data.variations.length === 1 ? "" : "s"));
    remember("names", form.name + " \u00d7 " + data.variations.length + " (generated)", form, "final " + fmtScore(scored.final));
  } catch (error) {
    showError("names", error);
  } finally {
    if (onDone) onDone();
  }
}

async function drawLabels() {
  try {
    const data = await api("POST", "/v1/names/query", { name: $("names-name").value });
    $("names-labels").value = JSON.stringify(data.labels, null, 2);
    setStatus("names", "labels drawn: " + data.labels.variation_count + " variations asked");
  } catch (error) {
    showError("names", error);
  }
}

export function setupNames(onDone) {
  $("names-labels").value = JSON.stringify(NAMES_LABELS, null, 2);
  $("names-query").addEventListener("click", drawLabels);
  $("names-generate").addEventListener("click", () => generateNames(onDone));
  $("names-run").addEventListener("click", () => runNames(onDone));
}
