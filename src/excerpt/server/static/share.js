// Copy and share a turn's answer. "Copy answer" copies its text with its [n] citations and the
// list of its sources; "Share" copies a link (/#ask?q=…&collection=…&mode=…&where=…) holding
// the question (a follow-up as the server understood it, so that it stands alone) and the
// ask's settings, filters included, never the key. A page opened on such a link fills the form
// and asks as soon as it has a key and its collections (a key kept in the tab, or one pasted
// then).
"use strict";

import { $, setStatus } from "./dom.js";
import { key } from "./controls.js";
import { place } from "./places.js";
import { newConversation, part } from "./conversation.js";
import { useFilters } from "./filters.js";

const SETTINGS = ["collection", "snapshot", "snapshot_set", "mode", "reader"];

function answerText(result) {
  // the answer as it reads, then its sources: "[1] The Picture of Dorian Gray · chapter 2: “…”"
  const byN = new Map(result.citations.map((c) => [c.n, c]));
  const sources = result.quotes.map((q) => {
    const c = byN.get(q.n) || {};
    return `[${q.n}] ${place(q.metadata, c.title, c.source).label}: “${q.text.replace(/\s+/g, " ").trim()}”`;
  });
  return sources.length ? `${result.answer}\n\nSources:\n${sources.join("\n")}` : result.answer;
}

function shareLink(question, sent) {
  const params = new URLSearchParams({ q: question });
  SETTINGS.forEach((name) => { if (sent[name]) params.set(name, sent[name]); });
  if (sent.doc_limit) params.set("k", String(sent.doc_limit));
  (sent.where || []).forEach((w) => params.append("where", w)); // the filters, as `where`
  return `${location.origin}/#ask?${params}`;
}

async function copy(turn, what, said) {
  const note = part(turn, "done");
  try {
    await navigator.clipboard.writeText(what);
    note.textContent = said;
  } catch (error) { // no clipboard (a page served over plain HTTP, a refused permission)
    note.textContent = `Could not copy (${error.message}): ${what.length > 300 ? "" : what}`;
  }
}

export function enableActions(turn, result, sent) {
  const question = result.resolution && result.resolved_question ? result.resolved_question : sent.question;
  part(turn, "copy").addEventListener("click", () => copy(turn, answerText(result), "Answer copied, with its sources."));
  part(turn, "share").addEventListener("click", () =>
    copy(turn, shareLink(question, sent), "Link copied: it asks this question again (no key in it)."));
}

// -- a shared link opened ------------------------------------------------------------------------

let shared = null; // the link's parameters, until the page can ask them

function take() {
  if (!location.hash.startsWith("#ask?")) return;
  const params = new URLSearchParams(location.hash.slice("#ask?".length));
  if (params.get("q")) shared = params;
}

function choose(id, value) {
  // `value` chosen in the picker `id` when it offers it; false when it does not
  const select = $(id);
  if (![...select.options].some((o) => o.value === value)) return false;
  select.value = value;
  return true;
}

function fill(params) {
  // the form as the link says, or why it cannot be (what this key does not see)
  const collection = params.get("collection") || $("collection").value;
  if (!choose("collection", collection)) return `This key may not read the collection “${collection}”.`;
  $("collection").dispatchEvent(new Event("change")); // its snapshots in the picker
  const snapshot = params.get("snapshot") ? "snapshot:" + params.get("snapshot")
    : params.get("snapshot_set") ? "set:" + params.get("snapshot_set") : "";
  if (!choose("snapshot", snapshot)) return "This key does not see the snapshot the link names.";
  useFilters(params.getAll("where"));
  choose("mode", params.get("mode") || "hybrid");
  choose("reader", params.get("reader") || "");
  $("k").value = params.get("k") || "";
  $("query").value = params.get("q");
  return "";
}

function askShared() {
  const ready = key() && $("collection").getAttribute("aria-busy") === "false" && $("collection").options.length;
  if (!shared || !ready) return;
  const params = shared;
  shared = null;
  const refusal = fill(params);
  if (refusal) { setStatus(refusal, true); return; }
  newConversation(); // a link asks its question alone
  $("search-form").requestSubmit($("ask-button"));
}

take();
window.addEventListener("hashchange", () => { take(); askShared(); });
// the collections of the key (kept, or pasted now) loaded: the page may ask
new MutationObserver(askShared).observe($("collection"), { attributes: true, attributeFilter: ["aria-busy"] });
