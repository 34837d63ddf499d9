// An answer (POST /v1/ask/stream): its stages said as they stream, a model reader's checked
// sentences shown as they are written, then the answer with its [n] citations as buttons that
// focus their quote, the quotes with their place, and the provenance behind a disclosure.
"use strict";

import { $, setStatus, text } from "./dom.js";
import { askStream } from "./api.js";
import { k, key, scope } from "./controls.js";
import { passageLink, placeOf, shown } from "./cards.js";
import { isCurrent, onClear } from "./requests.js";

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

export async function ask(req, query) {
  const body = { question: query, mode: $("mode").value, explain: true, ...scope() };
  if (k()) body.doc_limit = k();
  if ($("reader").value) body.reader = $("reader").value;
  const sent = performance.now();
  // The stages are said in the status line as they stream (kept in the provenance, which
  // shows, closed, with the answer: nothing on the page moves when the answer comes).
  const reached = [];
  const onStage = (stage) => {
    if (!isCurrent(req) || stage === "started") return;
    addStage(stage, performance.now() - sent);
    reached.push(stage);
    setStatus(`Asking… ${reached.join(" · ")}`);
  };
  const onSentence = (sentence) => { // a model's checked sentence, shown as it is written
    if (!isCurrent(req)) return;
    const answer = $("answer-text");
    answer.append((answer.textContent ? " " : "") + sentence);
    $("answer").hidden = false;
  };
  const result = await askStream(key(), body, onStage, req.controller.signal, onSentence);
  if (isCurrent(req)) showAnswer(result);
}

onClear(() => {
  ["answer", "provenance"].forEach((id) => { $(id).hidden = true; });
  ["answer-text", "reader-note", "quotes", "stages", "passages"].forEach((id) => $(id).replaceChildren());
  $("considered").hidden = true;
  $("cautious").hidden = true;
  $("answer").classList.remove("cautious");
});
