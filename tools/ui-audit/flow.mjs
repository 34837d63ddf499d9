// A Lighthouse user flow through excerpt's web UI (run by bench/ui_lighthouse.py): the start
// page loaded (navigation), an ingester's key pasted (a snapshot of the collection overview and
// the upload panel), a question asked (a timespan from the click to the answer, then a
// snapshot), a follow-up in the same conversation (a timespan and a snapshot of both turns),
// then a search (a timespan and a snapshot of the results). Debian's Chromium, headless, driven by puppeteer-core (no browser download).
//
//   EXCERPT_KEY=exk_... node flow.mjs URL COLLECTION QUESTION FOLLOW_UP QUERY OUT_PREFIX
//
// Writes OUT_PREFIX.json (each step's name, mode and category scores, 0-100) and
// OUT_PREFIX.html (Lighthouse's flow report).
import fs from "node:fs";
import puppeteer from "puppeteer-core";
import { startFlow } from "lighthouse";

const [url, collection, question, followUp, query, out] = process.argv.slice(2);
const key = process.env.EXCERPT_KEY;
if (!out || !key) {
  console.error("usage: EXCERPT_KEY=KEY node flow.mjs URL COLLECTION QUESTION FOLLOW_UP QUERY OUT_PREFIX");
  process.exit(2);
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROME_PATH || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage();
  const flow = await startFlow(page, {
    name: "excerpt web UI",
    config: { extends: "lighthouse:default",
      settings: { onlyCategories: ["accessibility", "performance"] } },
  });
  await flow.navigate(url + "/", { name: "start page" });

  await page.type("#key", key);
  await page.$eval("#key", (el) => el.dispatchEvent(new Event("change")));
  await page.waitForSelector("#collection[aria-busy=false]");
  await page.select("#collection", collection);
  // the collection's overview (and, for this ingester's key, the upload panel) on the page
  await page.waitForSelector("#overview:not([hidden]) #overview-examples button", { timeout: 60000 });
  await page.waitForSelector("#upload[data-may-ingest=yes]");
  await flow.snapshot({ name: "overview" });
  await page.type("#query", question);
  await flow.startTimespan({ name: "ask" });
  await page.click("#ask-button");
  await page.waitForSelector("#turns > .turn:last-child[data-state=answered]", { timeout: 60000 });
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Answered"));
  await flow.endTimespan();
  await flow.snapshot({ name: "answer" });

  // a follow-up: a second turn of the conversation, resolved by the server
  await page.$eval("#query", (el) => { el.value = ""; });
  await page.type("#query", followUp);
  await flow.startTimespan({ name: "follow-up" });
  await page.click("#ask-button");
  await page.waitForSelector("#turns > .turn:nth-child(2)[data-state=answered]", { timeout: 60000 });
  await flow.endTimespan();
  await flow.snapshot({ name: "conversation" });

  await page.$eval("#query", (el) => { el.value = ""; });
  await page.type("#query", query);
  await flow.startTimespan({ name: "search" });
  await page.click("#search-button");
  await page.waitForSelector("#hits:not([hidden])", { timeout: 60000 });
  await flow.endTimespan();
  await flow.snapshot({ name: "results" });

  const result = await flow.createFlowResult();
  const steps = result.steps.map((step) => ({
    name: step.name,
    mode: step.lhr.gatherMode,
    // a snapshot weighs no performance audit: Lighthouse's 0 there is no score
    scores: Object.fromEntries(Object.entries(step.lhr.categories)
      .filter(([id]) => !(id === "performance" && step.lhr.gatherMode === "snapshot"))
      .map(([id, c]) => [id, c.score === null ? null : Math.round(c.score * 100)])),
    failing: Object.values(step.lhr.audits)
      .filter((a) => a.scoreDisplayMode === "binary" && a.score === 0).map((a) => a.id),
    metrics: Object.fromEntries(["first-contentful-paint", "largest-contentful-paint",
      "total-blocking-time", "cumulative-layout-shift", "interaction-to-next-paint"]
      .filter((id) => step.lhr.audits[id] && step.lhr.audits[id].numericValue !== undefined)
      .map((id) => [id, Math.round(step.lhr.audits[id].numericValue * 1000) / 1000])),
  }));
  fs.writeFileSync(out + ".json", JSON.stringify(steps, null, 1));
  fs.writeFileSync(out + ".html", await flow.generateReport());
} finally {
  await browser.close();
}
