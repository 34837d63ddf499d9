// Filters from the collection's metadata: the overview's keys (GET
// /v1/collections/{c}/overview, of what the key may see only) with their most common values
// are offered in a "filter by" picker; the chosen filters go with every search and ask as the
// API's `where` (KEY=VALUE, repeated: the value read as JSON when it is JSON, as the CLI's
// --where reads it) and show as chips, each removable. Adding or removing one runs the search
// on show again; a value the server refuses is said next to the filters, in its words.
"use strict";

import { $, fieldError, text } from "./dom.js";
import { onClear } from "./requests.js";

let offered = []; // [{key, values: [{value, nodes}]}]: the keys a filter may name here
let active = []; // [{key, typed, raw}]: raw is what follows "KEY=" in a `where`
let collection = null; // whose keys are offered; the filters go when it changes
let lastAction = ""; // the form's last action ("ask" or "search")

export function where() {
  // the active filters as the API takes them: ["chapter=7", "author=Oscar Wilde"]
  return active.map((f) => `${f.key}=${f.raw}`);
}

const isJson = (s) => { try { JSON.parse(s); return true; } catch { return false; } };

function rawValue(key, typed) {
  // Sent as typed (7 is a number, Homer a text), unless it is one of the key's text values
  // that would read as JSON (a section named "2024"): then quoted, so it stays a text.
  const entry = offered.find((k) => k.key === key);
  const values = entry ? entry.values.map((v) => v.value) : [];
  const asText = values.some((v) => typeof v === "string" && v === typed);
  const asOther = values.some((v) => typeof v !== "string" && String(v) === typed);
  return asText && !asOther && isJson(typed) ? JSON.stringify(typed) : typed;
}

export function offerFilters(name, keys = [], read = 0) {
  // The keys of `name`'s overview ([] while it loads: the last ones stay while the same
  // collection's overview is read again). A key every node read holds with one value would
  // narrow nothing, and is not offered.
  if (name === collection && !keys.length) return;
  if (name !== collection) active = [];
  collection = name;
  offered = keys.filter((k) => !(k.distinct === 1 && k.nodes === read));
  const choose = new Option("choose…", "");
  $("filter-key").replaceChildren(choose, ...offered.map((k) => new Option(k.key, k.key)));
  fillValues();
  showChips();
}

export function useFilters(wheres) {
  // the filters a shared link names ("KEY=VALUE", as `where` takes them), in place of any
  // chosen here: the link's ask is read as it was asked
  active = wheres.map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)])
    .filter(([key]) => key).map(([key, raw]) => ({ key, typed: raw, raw }));
  showChips();
}

function fillValues() {
  const entry = offered.find((k) => k.key === $("filter-key").value);
  const values = entry ? entry.values : [];
  $("filter-values").replaceChildren(...values.map((v) => {
    const option = new Option(String(v.value), String(v.value));
    option.label = `${v.nodes} passage${v.nodes === 1 ? "" : "s"}`;
    return option;
  }));
  $("filter-value").placeholder = values.length ? "e.g. " + String(values[0].value) : "";
}

function showChips() {
  $("filter-chips").replaceChildren(...active.map((f) => {
    const li = text("li", "", "chip");
    li.dataset.where = `${f.key}=${f.raw}`;
    const remove = text("button", "×", "chip-remove");
    remove.type = "button";
    remove.setAttribute("aria-label", `Remove the filter ${f.key}: ${f.typed}`);
    remove.addEventListener("click", () => removeFilter(f.key));
    li.append(text("span", `${f.key}: ${f.typed}`), remove);
    return li;
  }));
  $("filter-chips").hidden = active.length === 0;
  $("filters").hidden = offered.length === 0 && active.length === 0;
}

function addFilter() {
  // a filter on a key already filtered replaces it (a `where` holds one value per key)
  const key = $("filter-key").value;
  const typed = $("filter-value").value.trim();
  fieldError("filter-value", "");
  $("filter-key").removeAttribute("aria-invalid");
  if (!key) { refuse("filter-key", "Choose what to filter by first."); return; }
  if (!typed) { refuse("filter-value", `Type or pick a value of ${key}.`); return; }
  active = [...active.filter((f) => f.key !== key), { key, typed, raw: rawValue(key, typed) }];
  $("filter-value").value = "";
  showChips();
  rerun();
}

function refuse(field, why) {
  // said under the filters (#filter-value-error), the field at fault marked and focused
  fieldError("filter-value", why);
  if (field === "filter-key") {
    $("filter-value").removeAttribute("aria-invalid");
    $("filter-key").setAttribute("aria-invalid", "true");
  }
  $(field).focus();
}

function removeFilter(key) {
  active = active.filter((f) => f.key !== key);
  fieldError("filter-value", "");
  showChips();
  // the focus stays in the filters (the button it was on is gone)
  const left = $("filter-chips").querySelector("button");
  (left || $("filter-key")).focus();
  rerun();
}

function rerun() {
  // The search on show is run again with the filters as they are now. An answer is not asked
  // again: the next question takes them.
  if (lastAction === "search" && $("query").value.trim()) {
    $("search-form").requestSubmit($("search-button"));
  }
}

$("search-form").addEventListener("submit", (event) => {
  lastAction = event.submitter ? event.submitter.value : "ask";
});
$("filter-key").addEventListener("change", () => {
  $("filter-key").removeAttribute("aria-invalid");
  fillValues();
});
onClear(() => $("filter-key").removeAttribute("aria-invalid"));
$("filter-add").addEventListener("click", addFilter);
$("filter-value").addEventListener("keydown", (event) => {
  // Enter adds the filter (it would otherwise submit the form: an ask)
  if (event.key !== "Enter" || event.isComposing || event.keyCode === 229) return;
  event.preventDefault();
  addFilter();
});
