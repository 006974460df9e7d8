//! QueryView's plan form (issue 46, `--query-form plan|sql|auto`): the
//! model answers a small typed query plan ([`ast::Plan`], JSON) decoded
//! under a grammar built from the view ([`grammar`]: only the view's
//! columns, SUM/AVG only over its measures, typed and offered literals,
//! every list and string bounded), and lucy compiles it to SQL in the
//! view's dialect ([`compile`]). The SQL then goes through the same guard,
//! rewrites (fan-out, DISTINCT, counted, grouping, literals, values) and
//! execution as a model's SQL (`query::check_and_run`).
//!
//! - `sql`: QueryView before the plan, free SQL under its grammar.
//! - `plan`: the plan only; a plan that does not compile, or whose SQL the
//!   guard or the run refuses, fails the phase (no repair round).
//! - `auto` (the default): the plan first — or free SQL at once when the question asks
//!   for arithmetic ([`Cues::arithmetic`]); free SQL (the `sql` form, with
//!   its repair round) when the model answers `needs_sql`, the plan does not parse or
//!   compile, or its SQL is refused; when the plan selects fewer things
//!   than the question's output sentence lists ("Output the policy number,
//!   the number of periods and the average premium."); when the plan
//!   holds none of the numbers the question compares a count with ("more
//!   than one orchestra": [`cues::compared_counts`]); and when the plan's
//!   SQL returns no row (the SQL's rows win when it has some; otherwise the
//!   plan's answer stands). The trace's `query_view.plan` says which, and
//!   why.

pub mod ast;
pub mod compile;
pub mod cues;
pub mod describe;
pub mod grammar;
pub mod tidy;
pub mod view;
pub mod words;

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::llm::traced;
use crate::llm::{ChatModel, ChatRequest, Message};
use crate::prompts::Prompts;
use crate::query::{SqlOutcome, SqlTask};
use crate::types::trace::{PlanTrace, QueryTrace, SqlAttempt, Validation};
use crate::types::ViewResult;

pub use ast::{parse_answer, Plan, PlanKind};
pub use compile::{compile, PlanError};
pub use cues::Cues;
pub use view::{ColumnClass, ColumnValues, PlanColumn, PlanView};

/// Which form QueryView's answer takes (`--query-form`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QueryForm {
    /// A query plan, compiled by lucy.
    Plan,
    /// Free SQL under QueryView's grammar (the form the recordings before
    /// session 28 hold).
    Sql,
    /// The plan first, free SQL when the plan cannot answer (the default
    /// since session 30).
    #[default]
    Auto,
}

impl QueryForm {
    /// The flag's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryForm::Plan => "plan",
            QueryForm::Sql => "sql",
            QueryForm::Auto => "auto",
        }
    }
}

/// Cap on a plan answer, in tokens: the grammar bounds a plan well below
/// it (8 items, 3 levels of 8 conditions, strings of 200 characters), and a
/// plan of DDO's or ACME's gold queries takes under 150.
pub const PLAN_MAX_TOKENS: u32 = 400;

/// QueryView's plan settings (`--query-form`; `--set query.form=…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlanSettings {
    /// `plan`, `sql` or `auto` (the default).
    pub form: QueryForm,
    /// Cap on the plan answer in tokens (`--llm-max-tokens` wins).
    pub max_tokens: u32,
}

impl Default for PlanSettings {
    fn default() -> Self {
        PlanSettings { form: QueryForm::Auto, max_tokens: PLAN_MAX_TOKENS }
    }
}

impl PlanSettings {
    /// Whether these are the defaults (serde's `skip_serializing_if`).
    pub fn is_default(&self) -> bool {
        *self == PlanSettings::default()
    }
}

/// What a plan call needs besides the SQL task.
#[derive(Debug, Clone)]
pub struct PlanTask {
    pub form: QueryForm,
    /// The user's question, and the evidence after it when given (the
    /// plan's tidying reads their words).
    pub question: String,
    /// The rendered `query_plan` prompt.
    pub prompt: String,
    /// The view the plan is written over.
    pub view: PlanView,
    /// [`grammar::plan_grammar`] of `view`.
    pub grammar: String,
    pub temperature: f64,
    pub max_tokens: u32,
    /// Verified queries QueryView's SQL prompt shows over this view
    /// (`--examples`): in `auto`, free SQL follows them, no plan asked.
    pub examples_shown: usize,
}

/// What the plan prompt shows beyond the view and the question (the same
/// lines as QueryView's SQL prompt).
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanPromptExtras<'a> {
    pub evidence: Option<&'a str>,
    /// `ALIAS: 'value'` lines (`link::values::view_notes`).
    pub values: &'a [String],
    /// `"phrase": ALIAS` lines (`link::hints`).
    pub hints: &'a [String],
    /// Column descriptions cut to this many characters.
    pub description_chars: Option<usize>,
}

/// The longest instance note the plan prompt shows (its first sentence,
/// cut at a word).
const INSTANCE_NOTE_CHARS: usize = 120;

/// An instance's note as the plan prompt's table line shows it: its
/// [first sentence](first_sentence), at most [`INSTANCE_NOTE_CHARS`].
fn instance_note(note: &str) -> String {
    crate::query::cut_description(first_sentence(note), INSTANCE_NOTE_CHARS)
}

/// `text` up to its first sentence's end: a period before a space and a
/// capital, not that of `e.g.` or `i.e.` (the plan prompt shows a column's
/// or an instance's first sentence: what it is, not the curator's notes).
fn first_sentence(note: &str) -> &str {
    let b = note.as_bytes();
    let end = (1..b.len().saturating_sub(2))
        .find(|&i| {
            b[i] == b'.'
                && b[i + 1] == b' '
                && b[i + 2].is_ascii_uppercase()
                && !note[..i].ends_with("e.g")
                && !note[..i].ends_with("i.e")
        })
        .map_or(note.len(), |i| i + 1);
    &note[..end]
}

/// Render the `query_plan` prompt for `view` (described by `pv`).
pub fn plan_prompt(
    prompts: &Prompts,
    view: &ViewResult,
    pv: &PlanView,
    question: &str,
    extras: PlanPromptExtras<'_>,
) -> Result<String> {
    let columns: Vec<serde_json::Value> = view
        .columns
        .iter()
        .map(|c| {
            let pc = pv.column(&c.alias);
            let kind = match pc.map(|p| p.class) {
                Some(ColumnClass::Number) => "number",
                Some(ColumnClass::Date) => "date",
                Some(ColumnClass::Text) => "text",
                _ => "other",
            };
            // The instance's note is shown once, on its table's line; the
            // column's own description up to its first sentence's end.
            let own = match (&c.description, &c.note) {
                (Some(d), Some(n)) if d == n => None,
                (Some(d), Some(n)) => Some(first_sentence(d.strip_prefix(&format!("{n} — ")).unwrap_or(d)).to_string()),
                (d, _) => d.as_deref().map(|d| first_sentence(d).to_string()),
            };
            let description = match (own, extras.description_chars) {
                (Some(d), Some(max)) => Some(crate::query::cut_description(&d, max)),
                (d, _) => d,
            };
            // `TABLE.column` only where the alias does not spell it.
            let spelled = c.alias.eq_ignore_ascii_case(&format!("{}_{}", c.table, c.column));
            let source = (!spelled).then(|| format!("{}.{}", c.table, c.column));
            serde_json::json!({"alias": c.alias, "table": c.table, "column": c.column, "source": source,
                               "kind": kind, "measure": pc.is_some_and(|p| p.measure), "description": description})
        })
        .collect();
    let tables: Vec<serde_json::Value> = pv
        .countable()
        .into_iter()
        .map(|t| {
            let note = view
                .columns
                .iter()
                .find(|c| pv.grain.instance_of(&c.alias).is_some_and(|i| i.instance == t))
                .and_then(|c| c.note.as_deref())
                .map(instance_note);
            serde_json::json!({"name": t, "note": note})
        })
        .collect();
    let vars = serde_json::json!({
        "question": question,
        "view_name": view.view_name,
        "columns": columns,
        "tables": tables,
        "evidence": extras.evidence.unwrap_or(""),
        "values": extras.values,
        "hints": extras.hints,
        // The bucket item is explained only where the grammar offers it.
        "bucket": Cues::of(question).bucket && pv.columns.iter().any(|c| c.class == ColumnClass::Date),
    });
    prompts.render("query_plan", &vars)
}

/// QueryView in the plan form: ask for a plan, compile it, check and run
/// its SQL as `task` would a model's (guard, rewrites, execution). In
/// `auto`, when the plan cannot answer, `fallback` (today's SQL path) runs
/// and answers. `trace.plan` records the plan and what happened.
pub fn generate<F>(
    plan: &PlanTask,
    task: &SqlTask,
    llm: &dyn ChatModel,
    trace: &mut QueryTrace,
    fallback: F,
) -> Result<SqlOutcome>
where
    F: FnOnce(&mut QueryTrace) -> Result<SqlOutcome>,
{
    let started = Instant::now();
    let mut pt = PlanTrace { form: plan.form.as_str().into(), ..PlanTrace::default() };
    // `auto`: a question asking for arithmetic goes to free SQL at once.
    let cues = Cues::of(&plan.question);
    let examples = plan.examples_shown > 0;
    if plan.form == QueryForm::Auto && (examples || cues.arithmetic || cues.argmax || cues.subquery) {
        pt.fell_back = true;
        pt.error = Some(if examples {
            format!(
                "{} verified quer{} like this question's shown over the view: free SQL that follows them, no plan asked",
                plan.examples_shown,
                if plan.examples_shown == 1 { "y" } else { "ies" }
            )
        } else if cues.arithmetic {
            "the question asks for arithmetic (a sum of several things, plus, a ratio, …), which a plan cannot say: free SQL, no plan asked".into()
        } else if cues.subquery {
            "the question asks for rows that have both of two things or compares with a whole set (\"than any\", \"above the average\"), which a plan cannot say: free SQL, no plan asked".into()
        } else {
            "the question asks for the row with the largest or smallest something, which free SQL answers better: free SQL, no plan asked".into()
        });
        trace.plan = Some(pt);
        return fallback(trace);
    }
    trace.prompt = "query_plan".into();
    let req = ChatRequest {
        phase: "query_plan".into(),
        messages: vec![Message::user(plan.prompt.clone())],
        temperature: plan.temperature,
        n: 1,
        response_schema: None,
        grammar: Some(plan.grammar.clone()),
        max_tokens: Some(plan.max_tokens),
    };
    let (call, result) = traced::call(llm, &req);
    trace.cost.add_call(&call);
    let mut attempt = SqlAttempt { round: 0, call, extraction: "plan".into(), ..SqlAttempt::default() };
    let answer = match result {
        Ok(r) => r.choices.into_iter().next().unwrap_or_default(),
        Err(e) => {
            trace.attempts.push(attempt);
            trace.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
            pt.error = Some(e.to_string());
            trace.plan = Some(pt);
            return Err(e);
        }
    };
    let outcome = answer_plan(plan, task, &answer, &mut pt, &mut attempt);
    let cut = attempt.call.truncation_note();
    if !cut.is_empty() {
        if let Some(e) = pt.error.as_mut() {
            *e = format!("{e}; {cut}");
        }
    }
    trace.attempts.push(attempt);
    let plan_ms = started.elapsed().as_secs_f64() * 1000.0;
    match outcome {
        Ok(o) if plan.form == QueryForm::Auto && o.rows.as_ref().is_some_and(|r| r.rows.is_empty()) => {
            // An empty result: free SQL once more; its rows win when it has
            // some, else the plan's answer stands.
            pt.fell_back = true;
            pt.error = Some("the plan's SQL returned no row".into());
            trace.plan = Some(pt);
            let r = fallback(trace);
            trace.cost.ms += plan_ms;
            match r {
                Ok(s) if s.rows.as_ref().is_some_and(|r| !r.rows.is_empty()) => Ok(s),
                other => {
                    let why = match &other {
                        Ok(_) => "free SQL returned no row either".to_string(),
                        Err(e) => format!("free SQL failed: {e}"),
                    };
                    if let Some(pt) = trace.plan.as_mut() {
                        pt.fell_back = false;
                        pt.error = Some(format!("the plan's SQL returned no row; {why}: the plan's answer stands"));
                    }
                    trace.sql = Some(o.checked.sql.clone());
                    trace.repaired = false;
                    Ok(o)
                }
            }
        }
        Ok(o) => {
            trace.sql = Some(o.checked.sql.clone());
            trace.repaired = false;
            trace.cost.ms = plan_ms;
            trace.plan = Some(pt);
            Ok(o)
        }
        Err(e) if plan.form == QueryForm::Auto => {
            pt.fell_back = true;
            if pt.error.is_none() {
                pt.error = Some(e.to_string());
            }
            trace.plan = Some(pt);
            let r = fallback(trace);
            // The SQL path times itself from its own start.
            trace.cost.ms += plan_ms;
            r
        }
        Err(e) => {
            trace.cost.ms = plan_ms;
            if pt.error.is_none() {
                pt.error = Some(e.to_string());
            }
            trace.plan = Some(pt);
            Err(e)
        }
    }
}

/// Parse, compile, check and run one plan answer; `pt` and `attempt`
/// record each step.
fn answer_plan(
    plan: &PlanTask,
    task: &SqlTask,
    answer: &str,
    pt: &mut PlanTrace,
    attempt: &mut SqlAttempt,
) -> Result<SqlOutcome> {
    let refuse = |pt: &mut PlanTrace, attempt: &mut SqlAttempt, msg: String| {
        attempt.validation = Validation { ok: false, error: Some(msg.clone()), ..Validation::default() };
        pt.error = Some(msg.clone());
        Err(Error::Sql(msg))
    };
    // A cut answer is closed after its last whole item (what the loop
    // repeated is gone), noted first among the tidying notes.
    let cut = attempt.call.truncation_note();
    let mut closed = None;
    let parsed = match parse_answer(answer) {
        Ok(p) => p,
        Err(m) => match ast::close_cut(answer).filter(|_| !cut.is_empty()).and_then(|c| parse_answer(&c).ok()) {
            Some(p) => {
                closed = Some(format!("the answer was cut ({cut}): closed after its last whole item"));
                p
            }
            None => return refuse(pt, attempt, m),
        },
    };
    pt.plan = serde_json::to_value(&parsed).ok();
    let (parsed, notes) = tidy::tidy(&parsed, &plan.question, Some(&plan.view));
    pt.tidied = closed.into_iter().chain(notes).collect();
    pt.table = describe::table(&parsed);
    let sql = match compile(&parsed, &plan.view) {
        Ok(s) => s,
        Err(e) => return refuse(pt, attempt, e.to_string()),
    };
    pt.compiled = Some(sql.clone());
    // `auto`: a plan that selects fewer things than the question's output
    // sentence lists left part of the question out (a second aggregate, a
    // computed column): free SQL instead.
    if plan.form == QueryForm::Auto && matches!(parsed.kind, PlanKind::Query | PlanKind::TopPerGroup) {
        if let Some(asked) = words::output_items(&plan.question).filter(|&n| n > parsed.select.len()) {
            return refuse(
                pt,
                attempt,
                format!(
                    "the plan selects {} item(s); the question's output sentence lists {asked}",
                    parsed.select.len()
                ),
            );
        }
    }
    // `auto`: a plan that holds none of the numbers the question compares
    // a count with ("more than one orchestra") left the comparison out.
    if plan.form == QueryForm::Auto {
        let held = parsed.numbers();
        if let Some(n) = cues::compared_counts(&plan.question).into_iter().find(|n| !held.contains(n)) {
            return refuse(
                pt,
                attempt,
                format!("the question compares a count with {n}; the plan holds no {n} (no having, no condition)"),
            );
        }
    }
    attempt.extracted = Some(sql.clone());
    let (outcome, _) = crate::query::check_and_run(task, sql, attempt);
    if let Err(e) = &outcome {
        pt.error = Some(format!("the plan's SQL was refused: {e}"));
    }
    outcome
}

#[cfg(test)]
mod tests;
