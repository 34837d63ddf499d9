// The passage in context (GET /v1/passage: the node and its neighbours in its document, only
// those the key may see), opened from an "in context" link (#passage?collection=…&id=…): the
// quote marked in it, or the search's words, its neighbours a scroll away.
"use strict";

import { $, append, setStatus, text } from "./dom.js";
import { api } from "./api.js";
import { key } from "./controls.js";
import { shown } from "./cards.js";
import { place } from "./places.js";
import { marked } from "./snippets.js";
import { onClear } from "./requests.js";

let opened = 0; // passages asked for; only the last one is shown

function passageParams() {
  if (!location.hash.startsWith("#passage?")) return null;
  const params = new URLSearchParams(location.hash.slice("#passage?".length));
  return params.get("id") && params.get("collection") ? params : null;
}

function closePassageLink() {
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
}

export async function openPassage() {
  const params = passageParams();
  if (!params) return;
  const ask = ++opened;
  const id = params.get("id");
  const query = new URLSearchParams({ id, collection: params.get("collection"), around: AROUND });
  ["snapshot", "snapshot_set"].forEach((name) => { if (params.get(name)) query.set(name, params.get(name)); });
  let result;
  try {
    result = await api(key(), "/v1/passage?" + query);
  } catch (error) {
    if (ask === opened) setStatus(error.message, true);
    return;
  }
  if (ask !== opened) return;
  showPassage(result.passage, shown.get(id), result.before, result.after);
}

const AROUND = 2; // nodes shown before and after a passage, in its document

function overlap(node) {
  // characters at the start of a node that repeat the end of the node before it
  const n = node && node.metadata ? node.metadata.overlap : 0;
  return Number.isInteger(n) && n > 0 ? n : 0;
}

function aroundBlock(node, from, to) {
  const el = text("div", node.text.slice(from, node.text.length - to), "around");
  el.dataset.id = node.id;
  return el;
}

function showPassage(node, known, before = [], after = []) {
  const where = known ? place(known.metadata, known.title, known.source) : { kind: "document", label: "" };
  $("passage-place").textContent = [where.label, node.id].filter(Boolean).join(" · ");
  $("passage-place").dataset.kind = where.kind;
  const box = $("passage-text");
  box.dataset.id = node.id;
  box.dataset.kind = where.kind;
  box.replaceChildren();
  // the neighbours whole but for the text the next one repeats (shown once, in the next)
  const order = [...before, node, ...after];
  before.forEach((n, i) => box.append(aroundBlock(n, 0, overlap(order[i + 1]))));
  const here = document.createElement("div");
  here.className = "here";
  const at = known && known.quote ? node.text.indexOf(known.quote) : -1;
  if (at >= 0) {
    here.append(node.text.slice(0, at), text("mark", known.quote, "quoted"), node.text.slice(at + known.quote.length));
  } else {
    append(here, known && known.query ? marked(node.text, known.query) : [{ text: node.text, mark: false }]);
  }
  box.append(here);
  after.forEach((n) => box.append(aroundBlock(n, overlap(n), 0)));
  $("passage").hidden = false;
  $("passage").scrollIntoView({ block: "start" });
  box.scrollTop = here.offsetTop; // the passage first, its neighbours a scroll away
}

onClear(() => {
  opened++; // a passage still being fetched is not shown over the new request's results
  $("passage").hidden = true;
  ["passage-text", "passage-place"].forEach((id) => $(id).replaceChildren());
  closePassageLink();
});
$("passage-close").addEventListener("click", () => { $("passage").hidden = true; closePassageLink(); });
window.addEventListener("hashchange", openPassage);
