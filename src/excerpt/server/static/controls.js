// The request's settings as the form holds them: the key, the collection and snapshot (or
// set) every request reads, the metadata filters a search and an ask take, k, and what the
// page refuses before sending anything.
"use strict";

import { $ } from "./dom.js";
import { where } from "./filters.js";

export const key = () => $("key").value.trim();

export function view() {
  // the collection and snapshot (or set) read: what a passage in context and a graph take
  const out = { collection: $("collection").value };
  const [kind, ...rest] = $("snapshot").value.split(":");
  if (kind === "snapshot") out.snapshot = rest.join(":");
  if (kind === "set") out.snapshot_set = rest.join(":");
  return out;
}

// the metadata filters chosen (filters.js), as the API's `where`: ["chapter=7", …]
export const filters = where;

export function scope() {
  // what a search and an ask read: the view, narrowed by the filters (POST bodies take
  // `where` as a list; a GET repeats it: results.js)
  const out = view();
  if (filters().length) out.where = filters();
  return out;
}

export function k() {
  const value = $("k").value.trim();
  return value ? Number(value) : null; // none: the server's settings decide
}

function kRefusal() {
  // k outside the server's bounds (the field's min and max: excerpt.limits' k and doc_limit),
  // in the sentence every interface refuses it with
  const input = $("k");
  const [low, high] = [Number(input.min), Number(input.max)];
  const raw = input.value.trim();
  if (input.validity.badInput) return `k must be a whole number between ${low} and ${high}`;
  const n = Number(raw);
  return !raw || (Number.isInteger(n) && n >= low && n <= high) ? ""
    : `k must be between ${low} and ${high} (got ${raw})`;
}

export function refused() {
  // What the page refuses before sending anything: [field, why] for each field at fault.
  const out = [];
  if (!key()) out.push(["key", "Paste an API key first."]);
  if (!$("query").value.trim()) out.push(["query", "Type a question, or words to search for."]);
  if (kRefusal()) out.push(["k", kRefusal()]);
  return out;
}
