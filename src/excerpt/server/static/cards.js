// The pieces every passage shown on the page carries: its place, its labels and a link to it
// in context; `shown` remembers what the page showed of each node (for the context view).
"use strict";

import { text } from "./dom.js";
import { view } from "./controls.js";
import { place } from "./places.js";

export const shown = new Map(); // node id -> {metadata, title, source, quote, query} on the page

export function passageLink(id) {
  const params = new URLSearchParams({ ...view(), id }); // the passage route takes no filter
  const link = text("a", "in context", "in-context");
  link.href = "#passage?" + params;
  return link;
}

export function placeOf(metadata, title, source) {
  const where = place(metadata, title, source);
  const el = text("div", where.label, "place");
  el.dataset.kind = where.kind;
  return el;
}

export function labels(hit) {
  const span = document.createElement("span");
  [...hit.acl_tags.map((t) => "acl:" + t), ...hit.classification_labels.map((l) => "label:" + l)]
    .forEach((l) => span.append(text("span", l, "label")));
  return span;
}
