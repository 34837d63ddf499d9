// How a turn's answer was found, behind a disclosure (closed when the answer comes): the
// stages with the time each was reached, and the passages considered, best first, each with
// its place, the start of its text (the ask's `documents`), its score and whether it was
// quoted.
"use strict";

import { text } from "./dom.js";
import { passageLink, placeOf } from "./cards.js";
import { part } from "./conversation.js";

const GLIMPSE = 160; // characters of a passage's text start shown

function glimpse(s, more) {
  const flat = s.replace(/\s+/g, " ").trim();
  if (flat.length <= GLIMPSE) return flat + (more ? "…" : "");
  const cut = flat.slice(0, GLIMPSE);
  const space = cut.lastIndexOf(" ");
  return (space > GLIMPSE / 2 ? cut.slice(0, space) : cut) + "…";
}

export function addStage(turn, name, ms) {
  const li = text("li", name);
  li.dataset.ms = String(Math.round(ms));
  li.title = `${Math.round(ms)} ms after the question was sent`;
  part(turn, "stages").append(li);
}

function considered(document, quote) {
  const li = text("li", "", "considered");
  li.dataset.id = document.id;
  li.dataset.score = String(document.score);
  li.append(placeOf(document.metadata, document.title, document.source));
  if (typeof document.text_start === "string") {
    li.append(text("div", glimpse(document.text_start, document.chars > document.text_start.length), "glimpse"));
  }
  const meta = text("div", (quote ? `quoted [${quote.n}]` : "not quoted") + " · score " +
    document.score.toFixed(3) + " · " + document.id + " · ", "meta");
  meta.append(passageLink(document.id));
  li.append(meta);
  return li;
}

function timings(ms) {
  // the server's own time per step, "total" last
  const steps = Object.entries(ms || {}).sort(([a], [b]) => (a === "total") - (b === "total"));
  return steps.length ? "On the server: " + steps.map(([name, t]) => `${name} ${Math.round(t)} ms`).join(" · ") : "";
}

export function showProvenance(turn, result) {
  part(turn, "timings").textContent = timings(result.timings_ms);
  const ranked = [...result.documents].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  const quoted = new Map(result.quotes.map((q) => [q.id, q]));
  part(turn, "passages").replaceChildren(...ranked.map((d) => considered(d, quoted.get(d.id))));
  part(turn, "considered").hidden = ranked.length === 0;
  part(turn, "provenance").open = false;
}
