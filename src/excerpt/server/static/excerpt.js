// excerpt's web UI: plain JavaScript modules over the HTTP API, no build step, no external
// assets. The key's collections fill the picker (GET /v1/snapshots: only what the key may
// see); every request clears what the last one showed; an ask streams its stages
// (POST /v1/ask/stream) before its answer; quotes and hits name their place and link to the
// passage in context (GET /v1/passage: the node and its neighbours in its document).
// The key is kept for this tab only (sessionStorage; Sign out forgets it) and takes effect as
// it is pasted; an error is said next to what caused it (the key, the question, k) or under
// the question, and the next request clears it; Enter asks, Ctrl+Enter searches, `/` comes
// back to the question box.
import { api, askStream } from "./api.js";
import { place } from "./places.js";
import { marked, snippet } from "./snippets.js";
import { initTheme } from "./theme.js";

const $ = (id) => document.getElementById(id);
const RESULTS = ["answer", "hits", "passage", "provenance", "graph"];
let listing = { snapshots: [], sets: [] };
let current = null; // the request whose results the page shows: {controller}
let loads = 0; // collection listings asked for; only the last one fills the picker
let opened = 0; // passages asked for; only the last one is shown
const shown = new Map(); // node id -> {metadata, title, source, quote, query} on the page

function text(tag, content, className) {
  const el = document.createElement(tag);
  el.textContent = content;
  if (className) el.className = className;
  return el;
}

function append(el, parts) {
  parts.forEach((p) => el.append(p.mark ? text("mark", p.text) : p.text));
  return el;
}

function setStatus(message, error = false) {
  $("status").textContent = message;
  $("status").classList.toggle("error", error);
}

const FIELDS = ["key", "query", "k"]; // each has its error next to it: #key-error...

function fieldError(field, message) {
  $(field + "-error").textContent = message;
  $(field + "-error").hidden = !message;
  if (message) $(field).setAttribute("aria-invalid", "true");
  else $(field).removeAttribute("aria-invalid");
}

function clearErrors() {
  FIELDS.forEach((field) => fieldError(field, ""));
  setStatus("");
}

function showError(error) {
  // A refusal where it belongs: the key's (401, 403) next to the key, k's next to k, any
  // other under the question.
  if (error.status === 401 || error.status === 403) fieldError("key", error.message);
  else if (/^(k|doc_limit) must\b/.test(error.message)) fieldError("k", error.message);
  else setStatus(error.message, true);
}

const key = () => $("key").value.trim();
const base = (path) => (path || "").split(/[\\/]/).pop();

// -- collections and snapshots --------------------------------------------------------------

async function loadCollections() {
  // aria-busy: the picker is being filled for the key typed last (tests wait on it too)
  const load = ++loads;
  listing = { snapshots: [], sets: [] };
  $("collection").replaceChildren();
  $("collection").setAttribute("aria-busy", "true");
  requested = key();
  fieldError("key", "");
  fillSnapshots();
  try {
    await fillCollections(load);
  } finally {
    if (load === loads) $("collection").setAttribute("aria-busy", "false");
  }
}

async function fillCollections(load) {
  if (!key()) { setStatus("Paste an API key to start."); return; }
  let result;
  try {
    result = await api(key(), "/v1/snapshots");
  } catch (error) {
    if (load === loads) showError(error);
    return;
  }
  if (load !== loads) return;
  listing = result;
  const names = [...new Set(listing.snapshots.map((s) => s.collection))].sort();
  if (!names.length) { fieldError("key", "This key may read no collection yet."); return; }
  $("collection").replaceChildren(...names.map((n) => new Option(n, n)));
  const saved = localStorage.getItem("excerpt-collection");
  $("collection").value = names.includes(saved) ? saved : names[0];
  fillSnapshots();
  setStatus("");
}

function fillSnapshots() {
  const collection = $("collection").value;
  const snaps = listing.snapshots.filter((s) => s.collection === collection);
  const ids = new Set(snaps.map((s) => s.snapshot_id));
  const options = [new Option("latest of each source", "")];
  snaps.forEach((s) => {
    const label = [s.name || s.snapshot_id.slice(0, 12), base(s.source), s.created_at.slice(0, 16).replace("T", " "),
      s.nodes + (s.nodes === 1 ? " passage" : " passages")].join(" · ");
    const option = new Option(label, "snapshot:" + s.snapshot_id);
    option.title = s.snapshot_id;
    options.push(option);
  });
  listing.sets.filter((set) => set.snapshot_ids.some((i) => ids.has(i))).forEach((set) => {
    options.push(new Option(`set ${set.name} (${set.snapshot_ids.length} snapshots)`, "set:" + set.name));
  });
  $("snapshot").replaceChildren(...options);
}

function scope() {
  // The collection and snapshot (or set) every request reads.
  const out = { collection: $("collection").value };
  const [kind, ...rest] = $("snapshot").value.split(":");
  if (kind === "snapshot") out.snapshot = rest.join(":");
  if (kind === "set") out.snapshot_set = rest.join(":");
  return out;
}

function k() {
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

function refused() {
  // What the page refuses before sending anything: [field, why] for each field at fault.
  const out = [];
  if (!key()) out.push(["key", "Paste an API key first."]);
  if (!$("query").value.trim()) out.push(["query", "Type a question, or words to search for."]);
  if (kRefusal()) out.push(["k", kRefusal()]);
  return out;
}

// -- results --------------------------------------------------------------------------------

function clearResults() {
  RESULTS.forEach((id) => { $(id).hidden = true; });
  ["answer-text", "reader-note", "quotes", "hit-list", "stages", "passages", "tree", "passage-text",
    "passage-place"].forEach((id) => $(id).replaceChildren());
  $("considered").hidden = true;
  $("cautious").hidden = true;
  $("answer").classList.remove("cautious");
  shown.clear();
  closePassageLink();
}

function begin() {
  // A new request: the one before is abandoned and everything it showed is cleared, its
  // status and errors too.
  if (current) current.controller.abort();
  current = { controller: new AbortController() };
  opened++;
  clearResults();
  clearErrors();
  return current;
}

function passageLink(id) {
  const params = new URLSearchParams({ ...scope(), id });
  const link = text("a", "in context", "in-context");
  link.href = "#passage?" + params;
  return link;
}

function placeOf(metadata, title, source) {
  const where = place(metadata, title, source);
  const el = text("div", where.label, "place");
  el.dataset.kind = where.kind;
  return el;
}

function labels(hit) {
  const span = document.createElement("span");
  [...hit.acl_tags.map((t) => "acl:" + t), ...hit.classification_labels.map((l) => "label:" + l)]
    .forEach((l) => span.append(text("span", l, "label")));
  return span;
}

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

function addStage(name, ms) {
  const li = text("li", name);
  li.dataset.ms = String(Math.round(ms));
  li.title = `${Math.round(ms)} ms after the question was sent`;
  $("stages").append(li);
}

function readerNote(reader) {
  if (!reader || reader.name === "extractive") return "";
  const read = `Read by ${reader.name} ${reader.model} (${reader.tokens_in} tokens in, ${reader.tokens_out} out, ${Math.round(reader.ms)} ms).`;
  return reader.fell_back ? `${read} The extractive answer stands: ${reader.reason}.` : read;
}

function showAnswer(result) {
  const answer = $("answer-text");
  answer.replaceChildren(); // the streamed sentences, now with their citations linked
  const note = readerNote(result.reader);
  $("reader-note").textContent = note;
  $("reader-note").hidden = !note;
  result.answer.split(/(\[\d+\])/).forEach((part) => {
    const m = part.match(/^\[(\d+)\]$/);
    if (!m) { answer.append(part); return; }
    const cite = text("button", part, "cite"); // a button: reached and pressed by keyboard too
    cite.type = "button";
    cite.dataset.n = m[1];
    cite.addEventListener("click", () => focusQuote(m[1]));
    answer.append(cite);
  });
  $("quotes").replaceChildren(...result.quotes.map((q) => {
    const c = result.citations.find((x) => x.n === q.n) || {};
    shown.set(q.id, { metadata: q.metadata, title: c.title, source: c.source, quote: q.text });
    const li = text("li", "", "quote");
    li.id = "quote-" + q.n;
    li.dataset.id = q.id;
    li.append(text("blockquote", q.text), placeOf(q.metadata, c.title, c.source));
    const meta = text("div", q.id + " · ", "meta");
    meta.append(passageLink(q.id));
    li.append(meta);
    return li;
  }));
  $("cautious").hidden = !result.cautious;
  $("answer").classList.toggle("cautious", Boolean(result.cautious));
  $("answer").hidden = false;
  showConsidered(result);
  $("provenance").open = false;
  $("provenance").hidden = false;
  setStatus(result.cautious ? "Answered with caution." : "Answered.");
}

const GLIMPSE = 160; // characters of a passage's text shown in the provenance

function glimpse(s) {
  const flat = s.replace(/\s+/g, " ").trim();
  if (flat.length <= GLIMPSE) return flat;
  const cut = flat.slice(0, GLIMPSE);
  const space = cut.lastIndexOf(" ");
  return (space > GLIMPSE / 2 ? cut.slice(0, space) : cut) + "…";
}

function showConsidered(result) {
  // The passages the answer was made from, best first: a quoted one with its place and the
  // start of its quote (the API gives the text and metadata of quoted passages only; the
  // others are named by id, and open in context).
  const ranked = [...result.documents].sort((a, b) => b.score - a.score);
  $("passages").replaceChildren(...ranked.map((d) => {
    const li = text("li", "", "considered");
    li.dataset.id = d.id;
    li.dataset.score = String(d.score);
    const q = result.quotes.find((x) => x.id === d.id);
    if (q) {
      const c = result.citations.find((x) => x.n === q.n) || {};
      li.append(placeOf(q.metadata, c.title, c.source), text("div", glimpse(q.text), "glimpse"));
    }
    const meta = text("div", (q ? `quoted [${q.n}] · ` : "not quoted · ") + "score " + d.score.toFixed(3) +
      " · " + d.id + " · ", "meta");
    meta.append(passageLink(d.id));
    li.append(meta);
    return li;
  }));
  $("considered").hidden = ranked.length === 0;
}

function focusQuote(n) {
  document.querySelectorAll(".quote.active").forEach((el) => el.classList.remove("active"));
  const el = $("quote-" + n);
  if (el) { el.classList.add("active"); el.scrollIntoView({ block: "nearest" }); }
}

// -- the passage in context -----------------------------------------------------------------

function passageParams() {
  if (!location.hash.startsWith("#passage?")) return null;
  const params = new URLSearchParams(location.hash.slice("#passage?".length));
  return params.get("id") && params.get("collection") ? params : null;
}

function closePassageLink() {
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
}

async function openPassage() {
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

// -- dependencies ---------------------------------------------------------------------------

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

// -- requests -------------------------------------------------------------------------------

async function search(req, query) {
  const params = new URLSearchParams({ q: query, mode: $("mode").value, ...scope() });
  if (k()) params.set("k", String(k()));
  const result = await api(key(), "/v1/search?" + params, null, req.controller.signal);
  if (req === current) showHits(result, query);
}

async function ask(req, query) {
  const body = { question: query, mode: $("mode").value, explain: true, ...scope() };
  if (k()) body.doc_limit = k();
  if ($("reader").value) body.reader = $("reader").value;
  const sent = performance.now();
  // The stages are said in the status line as they stream (kept in the provenance, which
  // shows, closed, with the answer: nothing on the page moves when the answer comes).
  const reached = [];
  const onStage = (stage) => {
    if (req !== current || stage === "started") return;
    addStage(stage, performance.now() - sent);
    reached.push(stage);
    setStatus(`Asking… ${reached.join(" · ")}`);
  };
  const onSentence = (sentence) => { // a model's checked sentence, shown as it is written
    if (req !== current) return;
    const answer = $("answer-text");
    answer.append((answer.textContent ? " " : "") + sentence);
    $("answer").hidden = false;
  };
  const result = await askStream(key(), body, onStage, req.controller.signal, onSentence);
  if (req === current) showAnswer(result);
}

$("search-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const action = event.submitter ? event.submitter.value : "ask";
  const req = begin();
  const wrong = refused();
  if (wrong.length) { // said next to each field, the first one focused
    wrong.forEach(([field, why]) => fieldError(field, why));
    $(wrong[0][0]).focus();
    return;
  }
  // a key still being typed is loaded first; an empty picker says why it is empty
  if (stopTyping() || !$("collection").value) await loadCollections();
  if (req !== current || !$("collection").value) return;
  setStatus(action === "ask" ? "Asking…" : "Searching…");
  try {
    await (action === "ask" ? ask : search)(req, $("query").value);
  } catch (error) {
    if (req !== current || error.name === "AbortError") return;
    clearResults();
    showError(error);
  }
});

// -- the key: kept for this tab only, in effect as it is pasted ---------------------------------

const KEY = "excerpt-key";
let requested = null; // the key the picker was last filled (or is being filled) for
let typing = 0; // the timer of a key being typed

function keep(value) {
  // sessionStorage: the key lives as long as the tab; none in localStorage, where an older
  // version of this page kept it (removed on every load)
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
  $("sign-out").hidden = !value;
}

function keyChanged(now) {
  // A pasted key (or the field left) loads its collections at once; one typed, when the
  // typing pauses. The picker is busy from the first keystroke, so nothing reads it stale.
  const paused = stopTyping();
  keep(key());
  if (key() === requested && !paused) return; // already loaded, or loading, for this key
  loads++; // whatever an older key's listing brings is dropped
  $("collection").setAttribute("aria-busy", "true");
  const load = () => { typing = 0; begin(); loadCollections(); };
  if (now) load();
  else typing = setTimeout(load, 400);
}

function stopTyping() {
  // true when a typed key was waiting to be loaded
  const waiting = typing !== 0;
  clearTimeout(typing);
  typing = 0;
  return waiting;
}

function signOut() {
  // The key forgotten (the tab's and any old copy), and everything it showed cleared.
  stopTyping();
  $("key").value = "";
  $("query").value = "";
  keep("");
  localStorage.removeItem("excerpt-collection");
  begin();
  loadCollections().then(() => {
    if (!key()) setStatus("Signed out: the key is forgotten. Paste an API key to start.");
  });
  $("key").focus();
}

initTheme($("theme"));
localStorage.removeItem(KEY);
$("key").value = sessionStorage.getItem(KEY) || "";
$("sign-out").hidden = !key();
$("key").addEventListener("input", (event) =>
  keyChanged(/^insertFrom(Paste|Drop)$/.test(event.inputType || "")));
$("key").addEventListener("change", () => keyChanged(true));
$("sign-out").addEventListener("click", signOut);

// -- the keyboard -------------------------------------------------------------------------------

$("query").addEventListener("keydown", (event) => {
  // Enter asks, Ctrl+Enter (⌘+Enter) searches; not while an IME is composing (Korean...)
  if (event.key !== "Enter" || event.isComposing || event.keyCode === 229) return;
  event.preventDefault();
  const button = event.ctrlKey || event.metaKey ? "search-button" : "ask-button";
  $("search-form").requestSubmit($(button));
});

function inTextField(el) {
  if (!el) return false;
  if (el.isContentEditable || ["TEXTAREA", "SELECT"].includes(el.tagName)) return true;
  const clicked = ["button", "submit", "reset", "checkbox", "radio", "range", "color", "file", "image"];
  return el.tagName === "INPUT" && !clicked.includes(el.type);
}

document.addEventListener("keydown", (event) => {
  // `/` comes back to the question box, unless it is typed into a field
  if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
  if (inTextField(document.activeElement)) return;
  event.preventDefault();
  $("query").focus();
  $("query").select();
});
$("collection").addEventListener("change", () => {
  localStorage.setItem("excerpt-collection", $("collection").value);
  fillSnapshots();
});
$("passage-close").addEventListener("click", () => { $("passage").hidden = true; closePassageLink(); });
window.addEventListener("hashchange", openPassage);
loadCollections().then(openPassage);
