// Search results (GET /v1/search): each hit with its place, labels, a snippet around the
// query's words and a link to it in context; a code hit's dependencies as a tree (POST
// /v1/graph).
"use strict";

import { $, append, setStatus, text } from "./dom.js";
import { api } from "./api.js";
import { k, key, scope } from "./controls.js";
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
  const n = result.hits.length;
  setStatus(n ? `${n} result${n === 1 ? "" : "s"}` : "Nothing found that this key may see.");
}

async function showGraph(id) {
  let result;
  try {
    result = await api(key(), "/v1/graph", { seeds: [id], ...scope() });
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
  const params = new URLSearchParams({ q: query, mode: $("mode").value, ...scope() });
  if (k()) params.set("k", String(k()));
  const result = await api(key(), "/v1/search?" + params, null, req.controller.signal);
  if (isCurrent(req)) showHits(result, query);
}

onClear(() => {
  ["hits", "graph"].forEach((id) => { $(id).hidden = true; });
  ["hit-list", "tree"].forEach((id) => $(id).replaceChildren());
});
