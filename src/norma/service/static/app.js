// norma playground: plain JavaScript modules, no build step, nothing loaded from another host. The API key stays
// in this browser tab (sessionStorage); a key passed as #key=... is moved there and removed from the address bar.
import { $, buildHistoryCards, clearHistory, renderHistory } from "./core.js";
import { AUDIT_EXAMPLE, auditForm, runAudit, setAuditForm, setupAudit } from "./audit.js";
import { checkForm, runCheck, setCheckForm, setupCheck } from "./check.js";
import { diffForm, runDiff, setDiffForm, setupDiff } from "./diff.js";
import { guardForm, probeModels, runGuard, setGuardForm, setupGuard } from "./guard.js";
import { matchForm, runMatch, setMatchForm, setupMatch } from "./match.js";
import { namesForm, runNames, setNamesForm, setupNames } from "./names.js";

const TABS = {
  match: { form: matchForm, restore: setMatchForm, run: runMatch },
  check: { form: checkForm, restore: setCheckForm, run: runCheck },
  diff: { form: diffForm, restore: setDiffForm, run: runDiff },
  guard: { form: guardForm, restore: setGuardForm, run: runGuard },
  audit: { form: auditForm, restore: setAuditForm, run: runAudit },
  names: { form: namesForm, restore: setNamesForm, run: runNames },
};

function takeKeyFromHash() {
  const found = /(?:^#|&)key=([^&]+)/.exec(window.location.hash);
  if (found) {
    sessionStorage.setItem("norma-key", decodeURIComponent(found[1]));
    history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  $("api-key").value = sessionStorage.getItem("norma-key") || "";
  updateKeyBanner();
}

function updateKeyBanner() {
  $("key-banner").hidden = $("api-key").value.trim() !== "";
}

function showTab(name) {
  for (const tab of document.querySelectorAll(".tab")) {
    const active = tab.dataset.tab === name;
    tab.classList.toggle("active", active);
    tab.setAttribute("aria-selected", String(active));
  }
  for (const panel of document.querySelectorAll(".panel")) panel.hidden = panel.id !== "tab-" + name;
  if (name === "guard") probeModels();
}

function refreshHistory(tab) {
  renderHistory(tab, (form) => {
    TABS[tab].restore(form);
    TABS[tab].run(() => refreshHistory(tab));
  });
}

// The colour theme: "auto" follows the system (prefers-color-scheme); "light" / "dark" are kept in localStorage.
function currentTheme() {
  const stored = localStorage.getItem("norma-theme");
  return stored === "light" || stored === "dark" ? stored : "auto";
}

function setTheme(theme) {
  if (theme === "auto") localStorage.removeItem("norma-theme");
  else localStorage.setItem("norma-theme", theme);
  window.normaApplyTheme(); // theme.js: the choice, else the system's theme
  for (const button of document.querySelectorAll("#theme button")) {
    button.setAttribute("aria-pressed", String(button.dataset.theme === theme));
  }
}

document.addEventListener("DOMContentLoaded", () => {
  buildHistoryCards();
  takeKeyFromHash();
  window.addEventListener("hashchange", takeKeyFromHash);
  $("api-key").addEventListener("input", updateKeyBanner);
  setTheme(currentTheme());
  for (const button of document.querySelectorAll("#theme button")) {
    button.addEventListener("click", () => setTheme(button.dataset.theme));
  }
  for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => showTab(tab.dataset.tab));
  setAuditForm(AUDIT_EXAMPLE);
  setupMatch(() => refreshHistory("match"));
  setupCheck(() => refreshHistory("check"));
  setupDiff(() => refreshHistory("diff"));
  setupGuard(() => refreshHistory("guard"));
  setupAudit(() => refreshHistory("audit"));
  setupNames(() => refreshHistory("names"));
  for (const tab of Object.keys(TABS)) {
    $(tab + "-history-clear").addEventListener("click", () => {
      clearHistory(tab);
      refreshHistory(tab);
    });
    refreshHistory(tab);
  }
  showTab("match");
  document.body.dataset.ready = "true";
});
