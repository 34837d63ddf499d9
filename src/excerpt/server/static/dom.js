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
// The request parameter (the service's error `param`) each field of the form sends.
const FIELD_OF = { q: "query", question: "query", k: "k", doc_limit: "k", where: "filter-value" };

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
  // A refusal where it belongs: the key's (401, 403) next to the key, one about a field the
  // page sends (the service's `param`) next to that field, any other under the question. The
  // status line ("Searching…") goes either way.
  setStatus("");
  if (error.status === 401 || error.status === 403) fieldError("key", error.message);
  else if (FIELD_OF[error.param]) fieldError(FIELD_OF[error.param], error.message);
  else setStatus(error.message, true);
}
