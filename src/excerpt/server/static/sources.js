// A turn's source cards: one per quote, numbered as the answer cites it, with the passage's
// place (places.js), the quote marked in a few words of its passage around it (the ask's own
// `context`, no second request) and "open in context" (the passage view). Each [n] of the
// answer opens its card: marked, scrolled to and focused.
"use strict";

import { text } from "./dom.js";
import { passageLink, placeOf, shown } from "./cards.js";
import { part } from "./conversation.js";

function inContext(quote) {
  // the quote marked inside the words around it; "…" where the passage goes on
  const block = document.createElement("blockquote");
  const around = quote.context;
  if (around) block.append(text("span", (around.more_before ? "…" : "") + around.before, "around"));
  block.append(text("mark", quote.text, "quoted"));
  if (around) block.append(text("span", around.after + (around.more_after ? "…" : ""), "around"));
  return block;
}

function card(turn, quote, citation) {
  const known = { metadata: quote.metadata, title: citation.title, source: citation.source, quote: quote.text };
  shown.set(quote.id, known); // for the passage view: its place, and the quote to mark
  const li = document.createElement("li");
  li.className = "quote source";
  li.id = `turn-${turn.dataset.turn}-source-${quote.n}`;
  li.dataset.id = quote.id;
  li.dataset.n = String(quote.n);
  li.tabIndex = -1; // focused when its [n] is pressed
  const head = text("div", "", "source-head");
  head.append(text("span", `[${quote.n}]`, "n"), placeOf(quote.metadata, citation.title, citation.source));
  const link = passageLink(quote.id);
  link.textContent = "open in context";
  // an earlier turn's quote is marked too: the page forgets what it showed at each request
  link.addEventListener("click", () => shown.set(quote.id, known));
  const meta = text("div", "", "meta");
  meta.append(link, " · " + quote.id);
  li.append(head, inContext(quote), meta);
  return li;
}

export function showSources(turn, result) {
  const byN = new Map(result.citations.map((c) => [c.n, c]));
  part(turn, "sources").replaceChildren(...result.quotes.map((q) => card(turn, q, byN.get(q.n) || {})));
  part(turn, "sources-title").hidden = result.quotes.length === 0;
}

export function openSource(turn, n) {
  turn.querySelectorAll(".source.active").forEach((el) => el.classList.remove("active"));
  const el = turn.querySelector(`.source[data-n="${n}"]`);
  if (!el) return;
  el.classList.add("active");
  el.scrollIntoView({ block: "nearest" });
  el.focus({ preventScroll: true });
}
