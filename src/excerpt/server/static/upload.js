// Upload and folder sync, for keys that may ingest. GET /v1/whoami says whether the key may
// (asked once per key, when its collections have loaded): a reader's key never sees the panel,
// and the server refuses it anyway (403). Files dropped or chosen go one by one to POST
// /v1/ingest (each its own source, upload:NAME); a folder is zipped here (zip.js) with itself
// as the zip's one top folder, so that the server names the sync after it, and sent to POST
// /v1/sync. Requests go through XMLHttpRequest: its upload progress events drive each file's
// bar (Chromium streams a fetch body only over HTTP/2, which `excerpt serve` does not speak).
// Each row shows what the server answered, its error included; once the queue is done the
// collections picker is filled again, the collection sent to picked.
"use strict";

import { $, text } from "./dom.js";
import { ApiError, api } from "./api.js";
import { key } from "./controls.js";
import { zip } from "./zip.js";

const SHOWN_NAMES = 20; // of a sync's added, changed or deleted files; the rest counted
let reload = async () => {}; // excerpt.js's loadCollections
let asked = null; // the key the panel was last decided for
let era = 0; // which key's work this is: a new key drops what an older one queued
const sending = new Set(); // requests in flight, aborted when the key changes
let queue = Promise.resolve();
let waiting = 0; // jobs queued or running
let sent = null; // the collection the last job that succeeded went into
let followed = ""; // what the collection field was last set to from the picker

export function initUpload(loadCollections) {
  reload = loadCollections;
  // the picker is filled for each key (aria-busy goes false): then the panel is decided
  new MutationObserver(collectionsLoaded).observe($("collection"),
    { attributes: true, attributeFilter: ["aria-busy"] });
  $("collection").addEventListener("change", followPicker);
  $("upload-choose-files").addEventListener("click", () => $("upload-files").click());
  $("upload-choose-folder").addEventListener("click", () => $("upload-folder").click());
  $("upload-files").addEventListener("change", (event) => {
    [...event.target.files].forEach(uploadFile);
    event.target.value = ""; // the same file chosen again is a new upload
  });
  $("upload-folder").addEventListener("change", (event) => {
    chosenFolder([...event.target.files]);
    event.target.value = "";
  });
  wireDrops($("upload-drop"));
}

// -- whether the key may ingest ------------------------------------------------------------------

function collectionsLoaded() {
  if ($("collection").getAttribute("aria-busy") !== "false") {
    // another key's collections are loading: the last key's panel goes at once, not when
    // the new key's rights come back
    if (key() !== asked) { forget(); asked = null; }
    return;
  }
  const names = [...$("collection").options].map((o) => o.value);
  $("upload-collections").replaceChildren(...names.map((n) => new Option(n)));
  followPicker();
  decide();
}

function followPicker() {
  // the field says the picked collection until something else is typed into it
  const field = $("upload-collection");
  if (field.value.trim() && field.value !== followed) return;
  followed = field.value = $("collection").value;
}

async function decide() {
  const current = key();
  if (current === asked) return;
  asked = current;
  forget();
  if (!current) return;
  let rights = { may_ingest: false };
  try {
    rights = await api(current, "/v1/whoami");
  } catch (error) {
    // a key the server refuses: the collections' load says so next to the key; asked again
    // at the next load (a server that could not read its keys may by then)
    if (asked === current) asked = null;
  }
  if (asked !== current) return;
  $("upload").hidden = !rights.may_ingest;
  $("upload").dataset.mayIngest = rights.may_ingest ? "yes" : "no"; // decided (tests wait on it)
}

function forget() {
  // another key (or none): its uploads stop and their rows go, the panel hides until asked
  era++;
  sending.forEach((xhr) => xhr.abort());
  $("upload").hidden = true;
  delete $("upload").dataset.mayIngest;
  $("upload-list").replaceChildren();
  $("upload-said").textContent = "";
  sent = null;
}

// -- drops, files and folders ----------------------------------------------------------------------

const carriesFiles = (event) => Boolean(event.dataTransfer) && [...event.dataTransfer.types].includes("Files");

function wireDrops(zone) {
  ["dragenter", "dragover"].forEach((type) => zone.addEventListener(type, (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
    zone.classList.add("over");
  }));
  zone.addEventListener("dragleave", (event) => {
    if (!zone.contains(event.relatedTarget)) zone.classList.remove("over");
  });
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    dropped(event.dataTransfer);
  });
  // files dragged over the page open the panel (closed, it is one line above the results)
  document.addEventListener("dragenter", (event) => {
    if (!$("upload").hidden && carriesFiles(event)) $("upload-box").open = true;
  });
  // a file dropped beside the zone would replace the page with the file: refused instead
  ["dragover", "drop"].forEach((type) => document.addEventListener(type, (event) => {
    if ($("upload").hidden || !carriesFiles(event) || zone.contains(event.target)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "none";
  }));
}

function dropped(transfer) {
  // The entries are taken now: a drop's items are gone once its event returns. A folder
  // (webkitGetAsEntry) is synced; a file is uploaded.
  const items = [...(transfer.items || [])].filter((item) => item.kind === "file");
  if (!items.length) { [...transfer.files].forEach(uploadFile); return; }
  items.map((item) => [item.webkitGetAsEntry ? item.webkitGetAsEntry() : null, item.getAsFile()])
    .forEach(([entry, file]) => {
      if (entry && entry.isDirectory) syncFolder(entry.name, () => entryFiles(entry));
      else if (file) uploadFile(file);
    });
}

export async function entryFiles(entry, path = entry.name) {
  // [{path, data}] of every file under a dropped folder's entry (a FileSystemDirectoryEntry),
  // each path starting with the folder's name
  if (entry.isFile) return [{ path, data: await new Promise((ok, fail) => entry.file(ok, fail)) }];
  const reader = entry.createReader();
  const out = [];
  for (;;) { // readEntries gives a folder's entries a batch (up to 100) at a time
    const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
    if (!batch.length) return out;
    for (const child of batch) out.push(...await entryFiles(child, `${path}/${child.name}`));
  }
}

function chosenFolder(files) {
  // a folder from the picker: every file's webkitRelativePath starts with the folder's name
  if (!files.length) return;
  const name = files[0].webkitRelativePath.split("/")[0];
  syncFolder(name, async () => files.map((f) => ({ path: f.webkitRelativePath, data: f })));
}

// -- the jobs: one at a time, each with its row ------------------------------------------------------

const target = () => $("upload-collection").value.trim() || $("collection").value || "default";

function enqueue(row, collection, job) {
  const mine = era;
  waiting++;
  queue = queue.then(async () => {
    try {
      if (mine !== era) return; // queued for a key that is gone
      await job(mine);
      sent = collection;
    } catch (error) {
      if (mine === era) row.fail(error.message);
    } finally {
      waiting--;
    }
    if (waiting || mine !== era || !sent) return;
    const last = sent;
    sent = null;
    await refreshed(last);
  }).catch(() => {}); // the picker's load says its own errors; the queue goes on
}

async function refreshed(collection) {
  // the picker filled again (a new collection appears), the one sent to picked when the key
  // may read it
  await reload();
  const picker = $("collection");
  if ([...picker.options].some((o) => o.value === collection) && picker.value !== collection) {
    picker.value = collection;
    picker.dispatchEvent(new Event("change"));
  }
}

function uploadFile(file) {
  const collection = target();
  const row = addRow(file.name, `${bytes(file.size)} · into ${collection}`);
  enqueue(row, collection, async () => {
    const query = new URLSearchParams({ filename: file.name, collection });
    const result = await send("/v1/ingest?" + query, file, row, "reading it into the collection…");
    row.done(ingested(result));
    if (result.snapshot_id) row.li.dataset.snapshot = result.snapshot_id;
  });
}

function syncFolder(name, read) {
  // read(): the folder's files as [{path, data}], each path starting with the folder's name
  const collection = target();
  const row = addRow(`${name}/`, `folder · sync into ${collection}`);
  enqueue(row, collection, async (mine) => {
    row.busy("reading the folder…");
    const all = await read();
    // hidden files are not synced (the server skips them too): they are not sent either
    const files = all.filter((f) => !f.path.split("/").some((part) => part.startsWith(".")))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const hidden = all.length - files.length;
    row.detail(`${files.length} ${files.length === 1 ? "file" : "files"}` +
      (hidden ? ` (${hidden} hidden left out)` : "") + ` · sync into ${collection}`);
    if (!files.length) throw new Error("the folder holds no file to sync");
    const body = await zip(files, (done, total) => {
      if (mine === era) row.progress(done / total, `zipping ${done} of ${total} files…`, "zipping");
    });
    const query = new URLSearchParams({ collection });
    const result = await send("/v1/sync?" + query, body, row, "syncing…");
    row.report(result);
  });
}

function send(path, body, row, working) {
  // POST the body with the key; resolves with the JSON, rejects with the server's error
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    sending.add(xhr);
    xhr.open("POST", path);
    xhr.setRequestHeader("Authorization", "Bearer " + key());
    xhr.upload.onprogress = (event) => {
      const total = event.lengthComputable ? event.total : body.size;
      row.progress(total ? event.loaded / total : 0, `sending ${bytes(event.loaded)} of ${bytes(total)}…`);
    };
    xhr.upload.onload = () => row.busy(working); // all sent: the server works on it now
    xhr.onloadend = () => sending.delete(xhr);
    xhr.onload = () => {
      let data = {};
      try { data = JSON.parse(xhr.responseText); } catch (error) { /* not JSON: said by status */ }
      if (xhr.status >= 200 && xhr.status < 300) resolve(data);
      else reject(new ApiError(data.error || `${xhr.status} ${xhr.statusText}`, xhr.status));
    };
    xhr.onerror = () => reject(new ApiError("the upload did not reach the server, or the connection closed before it answered"));
    xhr.onabort = () => reject(new ApiError("stopped: the key changed"));
    xhr.send(body);
  });
}

// -- what each row says --------------------------------------------------------------------------------

function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function ingested(result) {
  // POST /v1/ingest's result in a line: the snapshot, its passages, what was skipped
  const id = (result.snapshot_id || "").slice(0, 12);
  if (result.status === "unchanged") return `unchanged: snapshot ${id} already holds this file`;
  const parts = [`snapshot ${id}`, plural(result.nodes, "passage")];
  if (result.skipped) {
    const first = (result.errors || [])[0];
    parts.push(`${result.skipped} skipped` + (first ? `: ${first.reason}` : ""));
  }
  return parts.join(" · ");
}

function addRow(name, detail) {
  const li = text("li", "", "upload-item");
  li.dataset.state = "waiting";
  const head = text("div", "", "upload-head");
  const about = text("span", detail, "meta");
  head.append(text("span", name, "upload-name"), about);
  const bar = document.createElement("progress");
  bar.max = 1;
  bar.value = 0;
  bar.setAttribute("aria-label", name);
  const state = text("p", "waiting", "upload-state");
  li.append(head, bar, state);
  $("upload-list").append(li);
  const say = (words, kind) => {
    li.dataset.state = kind;
    state.textContent = words;
    // a screen reader hears each file's outcome, not every step of its progress
    if (kind === "done" || kind === "failed") $("upload-said").textContent = `${name}: ${words}`;
  };
  return {
    li,
    detail: (words) => { about.textContent = words; },
    progress: (part, words, kind = "sending") => { bar.value = part; say(words, kind); },
    busy: (words) => { bar.removeAttribute("value"); say(words, "working"); },
    done: (words) => { bar.value = 1; bar.hidden = true; say(words, "done"); },
    fail: (words) => { bar.hidden = true; say(words, "failed"); },
    report: (result) => { bar.value = 1; bar.hidden = true; say(synced(result), "done"); li.append(listed(result)); },
  };
}

function synced(r) {
  // the CLI's summary of a pass, in its words
  return `${r.added} added, ${r.changed} changed, ${r.unchanged} unchanged, ${r.deleted} deleted, ${r.failed} failed in ${r.seconds.toFixed(1)} s`;
}

function listed(result) {
  // the files of each kind (the first SHOWN_NAMES; the rest counted), and each failure's reason
  const ul = text("ul", "", "upload-report");
  ["added", "changed", "deleted"].forEach((kind) => {
    const names = result.files[kind];
    if (!names.length) return;
    const li = text("li", "");
    li.dataset.kind = kind;
    const more = names.length > SHOWN_NAMES ? ` and ${names.length - SHOWN_NAMES} more` : "";
    li.append(text("span", kind, "upload-kind"), " " + names.slice(0, SHOWN_NAMES).join(", ") + more);
    ul.append(li);
  });
  result.failures.forEach((failure) => {
    const li = text("li", "");
    li.dataset.kind = "failed";
    li.append(text("span", "failed", "upload-kind"), ` ${failure.path}: ${failure.reason}`);
    ul.append(li);
  });
  return ul;
}
