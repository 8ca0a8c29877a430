// Applied before the page paints (a plain, blocking script: the Content-Security-Policy allows no inline code):
// the colour theme chosen in the playground ("light" or "dark"; nothing stored: follow the system's).
"use strict";
(function applyStoredTheme() {
  let theme = null;
  try {
    theme = localStorage.getItem("norma-theme");
  } catch (error) {
    theme = null; // storage disabled: follow the system's theme
  }
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
})();
