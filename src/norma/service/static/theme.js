// Applied before the page paints (a plain, blocking script: the Content-Security-Policy allows no inline code):
// the colour theme chosen in the playground ("light" or "dark", kept in localStorage), else the system's
// (prefers-color-scheme, followed as it changes). The page's CSS only reads <html data-theme="light|dark">.
"use strict";
(function theme() {
  const system = window.matchMedia("(prefers-color-scheme: dark)");
  function chosen() {
    try {
      return localStorage.getItem("norma-theme");
    } catch (error) {
      return null; // storage disabled: follow the system's theme
    }
  }
  function apply() {
    const choice = chosen();
    const dark = choice === "dark" || (choice !== "light" && system.matches);
    document.documentElement.dataset.theme = dark ? "dark" : "light";
  }
  apply();
  system.addEventListener("change", apply);
  window.normaApplyTheme = apply;
})();
