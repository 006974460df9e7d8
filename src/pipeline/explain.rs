//! `lucy explain`: a trace as a readable per-phase report, and a short JSON
//! summary of it.

use std::fmt::Write;

use serde_json::json;

use crate::types::trace::{
    ExamplesTrace, ExecVote, InnerBranchTrace, ListStep, LookupFilterTrace, MatchTrace, NarrowTrace, PhaseCost,
    PlanTrace, QueryTrace, Rerun, Trace, UnjoinableTrace, ViewTrace,
};

/// The whole report.
pub fn render(t: &Trace) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "question: {}", t.question);
    if let Some(e) = &t.evidence {
        let _ = writeln!(s, "evidence: {e}");
    }
    let llm = t.llm.as_deref().unwrap_or("none");
    let _ = writeln!(s, "model {} · method {} · LLM {} · {:.0} ms in all", t.model, t.method, llm, t.total_ms);
    let _ = writeln!(s, "{}", verdict(t));
    if let Some(e) = &t.examples {
        examples_section(&mut s, e);
    }
    if let Some(m) = &t.match_tables {
        match_section(&mut s, m, t.view_shows_every_column());
    }
    if let Some(u) = &t.unjoinable {
        unjoinable_section(&mut s, u);
    }
    if let Some(v) = &t.generate_view {
        view_section(&mut s, v);
    }
    if let Some(q) = &t.query_view {
        let title = match t.method.as_str() {
            "direct" => "Direct SQL (PROMPTB baseline)",
            "direct+check" => "Direct SQL (PROMPTB baseline, lucy check as the repair message)",
            "fewshot" => "Few-shot SQL (DynVS: the retrieved examples, the schema, one call)",
            "crush" => "SQL over the tables CRUSH chose (CRUSH4SQL)",
            "rasl" => "SQL over the tables RASL ranked",
            "ta-sql" => "SQL from TA-SQL's symbolic representation over the linked tables",
            _ => "Phase 3: QueryView",
        };
        query_section(&mut s, title, q);
    }
    if let Some(n) = &t.narrowed {
        narrowed_section(&mut s, n);
    }
    if let Some(b) = &t.inner_branches {
        inner_branches_section(&mut s, b);
    }
    if let Some(l) = &t.lookup_filters {
        lookup_filters_section(&mut s, l);
    }
    s
}

/// `--drop-unjoinable`: the parts, the one kept and why.
fn unjoinable_section(s: &mut String, u: &UnjoinableTrace) {
    let why = u.first.result.as_ref().and_then(|r| r.explanation.as_deref()).unwrap_or("infeasible");
    let _ = writeln!(s, "\n== Phase 2: GenerateView over every relevant table: infeasible ({why})");
    let parts: Vec<String> = u.parts.iter().map(|p| format!("[{}]", p.join(", "))).collect();
    let _ = writeln!(s, "parts no relationship joins: {}", parts.join(" "));
    let _ = writeln!(s, "kept {} ({}); dropped {}", u.kept.join(", "), u.why, list_or_none(&u.dropped));
}

/// `--narrow-view`: what was dropped and whether the narrower view's rows
/// are the answer.
fn narrowed_section(s: &mut String, n: &NarrowTrace) {
    let _ = writeln!(s, "\n== Narrowed view (--narrow-view): without {}", list_or_none(&n.dropped));
    rerun_line(s, &n.rerun);
}

/// Whether the same SQL's rows over a view solved again are the answer.
fn rerun_line(s: &mut String, r: &Rerun) {
    let rows = r.rows.map(|n| format!("{n} row(s)")).unwrap_or_else(|| "no rows".into());
    let _ = match (r.used, &r.note) {
        (true, _) => writeln!(s, "the same SQL over it: {rows}, the answer"),
        (false, Some(note)) => writeln!(s, "not used: {note}"),
        (false, None) => writeln!(s, "not used"),
    };
}

/// `--inner-branches`: the branch INNER-joined and whether the SQL's rows
/// over that view are the answer.
fn inner_branches_section(s: &mut String, b: &InnerBranchTrace) {
    let _ = writeln!(
        s,
        "\n== Inner branches (--inner-branches): {} by INNER JOIN instead of LEFT JOIN",
        b.tables.join(", ")
    );
    rerun_line(s, &b.rerun);
}

/// `--lookup-filters`: the filters, the lookup values the question named,
/// and whether the SQL's rows over the filtered view are the answer.
fn lookup_filters_section(s: &mut String, l: &LookupFilterTrace) {
    let _ = writeln!(s, "\n== Lookup filters (--lookup-filters)");
    for (f, why) in l.filters.iter().zip(&l.because) {
        let cond = f.condition(&f.column.to_string()).unwrap_or_else(|| f.column.to_string());
        let _ = writeln!(s, "{cond}: the question names {why}");
    }
    rerun_line(s, &l.rerun);
}

/// One line: how the run ended.
pub fn verdict(t: &Trace) -> String {
    if let Some(f) = &t.failure {
        return format!("RESULT: failed in {} ({}): {}", f.phase, f.kind, f.message);
    }
    if let Some(stop) = &t.stopped_after {
        return format!("RESULT: stopped after {stop}, as asked");
    }
    let rows = t
        .query_view
        .as_ref()
        .and_then(|q| q.attempts.last())
        .and_then(|a| a.execution.as_ref())
        .map(|e| format!(", {} row(s){}", e.row_count, if e.truncated { " (truncated)" } else { "" }))
        .unwrap_or_default();
    let repaired = t.query_view.as_ref().is_some_and(|q| q.repaired);
    format!("RESULT: ok — SQL accepted{}{rows}", if repaired { " after the repair round" } else { "" })
}

/// The verified examples retrieved for the question and how each was used.
fn examples_section(s: &mut String, e: &ExamplesTrace) {
    let _ = writeln!(
        s,
        "\n== Verified examples ({} of {} asked for, from {}, by {}) ==",
        e.used.len(),
        e.k,
        e.file,
        e.embedder
    );
    let what = match e.tables_mode.as_str() {
        "add" => "added to MatchTables' answer",
        "offer" => "offered to MatchTables",
        _ => "not used",
    };
    let _ = writeln!(s, "their tables ({}): {what}: {}", e.tables_mode, list_or_none(&e.tables));
    for u in &e.used {
        let _ = writeln!(s, "- line {} (similarity {:.3}): {}", u.line, u.score, u.question);
        match (&u.in_prompt, &u.left_out) {
            (Some(sql), _) => {
                let _ = writeln!(s, "  in the QueryView prompt as:\n{}", indent(sql));
            }
            (None, Some(why)) => {
                let _ = writeln!(s, "  left out of the QueryView prompt: {why}");
            }
            (None, None) => {
                let _ = writeln!(s, "  not shown (the run ended before QueryView)");
            }
        }
    }
}

fn cost(c: &PhaseCost) -> String {
    if c.llm_calls == 0 {
        return format!("{:.0} ms", c.ms);
    }
    let local = if c.prefill_tokens + c.prompt_reused + c.decode_tokens > 0 {
        format!(
            " ({} prompt tokens evaluated, {} reused from the prefix cache; prefill {} tok/s, decode {} tok/s)",
            c.prefill_tokens, c.prompt_reused, c.prefill_tok_s, c.decode_tok_s
        )
    } else {
        String::new()
    };
    format!(
        "{} LLM call(s), {} request(s), {} prompt + {} completion tokens{local}, {:.0} ms",
        c.llm_calls, c.requests, c.prompt_tokens, c.completion_tokens, c.ms
    )
}

/// Phase 1's section; `every_column`: the view showed every column of its
/// tables (since session 32 no attribute prompt is asked then).
fn match_section(s: &mut String, m: &MatchTrace, every_column: bool) {
    let _ = writeln!(s, "\n== Phase 1: MatchTables ({}; {})", m.source, cost(&m.cost));
    if m.source == "given" {
        let _ = writeln!(s, "skipped: relevant tables and attributes were given (--tables/--attrs)");
    } else {
        let _ = writeln!(s, "core tables offered: {}", m.core_tables.join(", "));
        if let Some(r) = &m.restricted_to {
            let _ = writeln!(s, "prefilter restricted the core tables to: {}", r.join(", "));
        }
        for step in &m.steps {
            step_section(s, step);
        }
    }
    for w in &m.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    let _ = writeln!(s, "relevant tables: {}", list_or_none(&m.tables));
    let attrs: Vec<String> = m.attributes.iter().map(|a| a.to_string()).collect();
    if every_column && m.source != "given" {
        let _ = writeln!(
            s,
            "relevant attributes: every column of these tables (the view shows them all){}",
            if attrs.is_empty() { String::new() } else { format!("; named by MatchTables: {}", attrs.join(", ")) }
        );
    } else {
        let _ = writeln!(s, "relevant attributes: {}", list_or_none(&attrs));
    }
}

fn step_section(s: &mut String, st: &ListStep) {
    let subject = st.subject.as_deref().map(|x| format!(" {x}")).unwrap_or_default();
    let mode = if st.call.grammar_sent {
        "grammar"
    } else if !st.call.schema_sent {
        "free text"
    } else if st.call.structured {
        "structured output"
    } else {
        "free text, schema not honoured by the server"
    };
    let asked = st.call.choices.len();
    let _ = writeln!(s, "- [{}{}] {} sample(s), {}", st.prompt, subject, asked, mode);
    if let Some(e) = st.call.error.as_ref() {
        let _ = writeln!(s, "    LLM error: {e}");
        return;
    }
    let n = asked.max(1);
    let votes: Vec<String> = st
        .votes
        .iter()
        .map(|v| format!("{} {}/{}{}", v.item, v.votes, n, if v.kept { "" } else { " (dropped)" }))
        .collect();
    let _ = writeln!(s, "    votes: {}", if votes.is_empty() { "none".to_string() } else { votes.join(", ") });
    for r in &st.remaps {
        let score = r.score.map(|x| format!(", {x:.2}")).unwrap_or_default();
        let _ = writeln!(s, "    remapped `{}` -> {} ({}{score})", r.from, r.to, r.how);
    }
    for w in &st.warnings {
        let _ = writeln!(s, "    warning: {w}");
    }
}

fn view_section(s: &mut String, v: &ViewTrace) {
    let _ = writeln!(s, "\n== Phase 2: GenerateView ({})", cost(&v.cost));
    let attrs: Vec<String> = v.request.attributes.iter().map(|a| a.to_string()).collect();
    let _ = writeln!(s, "input: tables {}; attributes {}", list_or_none(&v.request.tables), list_or_none(&attrs));
    if let Some(e) = &v.error {
        let _ = writeln!(s, "error: {e}");
    }
    let Some(r) = &v.result else { return };
    let model = match r.model_size.variables {
        0 if r.walk.is_empty() => "no MILP".to_string(),
        0 => "no MILP (the exact search proved the walk optimal)".to_string(),
        v => format!("MILP {v} variables / {} constraints", r.model_size.constraints),
    };
    let _ = writeln!(
        s,
        "status {} · objective {} · path length {} · solver {:.1} ms · {model}",
        r.status.as_str(),
        r.objective,
        r.path_length,
        r.solve_ms,
    );
    if !r.n_bound.is_empty() {
        let _ = writeln!(s, "path bound: {}", r.n_bound);
    }
    if !r.relevant.is_empty() {
        let _ = writeln!(s, "solved for: {}", r.relevant.join(", "));
    }
    if !r.walk.is_empty() {
        let _ = writeln!(s, "walk: {}", r.walk.join(" -> "));
    }
    // The view starts from its first instance; named apart from its table
    // (a role instance), it is said.
    if let Some(i) =
        r.tables.first().and_then(|t| r.grain.instance(t)).filter(|i| !i.table.eq_ignore_ascii_case(&i.instance))
    {
        let _ = writeln!(s, "  from {} (an instance of {})", i.instance, i.table);
    }
    for j in &r.joins {
        let on: Vec<String> = j.on.iter().map(|p| format!("{} = {}", p[0], p[1])).collect();
        // A second instance of a table (a role, a subtype, a revisit) is
        // named by its alias: say which table it is.
        let of = r
            .grain
            .instance(&j.right)
            .filter(|i| !i.table.eq_ignore_ascii_case(&j.right))
            .map(|i| format!(" (an instance of {})", i.table));
        let _ = writeln!(s, "  {:?} join {}{} on {}", j.kind, j.right, of.unwrap_or_default(), on.join(" AND "));
    }
    for a in &r.ambiguities {
        let _ = writeln!(
            s,
            "ambiguity: {} – {}: chose {} among {} ({})",
            a.left,
            a.right,
            a.chosen,
            a.candidates.join(", "),
            a.reason
        );
    }
    for line in crate::view::grain::describe(&r.grain) {
        let _ = writeln!(s, "{line}");
    }
    if let Some(e) = &r.explanation {
        let _ = writeln!(s, "explanation: {e}");
    }
    if !r.view_sql.is_empty() {
        let _ = writeln!(s, "view:\n{}", indent(&r.view_sql));
    }
}

fn query_section(s: &mut String, title: &str, q: &QueryTrace) {
    let _ = writeln!(s, "\n== {title} (prompt {}; {})", q.prompt, cost(&q.cost));
    let voted = q.exec_vote.as_ref().and_then(|v| v.chosen);
    if !q.hints.is_empty() {
        let _ = writeln!(s, "- name hints shown (--name-hints):");
        for h in &q.hints {
            let _ = writeln!(s, "    {h}");
        }
    }
    if let Some(c) = &q.compacted {
        let _ = writeln!(s, "- asked again with column descriptions cut short; the first prompt failed: {c}");
    }
    if let Some(p) = &q.plan {
        plan_section(s, p);
    }
    if let Some(v) = &q.exec_vote {
        vote_section(s, v);
    }
    for (i, a) in q.attempts.iter().enumerate() {
        let label = match (a.round, a.extraction.as_str(), voted) {
            (_, "given", _) => "given SQL (--sql, no LLM)".to_string(),
            (_, "plan", _) => "the plan's SQL".to_string(),
            (0, _, Some(c)) if i == 0 => format!("answer chosen by the execution vote (candidate #{c})"),
            (0, _, _) => "answer".to_string(),
            _ => "repair round".to_string(),
        };
        if let Some(e) = &a.call.error {
            let _ = writeln!(s, "- {label}: LLM error: {e}");
            continue;
        }
        match &a.extracted {
            Some(sql) if a.extraction == "given" => {
                let _ = writeln!(s, "- {label}:\n{}", indent(sql));
            }
            Some(sql) => {
                let _ = writeln!(s, "- {label} ({}):\n{}", a.extraction, indent(sql));
            }
            None => {
                let _ = writeln!(
                    s,
                    "- {label}: no SQL found in {:?}",
                    a.call.choices.first().map(|c| short(c)).unwrap_or_default()
                );
            }
        }
        match (&a.validation.ok, &a.validation.error) {
            (true, _) => {
                let _ = writeln!(
                    s,
                    "    guard: ok (reads {}; columns {})",
                    list_or_none(&a.validation.relations),
                    list_or_none(&a.validation.columns)
                );
            }
            (false, Some(e)) => {
                let _ = writeln!(s, "    guard: rejected: {e}");
            }
            (false, None) => {}
        }
        if let Some(c) = &a.check {
            if c.is_clean() {
                let _ = writeln!(s, "    lucy check: no findings");
            }
            for f in &c.findings {
                let _ = writeln!(s, "    lucy check: {f}");
            }
        }
        if let Some(f) = &a.fanout {
            for x in &f.findings {
                let _ = writeln!(s, "    fan-out ({}): {}", f.mode.as_str(), x.message);
            }
            for x in &f.skipped {
                let _ = writeln!(s, "    fan-out: not checked: {x}");
            }
            if let Some(rw) = &f.rewritten {
                let _ = writeln!(s, "    rewritten to:\n{}", indent(&indent(rw)));
            }
        }
        if let Some(l) = &a.literals {
            let _ = writeln!(s, "    {} (--entity-literals on)", l.describe());
        }
        if let Some(v) = &a.values {
            let _ = writeln!(s, "    {} (--value-literals on)", v.describe());
        }
        if let Some(g) = &a.grouped {
            let _ = writeln!(s, "    {} (--by-groups on)", g.describe());
        }
        if let Some(c) = &a.counted {
            let _ = writeln!(s, "    {} (--count-names on)", c.describe());
        }
        if let Some(d) = &a.distinct {
            let _ = writeln!(s, "    {} (--distinct auto)", d.describe());
        }
        if let Some(x) = &a.execution {
            if x.ok {
                let _ = writeln!(
                    s,
                    "    executed: {} row(s), columns {} ({:.0} ms)",
                    x.row_count,
                    x.columns.join(", "),
                    x.ms
                );
                for r in x.sample_rows.iter().take(5) {
                    let cells: Vec<String> = r.iter().map(|v| v.to_string()).collect();
                    let _ = writeln!(s, "      {}", cells.join(" | "));
                }
            } else {
                let _ = writeln!(s, "    execution failed: {}", x.error.as_deref().unwrap_or("unknown error"));
            }
        }
    }
    match &q.sql {
        Some(sql) => {
            let _ = writeln!(s, "final SQL:\n{}", indent(sql));
        }
        None => {
            let _ = writeln!(s, "no SQL accepted");
        }
    }
}

/// The execution vote (`--exec-vote K`): every candidate, its result and
/// votes, and the choice.
/// The plan form (`--query-form plan|auto`): the plan as a table, the SQL
/// it compiled to, and why it was not the answer.
fn plan_section(s: &mut String, p: &PlanTrace) {
    let _ = writeln!(s, "- query plan (--query-form {}):", p.form);
    let width = p.table.iter().map(|l| l.part.len()).max().unwrap_or(0);
    for l in &p.table {
        let _ = writeln!(s, "    {:width$}  {}", l.part, l.text);
    }
    for t in &p.tidied {
        let _ = writeln!(s, "  tidied: {t}");
    }
    if let Some(c) = &p.compiled {
        let _ = writeln!(s, "  compiled to: {c}");
    }
    if let Some(e) = &p.error {
        let _ = writeln!(s, "  not used: {e}");
    }
    if p.fell_back {
        let _ = writeln!(s, "  fell back to free SQL (--query-form auto); the SQL attempts follow");
    }
}

fn vote_section(s: &mut String, v: &ExecVote) {
    let ran = v.candidates.iter().filter(|c| c.result_hash.is_some()).count();
    let verdict = match v.chosen {
        Some(c) => format!("chose candidate #{c} ({} of {ran} vote(s))", v.candidates.get(c).map_or(0, |x| x.votes)),
        None => "no candidate passed the guard and the execution; QueryView ran as without the vote".to_string(),
    };
    let _ = writeln!(
        s,
        "- execution vote (--exec-vote {}): {} answer(s) sampled, {ran} ran; {verdict}",
        v.k,
        v.candidates.len()
    );
    if let Some(e) = v.call.as_ref().and_then(|c| c.error.as_ref()) {
        let _ = writeln!(s, "    LLM error: {e}");
    }
    for (i, c) in v.candidates.iter().enumerate() {
        let chosen = if c.chosen { " (chosen)" } else { "" };
        let what = match (&c.result_hash, &c.execution, &c.validation.error) {
            (Some(h), Some(x), _) => format!(
                "{} row(s){}, result {h}, {} vote(s)",
                x.row_count,
                if x.truncated { " (truncated)" } else { "" },
                c.votes
            ),
            (None, Some(x), _) if !x.ok => {
                format!("execution failed, no vote: {}", x.error.as_deref().unwrap_or("unknown error"))
            }
            (None, _, Some(e)) => format!("rejected, no vote: {e}"),
            _ if c.extracted.is_none() => "no SQL found, no vote".to_string(),
            _ => "no vote".to_string(),
        };
        let same = c.same_as.map(|j| format!(" (the SQL of #{j}, not run again)")).unwrap_or_default();
        let _ = writeln!(s, "  #{i}{chosen}: {what}{same}");
        if let (Some(sql), None) = (&c.extracted, c.same_as) {
            let _ = writeln!(s, "{}", indent(&indent(sql)));
        }
    }
}

/// A compact machine-readable summary (`lucy explain --json`).
pub fn summary(t: &Trace) -> serde_json::Value {
    let steps: Vec<serde_json::Value> = t
        .match_tables
        .iter()
        .flat_map(|m| m.steps.iter())
        .map(|st| json!({"prompt": st.prompt, "subject": st.subject, "votes": st.votes, "remaps": st.remaps, "warnings": st.warnings, "structured": st.call.structured}))
        .collect();
    let costs: serde_json::Map<String, serde_json::Value> = t
        .phase_costs()
        .into_iter()
        .map(|(k, v)| (k.to_string(), serde_json::to_value(v).unwrap_or_default()))
        .collect();
    let mut v = json!({
        "question": t.question,
        "method": t.method,
        "verdict": verdict(t),
        "failure": t.failure,
        "stopped_after": t.stopped_after,
        "tables": t.match_tables.as_ref().map(|m| m.tables.clone()),
        "attributes": t.match_tables.as_ref().map(|m| m.attributes.clone()),
        "match_steps": steps,
        "view_status": t.generate_view.as_ref().and_then(|v| v.result.as_ref()).map(|r| r.status),
        "view_sql": t.generate_view.as_ref().and_then(|v| v.result.as_ref()).map(|r| r.view_sql.clone()),
        "sql": t.query_view.as_ref().and_then(|q| q.sql.clone()),
        "repaired": t.query_view.as_ref().map(|q| q.repaired),
        "rows": t.query_view.as_ref().and_then(|q| q.attempts.last()).and_then(|a| a.execution.as_ref()).map(|e| e.row_count),
        "costs": costs,
        "total_ms": t.total_ms,
    });
    if let Some(p) = t.query_view.as_ref().and_then(|q| q.plan.as_ref()) {
        v["plan"] = json!({"form": p.form, "table": p.table, "tidied": p.tidied, "compiled": p.compiled, "error": p.error, "fell_back": p.fell_back});
    }
    if let Some(e) = &t.examples {
        v["examples"] = e
            .used
            .iter()
            .map(|u| json!({"line": u.line, "question": u.question, "score": u.score, "in_prompt": u.in_prompt.is_some(), "left_out": u.left_out}))
            .collect();
    }
    if let Some(x) = t.query_view.as_ref().and_then(|q| q.exec_vote.as_ref()) {
        v["exec_vote"] = json!({"k": x.k, "chosen": x.chosen, "results": x.results});
    }
    v
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

fn indent(text: &str) -> String {
    text.trim().lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

fn short(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    one.chars().take(100).collect()
}
