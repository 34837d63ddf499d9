// excerpt's web UI: plain JavaScript modules over the HTTP API, no build step, no external
// assets. This module wires the page: the key's collections fill the picker (GET
// /v1/snapshots: only what the key may see), the picked one's overview and filters show
// (overview.js, filters.js), the form sends an ask (answer.js) or a search
// (results.js), each new request clears what the last one showed (requests.js), and "in
// context" links open the passage (passage.js).
// The key is kept for this tab only (sessionStorage; Sign out forgets it) and takes effect as
// it is pasted; an error is said next to what caused it (the key, the question, k) or under
// the question, and the next request clears it; Enter asks, Ctrl+Enter searches, `/` comes
// back to the question box.
import { $, fieldError, setStatus, showError } from "./dom.js";
import { api } from "./api.js";
import { key, refused } from "./controls.js";
import { begin, clearViews, isCurrent, onClear } from "./requests.js";
import { shown } from "./cards.js";
import { openPassage } from "./passage.js";
import { ask } from "./answer.js";
import { search } from "./results.js";
import { showOverview } from "./overview.js";
import { initTheme } from "./theme.js";
import { initUpload } from "./upload.js";

let listing = { snapshots: [], sets: [] };
let loads = 0; // collection listings asked for; only the last one fills the picker
const base = (path) => (path || "").split(/[\\/]/).pop();

onClear(() => shown.clear());

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
  showOverview("");
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
  showOverview($("collection").value);
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
  if (!isCurrent(req) || !$("collection").value) return;
  setStatus(action === "ask" ? "Asking…" : "Searching…");
  try {
    await (action === "ask" ? ask : search)(req, $("query").value);
  } catch (error) {
    if (!isCurrent(req) || error.name === "AbortError") return;
    clearViews();
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
initUpload(loadCollections); // the panel for keys that may ingest; the picker refreshed after
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
  showOverview($("collection").value);
});
loadCollections().then(openPassage);
