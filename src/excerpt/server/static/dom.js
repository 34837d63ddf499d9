// What every view of the page shares: elements by id, text nodes (never HTML from data), the
// status line, and an error said next to the field that caused it.
"use strict";

export const $ = (id) => document.getElementById(id);

export function text(tag, content, className) {
  const el = document.createElement(tag);
  el.textContent = content;
  if (className) el.className = className;
  return el;
}

export function append(el, parts) {
  // parts: [{text, mark}] from snippets.js, marked ones as <mark>
  parts.forEach((p) => el.append(p.mark ? text("mark", p.text) : p.text));
  return el;
}

export function setStatus(message, error = false) {
  $("status").textContent = message;
  $("status").classList.toggle("error", error);
}

const FIELDS = ["key", "query", "k", "filter-value"]; // each has its error next to it: #key-error...

export function fieldError(field, message) {
  $(field + "-error").textContent = message;
  $(field + "-error").hidden = !message;
  if (message) $(field).setAttribute("aria-invalid", "true");
  else $(field).removeAttribute("aria-invalid");
}

export function clearErrors() {
  FIELDS.forEach((field) => fieldError(field, ""));
  setStatus("");
}

export function showError(error) {
  // A refusal where it belongs: the key's (401, 403) next to the key, k's next to k, a
  // filter's (`where …`) under the filters, any other under the question. The status line
  // ("Searching…") goes either way.
  setStatus("");
  if (error.status === 401 || error.status === 403) fieldError("key", error.message);
  else if (/^(k|doc_limit) must\b/.test(error.message)) fieldError("k", error.message);
  else if (/^where\b/.test(error.message)) fieldError("filter-value", error.message);
  else setStatus(error.message, true);
}
