// The collection's overview (GET /v1/collections/{c}/overview: only what the key may see; a
// collection it sees nothing of is "not found" and shows nothing): its counts and last import
// in one line, example questions made from its own headings (each asked through the form, as
// the Ask button asks), its sources with their snapshots (retired ones marked), and its
// metadata keys offered as filters (filters.js). Open on the start page, closed once a request
// goes out so the answer is not pushed down; its summary line opens it again.
"use strict";

import { $, text } from "./dom.js";
import { api } from "./api.js";
import { key, refused } from "./controls.js";
import { offerFilters } from "./filters.js";

let loads = 0; // overviews asked for; only the last one is shown
let rendered = ""; // the collection shown last: another one opens the overview again
let sent = 0; // questions and searches sent: an overview that comes after one comes closed
const base = (path) => (path || "").split(/[\\/]/).pop() || path;
const number = (n) => n.toLocaleString("en-US");
const plural = (n, word) => `${number(n)} ${word}${n === 1 ? "" : "s"}`;
const when = (iso) => (iso ? iso.slice(0, 16).replace("T", " ") + " UTC" : "");

export async function showOverview(collection) {
  // `collection`'s overview for the key in the field; none ("") hides it
  const load = ++loads;
  const sentBefore = sent;
  offerFilters(collection, []); // the last collection's filters go at once, not on arrival
  $("overview-error").hidden = true;
  if (!collection || !key()) { $("overview").hidden = true; return; }
  let result;
  try {
    result = await api(key(), `/v1/collections/${encodeURIComponent(collection)}/overview`);
  } catch (error) {
    if (load !== loads) return;
    $("overview").hidden = true;
    // not found: nothing of it is said; a key refused is said next to the key (excerpt.js)
    if (![401, 403, 404].includes(error.status)) showFailure(error.message);
    return;
  }
  if (load !== loads) return;
  render(result, sent !== sentBefore);
  offerFilters(collection, result.metadata.keys, result.metadata.nodes_read);
}

function showFailure(message) {
  $("overview-error").textContent = "The collection's overview: " + message;
  $("overview-error").hidden = false;
  $("overview").hidden = false;
  $("overview-box").hidden = true;
}

function render(result, late) {
  // late: a request went out while it loaded; it comes closed (one line), not over the result
  const c = result.counts;
  $("overview-name").textContent = result.collection;
  $("overview-counts").replaceChildren(...facts([plural(c.documents, "document"),
    plural(c.nodes, "passage"), plural(c.sources, "source"), plural(c.snapshots, "snapshot"),
    result.last_import ? "last import " + when(result.last_import) : ""]));
  $("example-list").replaceChildren(...result.examples.map(exampleButton));
  $("overview-examples").hidden = result.examples.length === 0;
  $("overview-sources").replaceChildren(...result.sources.map((s) => sourceItem(s, result.snapshots)));
  $("overview-note").textContent = note(result);
  $("overview-note").hidden = !$("overview-note").textContent;
  $("overview-box").hidden = false;
  if (result.collection !== rendered) $("overview-box").open = !late;
  rendered = result.collection;
  $("overview").hidden = false;
}

function facts(parts) {
  // "a · b · c", each part kept whole on its line (a date is not cut at its hyphens)
  const out = [];
  parts.filter(Boolean).forEach((part, i) => {
    if (i) out.push(" · ");
    out.push(text("span", part, "fact"));
  });
  return out;
}

function exampleButton(example) {
  // asks through the form, so the ordinary ask runs (its checks, its stream, its clears)
  const li = document.createElement("li");
  const button = text("button", example.question, "example");
  button.type = "button";
  button.lang = example.language || "";
  button.addEventListener("click", () => {
    $("query").value = example.question;
    $("search-form").requestSubmit($("ask-button"));
  });
  li.append(button);
  return li;
}

const SHOWN_SNAPSHOTS = 3; // a source's newest snapshots named; the older ones counted

function sourceItem(source, snapshots) {
  const li = text("li", "", "source");
  li.dataset.source = source.source;
  const name = text("strong", base(source.source));
  name.title = source.source;
  li.append(name);
  if (source.retired) li.append(text("span", "retired", "label retired"));
  const mine = snapshots.filter((s) => s.source === source.source)
    .sort((a, b) => b.created_at.localeCompare(a.created_at));
  const named = mine.slice(0, SHOWN_SNAPSHOTS).map((s) => (s.name || s.snapshot_id) + (s.retired ? " (retired)" : ""));
  if (mine.length > SHOWN_SNAPSHOTS) named.push(`${mine.length - SHOWN_SNAPSHOTS} older`);
  const said = [plural(source.documents, "document"), plural(source.nodes, "passage"),
    "imported " + when(source.created_at)];
  if (source.retired) said.push("not searched: a sync found its files deleted");
  else if (!source.live) said.push("not searched: a newer copy is read instead");
  const meta = text("div", "", "meta");
  meta.append(...facts(said));
  li.append(meta,
    text("div", `${plural(source.snapshots, "snapshot")}: ${named.join(", ")}`, "meta"));
  return li;
}

function note(result) {
  const parts = [];
  if (result.sets.length) parts.push(`Sets: ${result.sets.map((s) => s.name).join(", ")}.`);
  if (result.metadata.sampled) {
    parts.push(`The filters offer the values of ${number(result.metadata.nodes_read)} passages read as a sample.`);
  }
  return parts.join(" ");
}

// Closed once a question or a search is sent (not when the page refuses it): the result,
// not the overview, is what the reader looks at then.
$("search-form").addEventListener("submit", () => {
  if (refused().length) return;
  sent++;
  $("overview-box").open = false;
});
