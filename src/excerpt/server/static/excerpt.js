// excerpt's web UI: plain JavaScript over the HTTP API, no build step, no external assets.
"use strict";
const $ = (id) => document.getElementById(id);
$("key").value = localStorage.getItem("excerpt-key") || "";
$("key").addEventListener("change", () => localStorage.setItem("excerpt-key", $("key").value));

async function api(path, body) {
  const init = { headers: { Authorization: "Bearer " + $("key").value } };
  if (body) { init.method = "POST"; init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function text(tag, content, className) {
  const el = document.createElement(tag);
  el.textContent = content;
  if (className) el.className = className;
  return el;
}

function highlight(el, content, terms) {
  // Marks the query's words in a snippet, built from text nodes only (no HTML parsing).
  const words = terms.filter((t) => t.length > 2).map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (!words.length) { el.append(content); return; }
  const parts = content.split(new RegExp("(" + words.join("|") + ")", "gi"));
  parts.forEach((part, i) => el.append(i % 2 ? text("mark", part) : part));
}

function labels(hit) {
  const span = document.createElement("span");
  [...hit.acl_tags.map((t) => "acl:" + t), ...hit.classification_labels.map((l) => "label:" + l)]
    .forEach((l) => span.append(text("span", l, "label")));
  return span;
}

function showHits(result, query) {
  const list = $("hit-list");
  list.replaceChildren();
  result.hits.forEach((hit) => {
    const li = document.createElement("li");
    li.append(text("strong", hit.title || hit.id), labels(hit), text("div", hit.id + " · " + hit.score.toFixed(3), "meta"));
    const snippet = document.createElement("div");
    highlight(snippet, hit.text.slice(0, 300), query.split(/\s+/));
    li.append(snippet);
    if (hit.metadata && hit.metadata.code_language) {
      const more = text("button", "dependencies", "deps");
      more.addEventListener("click", () => showGraph(hit.id));
      li.append(more);
    }
    list.append(li);
  });
  $("hits").hidden = false;
}

function showAnswer(result) {
  const answer = $("answer-text");
  answer.replaceChildren();
  result.answer.split(/(\[\d+\])/).forEach((part) => {
    const m = part.match(/^\[(\d+)\]$/);
    if (!m) { answer.append(part); return; }
    const cite = text("span", part, "cite");
    cite.dataset.n = m[1];
    cite.addEventListener("click", () => focusQuote(m[1]));
    answer.append(cite);
  });
  const quotes = $("quotes");
  quotes.replaceChildren();
  result.quotes.forEach((q) => {
    const li = text("li", q.text, "quote");
    li.id = "quote-" + q.n;
    const c = result.citations.find((x) => x.n === q.n);
    li.append(text("div", q.id + (c && c.title ? " · " + c.title : ""), "meta"));
    quotes.append(li);
  });
  $("answer").hidden = false;
  showProvenance(result);
}

function focusQuote(n) {
  document.querySelectorAll(".quote.active").forEach((el) => el.classList.remove("active"));
  const el = $("quote-" + n);
  if (el) { el.classList.add("active"); el.scrollIntoView({ block: "nearest" }); }
}

function showProvenance(result) {
  $("stages").replaceChildren(...(result.provenance || []).map((e) => text("li", e.stage)));
  const body = $("passages").tBodies[0];
  body.replaceChildren(...result.documents.map((d) => {
    const tr = document.createElement("tr");
    tr.append(text("td", d.id), text("td", d.score.toFixed(3)));
    return tr;
  }));
  $("provenance").hidden = false;
}

async function showGraph(id) {
  const result = await api("/v1/graph", { seeds: [id], collection: $("collection").value });
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

$("search-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const action = event.submitter ? event.submitter.value : "ask";
  const query = $("query").value;
  $("status").textContent = action === "ask" ? "Asking…" : "Searching…";
  try {
    if (action === "ask") {
      showAnswer(await api("/v1/ask", { question: query, collection: $("collection").value, mode: $("mode").value, explain: true }));
    } else {
      const params = new URLSearchParams({ q: query, collection: $("collection").value, mode: $("mode").value });
      showHits(await api("/v1/search?" + params), query);
    }
    $("status").textContent = "";
  } catch (error) {
    $("status").textContent = error.message;
  }
});
