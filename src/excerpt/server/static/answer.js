// An ask (POST /v1/ask/stream) as a turn of the conversation: the question as asked, its stages
// said in the status line as they stream, a model reader's checked sentences shown as they are
// written, then the answer: who wrote it, the cautious state said plainly, the answering
// sentence first in a lead block, the rest after it, each [n] a button that opens its source
// card (sources.js), copy and share (share.js), and the provenance behind a disclosure.
"use strict";

import { $, setStatus, text } from "./dom.js";
import { askStream } from "./api.js";
import { k, key, scope } from "./controls.js";
import { conversationId, newTurn, part } from "./conversation.js";
import { openSource, showSources } from "./sources.js";
import { addStage, showProvenance } from "./provenance.js";
import { enableActions } from "./share.js";
import { isCurrent } from "./requests.js";

const CITE = /(\[\d+\])/;

function sentences(paragraph) {
  // "A. [1] B. [2] [3] C. [4]" -> ["A. [1]", "B. [2] [3]", "C. [4]"]: each sentence of an
  // answer ends with the citation of the quote it comes from (the composer's, and a model's
  // after the check)
  return paragraph.trim().split(/(?<=\[\d+\])\s+(?!\[\d+\])/).filter(Boolean);
}

function cited(el, sentence, turn) {
  // `sentence` into `el`, each [n] a button (reached and pressed by keyboard too)
  sentence.split(CITE).forEach((piece) => {
    const m = piece.match(/^\[(\d+)\]$/);
    if (!m) { if (piece) el.append(piece); return; }
    const cite = text("button", piece, "cite");
    cite.type = "button";
    cite.dataset.n = m[1];
    cite.addEventListener("click", () => openSource(turn, m[1]));
    el.append(cite);
  });
  return el;
}

function readerSaid(reader) {
  // Who wrote the answer, in a sentence: the quotes, a model whose sentences were checked, or
  // the quotes because the model's answer was dropped (and why).
  if (!reader || reader.name === "extractive") return "Answered from quotes";
  const model = reader.model || reader.name;
  if (reader.fell_back) return `Answered from quotes: ${model}'s answer was dropped (${reader.reason})`;
  return `Written by ${model}, each sentence checked against a quote`;
}

function readerDetail(reader) {
  if (!reader || reader.name === "extractive") return "";
  return `${reader.name} reader · ${reader.tokens_in} tokens in, ${reader.tokens_out} out · ${Math.round(reader.ms)} ms`;
}

function showText(turn, answer, cautious) {
  // The lead: the first sentence, unless the answer is cautious (then nothing leads); the
  // rest after it, paragraph by paragraph (a model's answer, then the quotes' own).
  const paragraphs = answer.split(/\n\s*\n/).map(sentences).filter((p) => p.length);
  const lead = part(turn, "lead");
  const rest = part(turn, "rest");
  lead.replaceChildren();
  rest.replaceChildren();
  if (!cautious && paragraphs.length && CITE.test(paragraphs[0][0])) cited(lead, paragraphs[0].shift(), turn);
  lead.hidden = !lead.childNodes.length;
  paragraphs.filter((p) => p.length).forEach((p) => {
    const el = text("p", "");
    p.forEach((s, i) => { if (i) el.append(" "); cited(el, s, turn); });
    rest.append(el);
  });
}

function understood(turn, result) {
  // A follow-up read as another question: said, so the reader sees what was answered.
  const resolved = result.resolution && result.resolved_question && result.resolved_question !== result.asked;
  if (resolved) part(turn, "resolved").textContent = result.resolved_question;
  part(turn, "understood").hidden = !resolved;
}

function showAnswer(turn, result, sent) {
  understood(turn, result);
  part(turn, "reader").textContent = readerSaid(result.reader);
  part(turn, "reader").title = readerDetail(result.reader);
  part(turn, "caution").hidden = !result.cautious;
  part(turn, "answer").classList.toggle("cautious", Boolean(result.cautious));
  showText(turn, result.answer, result.cautious);
  showSources(turn, result);
  showProvenance(turn, result);
  enableActions(turn, result, sent);
  part(turn, "progress").remove();
  part(turn, "answer").hidden = false;
  turn.dataset.state = "answered";
  setStatus(result.cautious ? "Answered with caution." : "Answered.");
}

function streamed(turn, sentence) {
  // a model's checked sentence as it is written: the first leads, the others follow
  const lead = part(turn, "lead");
  const rest = part(turn, "rest");
  if (!lead.childNodes.length) { cited(lead, sentence, turn); lead.hidden = false; }
  else {
    const p = rest.firstElementChild || rest.appendChild(text("p", ""));
    if (p.childNodes.length) p.append(" ");
    cited(p, sentence, turn);
  }
  part(turn, "answer").hidden = false;
}

export function settings() {
  // the ask's settings as the form holds them (for the request, and for a shared link)
  const out = { mode: $("mode").value, ...scope() };
  if (k()) out.doc_limit = k();
  if ($("reader").value) out.reader = $("reader").value;
  return out;
}

export async function ask(req, query) {
  const asked = settings();
  const body = { question: query, explain: true, conversation: conversationId(), ...asked };
  const turn = newTurn(query);
  const sent = performance.now();
  const progress = part(turn, "progress");
  // The stages are shown in the turn as they stream (kept in its provenance, which shows,
  // closed, with the answer) and said in the status line to a screen reader; the status line
  // shows "Asking…" alone, so that it keeps its one line and nothing below it moves.
  const reached = [];
  const onStage = (stage) => {
    if (!isCurrent(req) || stage === "started") return;
    addStage(turn, stage, performance.now() - sent);
    reached.push(stage);
    progress.textContent = `Asking… ${reached.join(" · ")}`;
    $("status").replaceChildren("Asking…", text("span", " " + reached.join(" · "), "visually-hidden"));
  };
  const onSentence = (sentence) => { if (isCurrent(req)) streamed(turn, sentence); };
  const result = await askStream(key(), body, onStage, req.controller.signal, onSentence);
  if (isCurrent(req)) showAnswer(turn, result, { question: query, ...asked });
}
