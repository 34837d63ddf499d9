// Search snippets: a window of a hit's text around the query's terms, cut at word boundaries,
// with the matching words marked whole (never a part of a word: "age" does not mark "cage").
// Pure functions over strings; the page turns the parts into text nodes and <mark>s.
"use strict";

// A word: letters, digits and underscores of any script (Hangul, Latin, identifiers).
const WORD = /[\p{L}\p{N}_]+/gu;
const HANGUL = /\p{Script=Hangul}/u;
// Question words that match everything and say nothing (the server's analyzer drops them too).
const STOP = new Set(("a an and are as at be by did do does for from how in is it of on or that " +
  "the this to was were what when where which who why with about").split(" "));
export const WINDOW = 240; // characters a snippet shows at most, whole words only
const LEAD = 60; // characters of text before the first match, when there are that many

export function words(text) {
  return [...text.matchAll(WORD)].map((m) => ({ word: m[0], start: m.index, end: m.index + m[0].length }));
}

export function terms(query) {
  // The query's words, lower-cased, each once, without the words every question has.
  const seen = new Set();
  for (const { word } of words(query)) {
    const w = word.toLowerCase();
    if (!STOP.has(w) && (w.length > 1 || HANGUL.test(w))) seen.add(w);
  }
  return [...seen];
}

function stem(word) {
  // English endings only: "budgets" and "budget", "answered" and "answer" meet.
  for (const ending of ["'s", "ies", "es", "s", "ed", "ing", "ly"]) {
    if (word.length > ending.length + 2 && word.endsWith(ending)) {
      return word.slice(0, -ending.length) + (ending === "ies" ? "y" : "");
    }
  }
  return word;
}

export function matchOf(word, queryTerms) {
  // The term ``word`` matches, or null: the same word, the same English stem, or a Korean
  // word that starts with the term (a particle attached: 장학금을 for 장학금).
  const w = word.toLowerCase();
  for (const t of queryTerms) {
    if (w === t || (HANGUL.test(t) && w.startsWith(t))) return t;
    if (/^[a-z]+$/.test(t) && stem(w) === stem(t)) return t;
  }
  return null;
}

function bestWindow(hits, length) {
  // The window start with the most different terms in it (the earliest of equals).
  let best = { start: 0, score: -1 };
  hits.forEach((h) => {
    const start = Math.max(0, h.start - LEAD);
    const inside = new Set(hits.filter((o) => o.start >= h.start && o.end <= start + length).map((o) => o.term));
    if (inside.size > best.score) best = { start, score: inside.size };
  });
  return best.start;
}

export function snippet(text, query, length = WINDOW) {
  // [{text, mark}] parts: "…" where the text was cut, whitespace runs as one space.
  const all = words(text);
  const queryTerms = terms(query);
  const hits = all.map((w) => ({ ...w, term: matchOf(w.word, queryTerms) })).filter((w) => w.term);
  const from = hits.length ? bestWindow(hits, length) : 0;
  const kept = all.filter((w) => w.start >= from && w.end <= from + length);
  if (!kept.length) return [{ text: text.slice(0, length), mark: false }];
  const start = from === 0 ? 0 : kept[0].start;
  const end = kept[kept.length - 1].end === all[all.length - 1].end ? text.length : kept[kept.length - 1].end;
  const parts = [];
  if (start > 0) parts.push({ text: "…", mark: false });
  let at = start;
  hits.filter((h) => h.start >= start && h.end <= end).forEach((h) => {
    parts.push({ text: text.slice(at, h.start), mark: false }, { text: h.word, mark: true });
    at = h.end;
  });
  parts.push({ text: text.slice(at, end), mark: false });
  if (end < text.length) parts.push({ text: "…", mark: false });
  return parts.filter((p) => p.text).map((p) => ({ text: p.text.replace(/\s+/g, " "), mark: p.mark }));
}

export function marked(text, query) {
  // The whole text with the query's words marked (the passage view).
  const queryTerms = terms(query);
  const parts = [];
  let at = 0;
  words(text).filter((w) => matchOf(w.word, queryTerms)).forEach((w) => {
    parts.push({ text: text.slice(at, w.start), mark: false }, { text: w.word, mark: true });
    at = w.end;
  });
  parts.push({ text: text.slice(at), mark: false });
  return parts.filter((p) => p.text);
}
