// The request's settings as the form holds them: the key, the collection and snapshot (or
// set) every request reads, k, and what the page refuses before sending anything.
"use strict";

import { $ } from "./dom.js";

export const key = () => $("key").value.trim();

export function scope() {
  const out = { collection: $("collection").value };
  const [kind, ...rest] = $("snapshot").value.split(":");
  if (kind === "snapshot") out.snapshot = rest.join(":");
  if (kind === "set") out.snapshot_set = rest.join(":");
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
