// The HTTP API as the page uses it: JSON routes, and the ask as server-sent events.
"use strict";

export class ApiError extends Error {
  constructor(message, status = 0, param = null) {
    super(message);
    this.status = status; // the HTTP status (401: the key), 0 when the stream said it
    this.param = param; // the request's field at fault, when the service names one (k, where…)
  }
}

function headers(key, json) {
  const h = { Authorization: "Bearer " + key };
  if (json) h["Content-Type"] = "application/json";
  return h;
}

async function failure(response) {
  // The service's {"error", "kind", "param"} message, or the status when the body is not that.
  const data = await response.json().catch(() => ({}));
  return new ApiError(data.error || `${response.status} ${response.statusText}`, response.status,
    data.param || null);
}

export async function api(key, path, body, signal) {
  const init = { headers: headers(key, Boolean(body)), signal };
  if (body) { init.method = "POST"; init.body = JSON.stringify(body); }
  const response = await fetch(path, init);
  if (!response.ok) throw await failure(response);
  return response.json();
}

function parseEvent(block) {
  const event = { name: "message", data: "" };
  block.split("\n").forEach((line) => {
    if (line.startsWith("event:")) event.name = line.slice(6).trim();
    else if (line.startsWith("data:")) event.data += line.slice(5).trim();
  });
  return { name: event.name, data: event.data ? JSON.parse(event.data) : {} };
}

export async function askStream(key, body, onStage, signal, onSentence = () => {}) {
  // POST /v1/ask/stream: calls onStage(name) for each stage as it happens and onSentence(text)
  // for each checked sentence a model reader writes; resolves with the answer event's data
  // (the /v1/ask response), rejects with an error event's message.
  const response = await fetch("/v1/ask/stream", { method: "POST", headers: headers(key, true), body: JSON.stringify(body), signal });
  if (!response.ok) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const event = parseEvent(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (event.name === "stage") onStage(event.data.stage);
        else if (event.name === "sentence") onSentence(event.data.text);
        else if (event.name === "answer") return event.data;
        else if (event.name === "error") throw new ApiError(event.data.error || "the ask failed");
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  throw new ApiError("the answer stream ended without an answer");
}
