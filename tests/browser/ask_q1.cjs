// The web page of `lucy serve` in a real browser (Debian's chromium driven
// by playwright-core): ask DDO Q1 against the scripted mock LLM, check what
// the page shows, take a screenshot, then open a trace file through the
// page's file input (the drop zone's fallback) and check the same report,
// and one with an execution vote and verified examples.
//
// node ask_q1.cjs BASE_URL SCREENSHOT.png TRACE.json VOTED_TRACE.json
// Needs LUCY_PLAYWRIGHT (path of the playwright-core package).
"use strict";
const { chromium } = require(process.env.LUCY_PLAYWRIGHT || "playwright-core");

const Q1 = "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";
const [base, shot, tracePath, votedPath] = process.argv.slice(2);
let passed = 0;
const failed = [];
function check(what, ok, detail) {
  if (ok) passed++;
  else failed.push(what + (detail ? ": " + detail : ""));
}

(async () => {
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems = [];
    page.on("pageerror", (e) => problems.push("page error: " + e.message));
    page.on("console", (m) => { if (m.type() === "error") problems.push("console error: " + m.text()); });
    page.on("request", (r) => { if (!r.url().startsWith(base)) problems.push("request off the server: " + r.url()); });

    await page.goto(base + "/");
    await page.waitForSelector("#model option[value=ddo]", { state: "attached", timeout: 15000 });
    // The table browser: a dbt import's tables with their relation and origin.
    await page.selectOption("#model", "jaffle_shop");
    await page.waitForSelector("#model-tables:not(.hidden)", { timeout: 15000 });
    await page.click("#model-tables summary");
    const browsed = (await page.textContent("#model-tables")).replace(/\s+/g, " ");
    check("table browser shows relation and origin",
      browsed.includes("8 table(s)") && browsed.includes("jaffle_shop.orders") && browsed.includes("dbt: model jaffle_shop.orders"),
      browsed.slice(0, 300));
    await page.screenshot({ path: shot.replace(/\.png$/, "-tables.png") });
    await page.selectOption("#model", "ddo");
    await page.fill("#question", Q1);
    await page.fill("#min-votes", "2");
    await page.check("#execute");
    // Every text the status line shows while the answer streams in.
    await page.evaluate(() => {
      window.__statusSeen = [];
      const s = document.getElementById("status");
      // Each status() call replaces the text node: the records keep every text
      // shown, also when several arrive before the observer runs.
      new MutationObserver((records) => {
        for (const r of records) for (const n of r.addedNodes) window.__statusSeen.push(n.textContent);
      }).observe(s, { childList: true });
    });
    await page.click("#go");
    await page.waitForSelector("#phase-rows:not(.hidden)", { timeout: 60000 });

    const text = (sel) => page.textContent(sel).then((t) => (t || "").replace(/\s+/g, " ").trim());
    const chosen = await text("#chosen-tables");
    check("chosen tables", chosen.includes("CLIENT") && chosen.includes("DATACENTER") && !chosen.includes("LOCATION"), chosen);
    const match = await text("#match-body");
    check("votes shown, LOCATION dropped", /LOCATION\s*1\/5\s*dropped/.test(match), match.slice(0, 300));
    const svgKeys = await page.$$eval("#picture svg g.table", (gs) => gs.map((g) => g.getAttribute("data-key")));
    check("picture has the walk", ["CLIENT", "RSPOOL2CLIENT", "RESOURCEPOOL", "COMPUTE", "DATACENTER"].every((k) => svgKeys.includes(k)), svgKeys.join(","));
    check("picture shows the refused lookup", svgKeys.includes("LOCATION"), svgKeys.join(","));
    // The whole walk fits the panel: every table's box lies inside the
    // picture's visible area (a five-table walk was cut after the third).
    const fit = await page.evaluate(() => {
      const panel = document.getElementById("picture").getBoundingClientRect();
      const out = [];
      for (const g of document.querySelectorAll("#picture svg g.table")) {
        const r = g.getBoundingClientRect();
        if (r.left < panel.left - 1 || r.right > panel.right + 1) out.push(`${g.getAttribute("data-key")} ${Math.round(r.left)}-${Math.round(r.right)} outside ${Math.round(panel.left)}-${Math.round(panel.right)}`);
      }
      return out;
    });
    check("picture fits its panel", fit.length === 0, fit.join("; "));
    const view = await text("#view-body");
    check("view SQL shown", view.includes("CREATE VIEW") && view.includes("RSPOOL2CLIENT"), view.slice(0, 200));
    const hints = await text("#name-hints");
    check("name hints shown", hints.includes("DATACENTER_name"), hints);
    const sql = await text("#final-sql");
    check("final SQL over the view", sql.includes("FROM lucy_view"), sql);
    const rows = await text("#rows-badge");
    check("29 rows", rows.startsWith("29 row(s)"), rows);
    const cells = await page.$$eval("#rows-body tr", (trs) => trs.length);
    check("rows table", cells === 30, String(cells));
    const status = await text("#status");
    check("status done", status.startsWith("done: 29 row(s)"), status);
    const seen = await page.evaluate(() => window.__statusSeen);
    check("progress: the prompt in flight", seen.some((t) => t.startsWith("MatchTables · prompt 1: relevant tables")), seen.join(" | "));
    check("progress: the query plan prompt", seen.some((t) => t.startsWith("QueryView · prompt 1: query plan")), seen.join(" | "));
    const log = await page.$$eval("#prompt-log li", (lis) => lis.map((li) => li.textContent));
    check("prompt log", log.length >= 2 && log[0].startsWith("MatchTables 1: relevant tables") && log.some((l) => l.startsWith("QueryView 1: query plan")), log.join(" | "));
    const logHead = await text("#prompts-summary");
    check("prompt log summary", logHead.startsWith(`LLM prompts: ${log.length} answered`), logHead);
    await page.screenshot({ path: shot, fullPage: true });

    // The same report from a trace file.
    await page.reload();
    await page.waitForSelector("#model option[value=ddo]", { state: "attached" });
    await page.setInputFiles("#trace-file", tracePath);
    await page.waitForSelector("#phase-view:not(.hidden)", { timeout: 15000 });
    await page.waitForSelector("#picture svg", { timeout: 15000 });
    const tStatus = await text("#status");
    check("trace opened", tStatus.startsWith("trace "), tStatus);
    const tKeys = await page.$$eval("#picture svg g.table", (gs) => gs.map((g) => g.getAttribute("data-key")));
    check("trace picture", tKeys.includes("RSPOOL2CLIENT") && tKeys.includes("LOCATION"), tKeys.join(","));
    const tRows = await text("#rows-badge");
    check("trace rows (the trace keeps the first 10)", tRows.startsWith("29 row(s), first 10 shown"), tRows);

    // A trace with an execution vote and verified examples.
    await page.reload();
    await page.waitForSelector("#model option[value=ddo]", { state: "attached" });
    await page.setInputFiles("#trace-file", votedPath);
    await page.waitForSelector("#vote-section", { timeout: 15000 });
    const vote = await text("#vote-section");
    check("vote heading", vote.includes("Execution vote: 3 of 3 candidate(s), 1 distinct result(s); candidate #0 chosen"), vote.slice(0, 200));
    check("vote rows", vote.includes("29 row(s)") && vote.includes("set:00112233445566ff") && vote.includes("guard rejected: unknown column CLIENT_CLIENT_name"), vote);
    const used = await text("#examples-used");
    const plan = await text("#plan-section");
    const planRows = await page.$$eval("#plan-section tr", (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent).join(": ")));
    check("plan table", plan.includes("Query plan (--query-form auto)") && planRows.includes("select: CLIENT_name, DATACENTER_name") &&
      planRows.includes("filter: DATACENTER_name like 'dev%'") && plan.includes("Compiled to:"), planRows.join(" | "));
    check("plan tidied", plan.includes("tidied: like '%dev%' on DATACENTER_name: the question anchors it, 'dev%'"), plan);
    check("examples used", used.includes("Verified examples (1 of 3 asked for, from ddo.examples.jsonl)") && used.includes("prod1") && used.includes("0.83") && used.includes("in the prompt"), used);
    await page.screenshot({ path: shot.replace(/\.png$/, "-vote.png"), fullPage: true });
    check("no page errors and no request off the server", problems.length === 0, problems.join("; "));
  } finally {
    await browser.close();
  }
  for (const f of failed) console.log("FAILED " + f);
  console.log(`browser: ${passed} passed, ${failed.length} failed`);
  process.exit(failed.length ? 1 : 0);
})().catch((e) => {
  console.log("FAILED " + (e && e.stack || e));
  console.log(`browser: ${passed} passed, ${failed.length + 1} failed`);
  process.exit(1);
});
