// The theme: the system's (light or dark, as it prefers) unless the reader picks one; the
// choice is kept in localStorage and set on <html data-theme> (excerpt.css reads it).
"use strict";

const KEY = "excerpt-theme";
const THEMES = ["system", "light", "dark"];

function apply(theme) {
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

export function initTheme(select) {
  const saved = localStorage.getItem(KEY);
  select.value = THEMES.includes(saved) ? saved : "system";
  apply(select.value);
  select.addEventListener("change", () => {
    if (select.value === "system") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, select.value);
    apply(select.value);
  });
}
