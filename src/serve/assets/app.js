// lucy serve's page: ask a question and watch the phases arrive (server-sent
// events over fetch), or drop a trace file to see the same report for it.
// Text from the server is always set with textContent; the only markup
// inserted is the join-path SVG, which the server renders with every text
// escaped.
"use strict";

const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem("lucy-token") || "";
let models = [];

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k instanceof Node ? k : String(k));
  return e;
}

function headers(extra) {
  const h = Object.assign({}, extra || {});
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

async function api(path, opts) {
  const r = await fetch(path, Object.assign({}, opts, { headers: headers((opts || {}).headers) }));
  if (r.status === 401) {
    $("token-box").classList.remove("hidden");
    throw new Error("this server needs its bearer token: enter it above");
  }
  return r;
}

async function errorText(r) {
  try { const j = await r.json(); return j.error || JSON.stringify(j); } catch (_) { return r.status + " " + r.statusText; }
}

function status(text, isError) {
  const s = $("status");
  s.textContent = text || "";
  s.classList.toggle("error", !!isError);
}

function badge(id, text, cls) {
  const b = $(id);
  b.textContent = text;
  b.className = "badge " + (cls || "");
}

function show(id, on) { $(id).classList.toggle("hidden", !on); }

function reset() {
  for (const id of ["phase-match", "phase-view", "phase-query", "phase-rows", "warnings", "prompts"]) show(id, false);
  for (const id of ["match-body", "view-body", "query-body", "rows-body", "picture", "warning-list", "prompt-log"]) $(id).replaceChildren();
  warnings.length = 0;
  progress.step = null;
  progress.inFlight = [];
  progress.tokensPerS = 0;
}

// ---------------------------------------------------------------- progress

// What `lucy ask` draws on a terminal, from the stream's `progress` events:
// the step, the prompt in flight, the generation speed; and a log of the
// answered prompts below the status line.
const progress = { step: null, inFlight: [], tokensPerS: 0 };

function progressLine() {
  let s = progress.step || "starting";
  const p = progress.inFlight[progress.inFlight.length - 1];
  if (p) {
    s += ` · prompt ${p.index}: ${p.what}`;
    if (p.samples > 1) s += ` (${p.samples} samples)`;
    if (progress.inFlight.length > 1) s += ` (+${progress.inFlight.length - 1} in flight)`;
  }
  if (progress.tokensPerS > 0) s += ` · ${progress.tokensPerS.toFixed(1)} tok/s`;
  return s;
}

function onProgress(e) {
  const same = (p) => p.step === e.step && p.index === e.index;
  if (e.kind === "step") progress.step = e.step;
  else if (e.kind === "prompt") progress.inFlight.push(e);
  else if (e.kind === "prompt_done") {
    progress.inFlight = progress.inFlight.filter((p) => !same(p));
    const secs = (e.ms / 1000).toFixed(1);
    const what = `${e.step} ${e.index}: ${e.what}` + (e.samples > 1 ? ` (${e.samples} samples)` : "");
    const how = e.ok ? `${e.tokens} token(s), ${secs} s` : `failed after ${secs} s`;
    $("prompt-log").append(el("li", e.ok ? {} : { class: "fail" }, `${what} — ${how}`));
    const n = $("prompt-log").children.length;
    $("prompts-summary").textContent = `LLM prompts: ${n} answered` + (e.tokens_per_s > 0 ? ` · ${e.tokens_per_s.toFixed(1)} tok/s` : "");
    show("prompts", true);
  }
  progress.tokensPerS = e.tokens_per_s;
  status(progressLine());
}

const warnings = [];
function warn(list) {
  for (const w of list || []) if (w && !warnings.includes(w)) warnings.push(w);
  $("warning-list").replaceChildren(...warnings.map((w) => el("li", {}, w)));
  show("warnings", warnings.length > 0);
}

function table(columns, rows, rowClass) {
  const t = el("table", {}, el("tr", {}, ...columns.map((c) => el("th", {}, c))));
  rows.forEach((r, i) => {
    const tr = el("tr", rowClass ? { class: rowClass(i) } : {});
    r.forEach((v) => tr.append(el("td", typeof v === "number" ? { class: "n" } : {}, v === null ? "NULL" : v)));
    t.append(tr);
  });
  return t;
}

function pre(text) { return el("pre", {}, text || ""); }

// ---------------------------------------------------------------- phases

function showMatch(mt) {
  if (!mt) return;
  show("phase-match", true);
  const body = $("match-body");
  body.replaceChildren();
  badge("match-badge", mt.source === "llm" ? `${mt.tables.length} table(s)` : `given (${mt.source})`, mt.tables.length ? "ok" : "fail");
  body.append(el("div", { class: "chips", id: "chosen-tables" }, el("b", {}, "Chosen tables: "), ...mt.tables.map((t) => el("span", {}, t))));
  if (mt.attributes && mt.attributes.length) {
    body.append(el("div", { class: "muted" }, "Attributes: " + mt.attributes.map((a) => a.table + "." + a.column).join(", ")));
  }
  for (const step of mt.steps || []) {
    const n = Math.max((step.samples || []).length, (step.call || {}).n || 0);
    const title = step.prompt + (step.subject ? " — " + step.subject : "") + ` (${n} sample(s), min ${step.min_votes} vote(s))`;
    const rows = (step.votes || []).map((v) => [v.item, `${v.votes}/${n}`, v.kept ? "kept" : "dropped"]);
    body.append(el("div", { class: "step" }, el("h3", {}, title),
      table(["item", "votes", ""], rows, (i) => (step.votes[i].kept ? "" : "dropped"))));
    warn(step.warnings);
  }
  warn(mt.warnings);
}

function showView(vt, svg) {
  if (!vt) return;
  show("phase-view", true);
  const body = $("view-body");
  body.replaceChildren();
  const v = vt.result;
  if (!v) {
    badge("view-badge", "error", "fail");
    body.append(el("p", { class: "failure" }, vt.error || "no result"));
    return;
  }
  badge("view-badge", v.status, v.status === "infeasible" ? "fail" : "ok");
  if (svg) {
    // Parse as SVG (not HTML) so nothing in it can run.
    const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
    const root = doc.documentElement;
    if (root && root.nodeName === "svg") $("picture").replaceChildren(document.importNode(root, true));
  }
  if (v.walk && v.walk.length) body.append(el("p", {}, el("b", {}, "Walk: "), v.walk.join(" → ")));
  body.append(el("p", { class: "muted" }, `${v.objective} extra table(s), walk length ${v.path_length}, ${Math.round(v.solve_ms)} ms; ${v.n_bound || ""}`));
  if (v.explanation) body.append(el("p", { class: v.status === "infeasible" ? "failure" : "" }, v.explanation));
  for (const a of v.ambiguities || []) warn([`${a.left}–${a.right}: ${a.candidates.length} relationships, chose ${a.chosen} (${a.reason})`]);
  if (v.view_sql) body.append(el("h3", {}, "View SQL"), pre(v.view_sql));
}

// The execution vote (--exec-vote K): every sampled candidate, its guard
// and run outcome, the result it voted with, and the one chosen.
function voteSection(v) {
  const outcome = (c) => {
    if (c.same_as != null) return `same SQL as #${c.same_as}`;
    if (!(c.validation || {}).ok) return "guard rejected" + ((c.validation || {}).error ? ": " + c.validation.error : "");
    if (c.execution && !c.execution.ok) return "failed: " + c.execution.error;
    return c.execution ? `${c.execution.row_count} row(s)` : "not run";
  };
  const rows = (v.candidates || []).map((c, i) => [i, c.extracted || "(no SQL)", outcome(c), c.result_hash || "–", c.votes,
    c.chosen ? "chosen" : ""]);
  const chosen = v.chosen == null ? "none chosen: QueryView ran as without the vote" : `candidate #${v.chosen} chosen`;
  const n = (v.candidates || []).length;
  const count = `${n} of ${v.k} candidate(s)`;
  return el("div", { class: "step", id: "vote-section" },
    el("h3", {}, `Execution vote: ${count}, ${(v.results || []).length} distinct result(s); ${chosen}`),
    table(["#", "SQL", "outcome", "result", "votes", ""], rows, (i) => (v.candidates[i].votes ? "" : "dropped")));
}

// The plan form (--query-form plan|auto): the model's reading of the
// question as a table (what is selected, filtered, grouped, ordered), the SQL
// lucy compiled from it, and why it was not the answer (auto then fell back
// to free SQL).
function planSection(p) {
  const rows = (p.table || []).map((l) => [l.part, l.text]);
  return el("div", { class: "step", id: "plan-section" },
    el("h3", {}, `Query plan (--query-form ${p.form})`),
    rows.length ? table(["part", "what"], rows) : el("p", { class: "muted" }, "no plan could be read from the answer"),
    (p.tidied || []).length ? el("ul", { id: "plan-tidied" }, ...p.tidied.map((t) => el("li", { class: "muted" }, "tidied: " + t))) : null,
    p.compiled ? el("div", {}, el("b", {}, "Compiled to:"), pre(p.compiled)) : null,
    p.error ? el("p", { class: p.fell_back ? "muted" : "failure" }, "Not used: " + p.error) : null,
    p.fell_back ? el("p", { id: "plan-fallback" }, "Fell back to free SQL (auto): the SQL attempts follow.") : null);
}

// The verified queries an ask retrieved (the trace's `examples`).
function showExamples(ex) {
  if (!ex || !(ex.used || []).length) return;
  show("phase-query", true);
  const rows = ex.used.map((u) => [u.line, u.question, u.score.toFixed(2), u.in_prompt ? "in the prompt" : "left out: " + (u.left_out || "")]);
  $("query-body").append(el("div", { class: "step", id: "examples-used" },
    el("h3", {}, `Verified examples (${ex.used.length} of ${ex.k} asked for, from ${ex.file})`),
    table(["line", "question", "similarity", "use"], rows, (i) => (ex.used[i].in_prompt ? "" : "dropped"))));
}

function showQuery(qt) {
  if (!qt) return;
  show("phase-query", true);
  const body = $("query-body");
  body.replaceChildren();
  badge("query-badge", qt.sql ? (qt.repaired ? "accepted after repair" : "accepted") : "rejected", qt.sql ? "ok" : "fail");
  const hints = qt.hints || [];
  if (hints.length) body.append(el("h3", {}, "Name hints in the prompt"), el("ul", { id: "name-hints" }, ...hints.map((h) => el("li", {}, h))));
  if (qt.plan) body.append(planSection(qt.plan));
  if (qt.sql) body.append(el("h3", {}, "Final SQL"), el("pre", { id: "final-sql" }, qt.sql));
  for (const a of qt.attempts || []) {
    const val = a.validation || {};
    const line = `round ${a.round}: SQL found by ${a.extraction}; guard ${val.ok ? "accepted" : "rejected" + (val.error ? ": " + val.error : "")}`;
    body.append(el("p", { class: val.ok ? "muted" : "failure" }, line));
    if (!val.ok && a.extracted) body.append(pre(a.extracted));
    if (a.execution && !a.execution.ok) body.append(el("p", { class: "failure" }, "execution: " + a.execution.error));
  }
  if (qt.exec_vote) body.append(voteSection(qt.exec_vote));
}

function showRows(rows, total) {
  if (!rows) return;
  show("phase-rows", true);
  const n = total == null ? rows.rows.length : total;
  const more = n > rows.rows.length ? `, first ${rows.rows.length} shown` : rows.truncated ? " (more not fetched: limit)" : "";
  badge("rows-badge", `${n} row(s)${more}`, "ok");
  $("rows-body").replaceChildren(table(rows.columns, rows.rows));
}

function showFailure(f) {
  if (!f) return;
  status(`${f.phase} failed (${f.kind}): ${f.message}`, true);
}

function showResult(res) {
  if (res.rows) showRows(res.rows);
  if (res.failure) showFailure(res.failure);
  else status(`done: ${res.rows ? res.rows.rows.length + " row(s)" : res.stopped_after ? "stopped after " + res.stopped_after : "SQL ready"} · trace ${res.trace_id}`);
}

// ---------------------------------------------------------------- ask

function onEvent(name, data) {
  if (name === "progress") onProgress(data);
  else if (name === "match_tables") { showMatch(data.trace); status("MatchTables done; solving the join path…"); }
  else if (name === "generate_view") { showView(data.trace, data.svg); status("GenerateView done; writing SQL over the view…"); }
  else if (name === "query_view") { showQuery(data.trace); showExamples(data.examples); status("QueryView done"); }
  else if (name === "result") showResult(data);
  else if (name === "error") status(data.error, true);
}

async function readEvents(r) {
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const chunk = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let name = "message";
      const data = [];
      for (const line of chunk.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}

async function ask(ev) {
  ev.preventDefault();
  reset();
  const tables = $("tables").value.split(",").map((s) => s.trim()).filter(Boolean);
  const body = {
    model: $("model").value,
    question: $("question").value,
    samples: Number($("samples").value),
    min_votes: Number($("min-votes").value),
    execute: $("execute").checked,
    svg: true,
  };
  if (tables.length) body.tables = tables;
  const k = Number($("exec-vote").value);
  if (k > 1) body.exec_vote = k;
  if ($("stop-after").value) body.stop_after = $("stop-after").value;
  $("go").disabled = true;
  status("MatchTables: asking the LLM…");
  try {
    const r = await api("/v1/ask", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
      body: JSON.stringify(body),
    });
    if (!r.ok) { status(await errorText(r), true); return; }
    await readEvents(r);
  } catch (e) {
    status(e.message, true);
  } finally {
    $("go").disabled = false;
  }
}

// ---------------------------------------------------------------- traces

async function openTrace(file) {
  reset();
  let trace;
  try { trace = JSON.parse(await file.text()); } catch (e) { status(`${file.name}: not JSON (${e.message})`, true); return; }
  if (!trace || typeof trace !== "object" || !("question" in trace)) { status(`${file.name}: not a lucy trace (write one with lucy ask --trace FILE)`, true); return; }
  status(`trace ${file.name}: “${trace.question}” on ${trace.model}${trace.llm ? " with " + trace.llm : ""}`);
  $("question").value = trace.question || "";
  showMatch(trace.match_tables);
  let svg = null;
  if (trace.generate_view && trace.generate_view.result) {
    try {
      const r = await api("/v1/traces/svg", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(trace) });
      if (r.ok) svg = await r.text(); else warn([`picture: ${await errorText(r)}`]);
    } catch (e) { warn([`picture: ${e.message}`]); }
  }
  showView(trace.generate_view, svg);
  showQuery(trace.query_view);
  showExamples(trace.examples);
  const attempts = (trace.query_view && trace.query_view.attempts) || [];
  const ex = attempts.map((a) => a.execution).filter((x) => x && x.ok).pop();
  if (ex) showRows({ columns: ex.columns, rows: ex.sample_rows, truncated: ex.truncated }, ex.row_count);
  if (trace.failure) showFailure(trace.failure);
}

function setupDrop() {
  const d = $("drop");
  d.addEventListener("dragover", (e) => { e.preventDefault(); d.classList.add("over"); });
  d.addEventListener("dragleave", () => d.classList.remove("over"));
  d.addEventListener("drop", (e) => {
    e.preventDefault();
    d.classList.remove("over");
    const f = e.dataTransfer.files[0];
    if (f) openTrace(f);
  });
  $("trace-file").addEventListener("change", (e) => { const f = e.target.files[0]; if (f) openTrace(f); });
}

// ---------------------------------------------------------------- start

// The selected model's tables: where each lives in the warehouse
// (`relation`) and where it came from (`origin`, e.g. a dbt model or test),
// so a person can see what an import made of their project.
async function modelTables() {
  const name = $("model").value;
  show("model-tables", false);
  if (!name) return;
  const r = await api("/v1/models/" + encodeURIComponent(name));
  if (!r.ok || $("model").value !== name) return;
  const tables = ((await r.json()).model || {}).tables || [];
  const rows = tables.map((t) => [t.name, (t.relation || []).join(".") || "–", t.origin || "–", (t.description || "").length > 160 ? t.description.slice(0, 160) + "…" : t.description || ""]);
  $("model-tables").querySelector("summary").textContent = `${tables.length} table(s): where they live and come from`;
  $("model-tables-body").replaceChildren(table(["table", "relation", "origin", "description"], rows));
  show("model-tables", true);
}

async function loadModels() {
  try {
    const h = await (await fetch("/healthz")).json();
    $("health").textContent = `lucy ${h.version} · ${h.models} model(s) · LLM ${h.llm ? "configured" : "not configured"}`;
    const r = await api("/v1/models");
    if (!r.ok) { status(await errorText(r), true); return; }
    models = (await r.json()).models;
    $("model").replaceChildren(...models.map((m) => el("option", { value: m.name }, m.name)));
    const info = () => {
      const m = models.find((x) => x.name === $("model").value);
      $("model-info").textContent = m ? `${m.tables} tables, ${m.patterns} patterns${m.database ? ", database attached" : ""}${m.description ? " — " + (m.description.length > 140 ? m.description.slice(0, 140) + "…" : m.description) : ""}` : "";
      $("execute").disabled = !(m && m.database);
    };
    $("model").addEventListener("change", () => { info(); modelTables(); });
    info();
    modelTables();
  } catch (e) {
    status(e.message, true);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("token").value = token;
  $("token").addEventListener("change", () => { token = $("token").value.trim(); sessionStorage.setItem("lucy-token", token); loadModels(); });
  $("ask-form").addEventListener("submit", ask);
  setupDrop();
  loadModels();
});
