// One request at a time: a new one abandons the last (its fetch aborted, what it showed
// cleared by every view's registered clear); a view shows a result only while its request is
// still the current one.
"use strict";

import { clearErrors } from "./dom.js";

let current = null; // the request whose results the page shows: {controller}
const clears = [];

export function onClear(clear) {
  // clear(): empties one view (called for every new request)
  clears.push(clear);
}

export function clearViews() {
  clears.forEach((clear) => clear());
}

export function begin() {
  if (current) current.controller.abort();
  current = { controller: new AbortController() };
  clearViews();
  clearErrors();
  return current;
}

export const isCurrent = (req) => req === current;
