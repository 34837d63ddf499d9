// Search results (GET /v1/search, narrowed by the chosen filters): how many, where and how
// found, said plainly from the response ("9 results in books · bm25 · chapter = 7"); each hit
// with its place, labels, a snippet around the query's words and a link to it in context; a
// code hit's dependencies as a tree (POST /v1/graph).
"use strict";

import { $, append, setStatus, text } from "./dom.js";
import { api } from "./api.js";
import { filters, k, key, view } from "./controls.js";
import { labels, passageLink, placeOf, shown } from "./cards.js";
import { snippet } from "./snippets.js";
import { isCurrent, onClear } from "./requests.js";

function showHits(result, query) {
  $("hit-list").replaceChildren(...result.hits.map((hit) => {
    shown.set(hit.id, { metadata: hit.metadata, title: hit.title, source: hit.source, query });
    const li = document.createElement("li");
    li.dataset.id = hit.id;
    const where = placeOf(hit.metadata, hit.title, hit.source);
    // the title as a heading unless the place already begins with it (a book's chapter)
    if (!hit.title || !where.textContent.startsWith(hit.title)) li.append(text("strong", hit.title || hit.id));
    li.append(labels(hit), where);
    li.append(append(text("div", "", "snippet"), snippet(hit.text, query)));
    const meta = text("div", hit.id + " · " + hit.score.toFixed(3) + " · ", "meta");
    meta.append(passageLink(hit.id));
    li.append(meta);
    if (hit.metadata && hit.metadata.code_language) {
      const more = text("button", "dependencies", "deps");
      more.type = "button";
      more.addEventListener("click", () => showGraph(hit.id));
      li.append(more);
    }
    return li;
  }));
  $("hits").hidden = false;
  const notes = (result.analysis && result.analysis.notes) || [];
  $("hit-notes").textContent = notes.join("; ");
  $("hit-notes").hidden = !notes.length;
  setStatus(counted(result));
}

function counted(result) {
  // "9 results in books · bm25 · chapter = 7": the collection, the mode and the filters as
  // the server read them (a number stays a number: chapter = 7, not "7")
  const n = result.hits.length;
  const f = result.filters || {};
  const where = Object.entries(f.metadata || {}).map(([name, value]) =>
    `${name} = ${typeof value === "string" ? value : JSON.stringify(value)}`);
  const said = [f.collection, result.mode, ...where].filter(Boolean).join(" · ");
  return n ? `${n} result${n === 1 ? "" : "s"} in ${said}`
    : `No results in ${said}: nothing this key may see matches.`;
}

async function showGraph(id) {
  let result;
  try {
    result = await api(key(), "/v1/graph", { seeds: [id], ...view() }); // a graph takes no filter
  } catch (error) {
    setStatus(error.message, true);
    return;
  }
  const depth = Object.fromEntries(result.nodes.map((n) => [n.id, n.depth]));
  // Each node hangs under one neighbour a step nearer the seed, labelled with the edge.
  const children = {};
  const placed = new Set([id]);
  result.edges.forEach((e) => {
    const [parent, child] = depth[e.from_id] < depth[e.to_id] ? [e.from_id, e.to_id] : [e.to_id, e.from_id];
    if (depth[child] !== depth[parent] + 1 || placed.has(child)) return;
    placed.add(child);
    (children[parent] = children[parent] || []).push({ id: child, relation: e.relation });
  });
  const branch = (nodeId, relation) => {
    const li = text("li", (relation ? relation + " → " : "") + nodeId, "node");
    li.dataset.id = nodeId;
    if (children[nodeId]) {
      const ul = document.createElement("ul");
      children[nodeId].forEach((c) => ul.append(branch(c.id, c.relation)));
      li.append(ul);
    }
    return li;
  };
  $("tree").replaceChildren(branch(id, ""));
  $("graph").hidden = false;
}

export async function search(req, query) {
  const params = new URLSearchParams({ q: query, mode: $("mode").value, ...view() });
  filters().forEach((pair) => params.append("where", pair)); // repeated, as the CLI's --where
  if (k()) params.set("k", String(k()));
  const result = await api(key(), "/v1/search?" + params, null, req.controller.signal);
  if (isCurrent(req)) showHits(result, query);
}

onClear(() => {
  ["hits", "graph"].forEach((id) => { $(id).hidden = true; });
  ["hit-list", "tree", "hit-notes"].forEach((id) => $(id).replaceChildren());
});
