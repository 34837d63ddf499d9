// The conversation the page keeps: its id (random, made here, sent with every ask as
// `conversation`, so the server resolves a follow-up from the turns it stored under this key),
// and its turns, each a question and its answer, below the ones before. "New conversation"
// starts over; so does another key (a key's conversations are its own) and Sign out.
// A new request hides the conversation (a search shows its results alone) and drops a turn
// still waiting for its answer; the next ask shows it again with its new turn.
"use strict";

import { $, setStatus } from "./dom.js";
import { key } from "./controls.js";
import { begin, onClear } from "./requests.js";

let id = "";
let owner = ""; // the key the conversation was started with
let turns = 0;

function randomId() {
  // crypto.randomUUID needs a secure context; a page served over plain HTTP on a LAN has none
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function conversationId() {
  // the id of the conversation the next ask belongs to (a new one for another key)
  if (!id || owner !== key()) newConversation();
  return id;
}

export function newConversation() {
  id = randomId();
  owner = key();
  turns = 0;
  $("turns").replaceChildren();
  $("conversation").hidden = true;
}

export function newTurn(question) {
  // A turn for `question`, added below the others: its parts found by class (turn.part(name)).
  const turn = $("turn-template").content.firstElementChild.cloneNode(true);
  turns += 1;
  turn.dataset.turn = String(turns);
  const asked = turn.querySelector(".asked");
  asked.id = `turn-${turns}-question`;
  asked.textContent = question;
  turn.setAttribute("aria-labelledby", asked.id);
  $("turns").append(turn);
  $("conversation").hidden = false;
  turn.scrollIntoView({ block: "nearest" });
  return turn;
}

export const part = (turn, name) => turn.querySelector("." + name);

$("new-conversation").addEventListener("click", () => {
  begin(); // an ask still running is abandoned
  newConversation();
  setStatus("A new conversation: the next question starts afresh.");
  $("query").focus();
});
$("sign-out").addEventListener("click", newConversation);
// another key's conversations are its own: the page forgets this one's turns as the key changes
$("key").addEventListener("input", () => { if (id && owner !== key()) newConversation(); });

onClear(() => {
  document.querySelectorAll("#turns > .turn:not([data-state=answered])").forEach((t) => t.remove());
  $("conversation").hidden = true;
});
