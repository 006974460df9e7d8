//! Phase 3, QueryView (Lucy §3.4): ask for SQL over the view, extract it,
//! check it with the guard before anything runs, optionally execute it
//! read-only, and give the model exactly one repair round when the check or
//! the execution fails. The direct baseline reuses the same loop with the
//! model's tables as the allowed relations.

pub mod choose;
pub mod extract;
pub mod grammar;
pub mod measures;
pub mod plan;
pub mod rename;

use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::graph::SchemaGraph;
use crate::llm::traced;
use crate::llm::{ChatModel, ChatRequest, Message};
use crate::prompts::{dialect_label, Prompts};
use crate::sql::exec::bound::{sample_rows, TRACE_SAMPLE_BYTES};
use crate::sql::exec::{run, Database, ExecOptions, QueryRows, ViewDef};
use crate::sql::guard::{check_over_tables, check_query, unknown_columns, CheckedSql, UnknownColumn};
use crate::types::trace::{ExecSummary, LlmCall, QueryTrace, SqlAttempt, Validation};
use crate::types::{Dialect, FanoutMode, ViewBody, ViewColumn, ViewResult};
use grammar::NameRules;

/// Whether the deterministic rename ([`rename`]) runs by default
/// (`--rename-unknown`).
pub const DEFAULT_RENAME_UNKNOWN: bool = true;

/// What the SQL may read.
#[derive(Debug, Clone)]
pub enum Allowed {
    /// Only this view and its columns (QueryView).
    View { name: String, columns: Vec<String> },
    /// Only these tables and their columns (the direct baseline).
    Tables(Vec<(String, Vec<String>)>),
}

/// Cap on a QueryView answer, in tokens: 1.5 times the longest QueryView
/// answer recorded on DDO and ACME that ended by itself (430 tokens, an
/// ACME query of 1,681 characters; DDO's longest gold query is 365
/// characters). Without a cap a rambling answer ran to the backend's 1,024
/// (DDO Q18, twice: 243 s on one thread). See docs/llm.md.
pub const QUERY_VIEW_MAX_TOKENS: u32 = 640;

/// A QueryView answer over a view of K columns is capped at
/// `QUERY_VIEW_BASE_TOKENS + QUERY_VIEW_TOKENS_PER_COLUMN × K` tokens (at most
/// [`QUERY_VIEW_MAX_TOKENS`]): every one of the 1,419 QueryView answers
/// recorded in benchmarks/cassettes/ that ended by itself fits (the closest,
/// 630 tokens over 39 columns, is 162 + 12 × 39); a view of the median 16
/// columns gets 384 tokens, one of 5 columns 252, so a runaway answer over a
/// small view stops 2.5 times sooner than at 640.
pub const QUERY_VIEW_BASE_TOKENS: u32 = 192;
/// See [`QUERY_VIEW_BASE_TOKENS`].
pub const QUERY_VIEW_TOKENS_PER_COLUMN: u32 = 12;

/// Cap on a direct-baseline answer, in tokens: it writes every join over
/// the base tables. The longest gold query of DDO and ACME is 2,079
/// characters (ACME), about 750 tokens at the 2.8 characters per token this
/// model's SQL answers take at the least.
pub const DIRECT_MAX_TOKENS: u32 = 1024;

impl Allowed {
    /// The answer cap for this task, sized by what it asks: one query over
    /// a view of K columns ([`QUERY_VIEW_BASE_TOKENS`], at most
    /// [`QUERY_VIEW_MAX_TOKENS`]), or over the base tables
    /// ([`DIRECT_MAX_TOKENS`]); `--llm-max-tokens` overrides it.
    pub fn max_tokens(&self) -> u32 {
        match self {
            Allowed::View { columns, .. } => QUERY_VIEW_MAX_TOKENS.min(QUERY_VIEW_BASE_TOKENS.saturating_add(
                QUERY_VIEW_TOKENS_PER_COLUMN.saturating_mul(columns.len().try_into().unwrap_or(u32::MAX)),
            )),
            Allowed::Tables(_) => DIRECT_MAX_TOKENS,
        }
    }

    fn describe(&self) -> String {
        match self {
            Allowed::View { name, .. } => format!("the view {name}"),
            Allowed::Tables(_) => "the tables of the schema".into(),
        }
    }

    /// (name, columns) of every allowed relation.
    fn relations(&self) -> Vec<(String, Vec<String>)> {
        match self {
            Allowed::View { name, columns } => vec![(name.clone(), columns.clone())],
            Allowed::Tables(t) => t.clone(),
        }
    }

    fn check(&self, sql: &str, dialect: Dialect) -> Result<CheckedSql> {
        match self {
            Allowed::View { name, columns } => check_query(sql, name, columns, dialect),
            Allowed::Tables(t) => check_over_tables(sql, t, dialect),
        }
    }
}

/// Where to run the accepted SQL.
#[derive(Debug, Clone)]
pub struct ExecTarget<'a> {
    pub db: &'a Database,
    /// The view to make available first (QueryView).
    pub view: Option<&'a ViewBody>,
    pub limit: Option<usize>,
    pub timeout: Duration,
    /// `--max-result-bytes`: the byte budget of the rows read.
    pub max_result_bytes: usize,
}

/// One SQL-writing task.
#[derive(Debug, Clone)]
pub struct SqlTask<'a> {
    /// Prompt name, used as the request phase (`query_view`, `direct_sql`, …).
    pub prompt_name: String,
    /// The rendered first prompt.
    pub prompt: String,
    pub allowed: Allowed,
    pub dialect: Dialect,
    pub temperature: f64,
    pub execute: Option<ExecTarget<'a>>,
    /// Fan-out analysis of SQL over this view, and what to do with findings.
    pub fanout: Option<(&'a ViewResult, FanoutMode)>,
    /// `--distinct auto`: add `DISTINCT` to a list of rows this view
    /// repeats (`check::distinct`), after the guard admits the query.
    pub distinct: Option<&'a ViewResult>,
    /// `--count-names on`: a `COUNT(*)` over this view counts the rows of
    /// this instance, the table the question counts (`check::counted`),
    /// where the view repeats them; applied before the fan-out analysis.
    pub counted: Option<(&'a ViewResult, &'a str)>,
    /// `--entity-literals on` and `--by-groups on`: rewrites of a query
    /// over the view read from the question's words, before the `COUNT(*)`
    /// rewrite and the fan-out analysis.
    pub grounding: Option<Grounding>,
    /// Check SQL over base tables against this model (`lucy check`) before
    /// running it: findings in the first answer become the repair round's
    /// message (the `direct+check` baseline); in the repair they are only
    /// recorded.
    pub model_check: Option<&'a SchemaGraph>,
    /// Lark grammar of acceptable answers ([`grammar`]), sent with every
    /// round for backends that constrain decoding.
    pub grammar: Option<String>,
    /// How [`grammar`](Self::grammar) was built, so the repair round can
    /// rebuild it with the names the guard rejected forbidden (strict name
    /// rules only; otherwise the repair sends the same grammar).
    pub repair_grammar: Option<RepairGrammar>,
    /// `--rename-unknown on`: the view's columns, which unknown names are
    /// renamed to when they mean exactly one ([`rename`]), before any repair
    /// call.
    pub rename: Option<&'a [ViewColumn]>,
    /// How many follow-up rounds the answer gets, and on what.
    pub feedback: Feedback,
}

/// What the question's words say about a query over the view
/// ([`SqlTask::grounding`]).
#[derive(Debug, Clone)]
pub struct Grounding {
    pub view_name: String,
    pub question: String,
    /// View columns that identify or name a row: filters fixing them to
    /// values the question does not hold are dropped
    /// (`crate::check::literals`); empty to keep every filter.
    pub entities: Vec<String>,
    /// Phrases the question asks "by" and the one view column each names:
    /// an ungrouped aggregate query is grouped by them
    /// (`crate::check::grouping`); empty to add no group.
    pub by: Vec<(String, String)>,
    /// The view's text columns whose values the value index holds
    /// completely: a filter on one of them with a literal it does not hold
    /// is respelled or moved (`crate::check::values`); empty to leave
    /// every filter.
    pub values: Vec<crate::check::values::ValueColumn>,
    /// Lower-cases and strips accents (`link::values::fold`), for
    /// [`values`](Self::values).
    pub fold: fn(&str) -> String,
}

/// The follow-up rounds of [`generate_sql`]: after a rejected or failing
/// query always, after an empty result only with `on_empty`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feedback {
    /// Follow-up calls at most (lucy's default: 1, the repair round).
    pub rounds: usize,
    /// Also follow up when the query ran and returned no rows; the last
    /// query that ran is the answer when every follow-up fails or is empty.
    pub on_empty: bool,
}

impl Feedback {
    /// RASL's self-correction (Eben et al., 2025, C.2): up to two
    /// follow-ups, on an error or an empty result.
    pub const RASL: Feedback = Feedback { rounds: 2, on_empty: true };
}

impl Default for Feedback {
    fn default() -> Self {
        Feedback { rounds: 1, on_empty: false }
    }
}

/// The follow-up message after a query that ran and returned no rows.
pub const EMPTY_RESULT: &str = "it ran and returned no rows. If the question expects rows, \
the query is probably wrong (a filter value, a join or a column)";

/// What a task's grammar is built from besides the allowed relations.
#[derive(Debug, Clone)]
pub struct RepairGrammar {
    /// Every table and column name of the model (for a view; the direct
    /// baseline's tables are their own).
    pub reserved: Vec<String>,
    pub rules: NameRules,
}

impl RepairGrammar {
    /// The grammar of `allowed` under these rules, with `also_forbidden`
    /// forbidden on top.
    fn build(&self, allowed: &Allowed, dialect: Dialect, also_forbidden: &[String]) -> String {
        let mut rules = self.rules.clone();
        rules.forbidden.extend(also_forbidden.iter().cloned());
        match allowed {
            Allowed::View { name, columns } => {
                grammar::view_grammar_with(name, columns, &self.reserved, dialect, &rules)
            }
            Allowed::Tables(t) => grammar::tables_grammar_with(t, dialect, &rules),
        }
    }
}

/// The accepted SQL and, when executed, its rows.
#[derive(Debug, Clone)]
pub struct SqlOutcome {
    pub checked: CheckedSql,
    pub rows: Option<QueryRows>,
}

/// Render the QueryView prompt for `view`: PROMPTC, or PROMPTC' when
/// `schema` (DDL of the view's tables) is given; `evidence` is shown in both.
pub fn view_prompt(
    prompts: &Prompts,
    view: &ViewResult,
    question: &str,
    dialect: Dialect,
    schema: Option<&str>,
    evidence: Option<&str>,
) -> Result<(String, String)> {
    view_prompt_full(prompts, view, question, dialect, schema, evidence, PromptExtras::default())
}

/// A verified example shown to QueryView: its question and its SQL,
/// already written over the view.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PromptExample {
    pub question: String,
    pub sql: String,
}

/// What QueryView's prompt may show beyond the view and the question. Either
/// may be empty: an empty one renders to nothing, so with both empty the
/// prompt is [`view_prompt`]'s, byte for byte.
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptExtras<'a> {
    /// Verified examples over the view (`lucy ask --examples`, issue 24).
    pub examples: &'a [PromptExample],
    /// Lines of matched database values (`ALIAS: 'value'`,
    /// `link::values::view_notes`; `--values on`, issue 23).
    pub values: &'a [String],
    /// Lines naming the view column a phrase of the question spells
    /// (`"claim number": Claim_Company_Claim_Number`,
    /// `link::hints::view_hints`; `--name-hints on`, issue 23).
    pub hints: &'a [String],
    /// Column descriptions cut to this many characters (at a word, with
    /// `…`): the shorter prompt QueryView asks again with when the first
    /// did not fit the model's context ([`COMPACT_DESCRIPTIONS`]). `None`
    /// shows them whole.
    pub description_chars: Option<usize>,
}

/// The description length of the shorter QueryView prompt (see
/// [`PromptExtras::description_chars`]): ACME's longest view (20 instances,
/// 118 columns, `--view-columns all`) goes from 9,113 tokens to about 6,600,
/// under the embedded model's 8,192.
pub const COMPACT_DESCRIPTIONS: usize = 60;

/// `text` cut to at most `max` characters at a word boundary, with `…`.
fn cut_description(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max).collect();
    let at = head.rfind(' ').filter(|&i| i > 0).unwrap_or(head.len());
    format!("{}…", head[..at].trim_end_matches([',', ';', ':', '.', ' ']))
}

/// [`view_prompt`] with [`PromptExtras`].
pub fn view_prompt_full(
    prompts: &Prompts,
    view: &ViewResult,
    question: &str,
    dialect: Dialect,
    schema: Option<&str>,
    evidence: Option<&str>,
    extras: PromptExtras<'_>,
) -> Result<(String, String)> {
    let PromptExtras { examples, values, hints, description_chars } = extras;
    let columns: Vec<serde_json::Value> = view
        .columns
        .iter()
        .map(|c| {
            let description = match (&c.description, description_chars) {
                (Some(d), Some(max)) => Some(cut_description(d, max)),
                (d, _) => d.clone(),
            };
            serde_json::json!({"alias": c.alias, "table": c.table, "column": c.column, "description": description})
        })
        .collect();
    let mut vars = serde_json::json!({
        "question": question,
        "dialect": dialect_label(dialect),
        "dialect_notes": crate::prompts::dialect_notes(dialect),
        "view_name": view.view_name,
        "view_sql": view.view_sql.trim(),
        "columns": columns,
        "evidence": evidence.unwrap_or(""),
        "examples": examples,
        "values": values,
        "hints": hints,
    });
    let name = match schema {
        Some(ddl) => {
            vars["schema"] = ddl.into();
            "query_view_schema"
        }
        None => "query_view",
    };
    Ok((name.to_string(), prompts.render(name, &vars)?))
}

/// Ask for SQL, check it, run it if asked; one repair round on failure.
/// `trace` receives every attempt, also when the task fails.
pub fn generate_sql(
    task: &SqlTask,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    trace: &mut QueryTrace,
) -> Result<SqlOutcome> {
    let started = Instant::now();
    trace.prompt = task.prompt_name.clone();
    let mut messages = vec![Message::user(task.prompt.clone())];
    let mut last_err: Option<Error> = None;
    let mut grammar = task.grammar.clone();
    // The last refused SQL, when the guard or the run refused it.
    let mut rejected: Option<String> = None;
    // The last query that ran and returned no rows (`feedback.on_empty`),
    // with its round.
    let mut empty: Option<(usize, SqlOutcome)> = None;
    let rounds = task.feedback.rounds;
    for round in 0..=rounds {
        let req = ChatRequest {
            phase: if round == 0 { task.prompt_name.clone() } else { format!("{}_repair", task.prompt_name) },
            messages: messages.clone(),
            temperature: task.temperature,
            n: 1,
            response_schema: None,
            grammar: grammar.clone(),
            max_tokens: Some(task.allowed.max_tokens()),
        };
        let (call, result) = traced::call(llm, &req);
        trace.cost.add_call(&call);
        let mut attempt = SqlAttempt { round, call, extraction: "none".into(), ..SqlAttempt::default() };
        // What the follow-up shows of this answer: a sample the backend
        // stopped because it looped, only up to the loop's first copy (the
        // loop re-sent would start the next answer looping again; the
        // follow-up's reason names the cut).
        let mut shown: Option<String> = None;
        let answer = match result {
            Ok(r) => {
                let answer = r.choices.into_iter().next().unwrap_or_default();
                if let Some(c) = r.cuts.iter().find(|c| c.choice == 0) {
                    if c.keep < answer.len() && answer.is_char_boundary(c.keep) {
                        shown = Some(format!("{} …", answer[..c.keep].trim_end()));
                    }
                }
                answer
            }
            Err(e) => {
                trace.attempts.push(attempt);
                trace.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
                return Err(e);
            }
        };
        // The same SQL the guard refused (a refusal by `lucy check` or the
        // run is not the guard's: the direct+check baseline runs its repair
        // whatever the check says).
        let repeated = round > 0
            && rejected.as_deref().is_some_and(|r| {
                extract::extract_sql(&answer).is_some_and(|(sql, _)| same_sql(&sql, r))
                    && task.allowed.check(r, task.dialect).is_err()
            });
        let (mut outcome, failed_sql) = if repeated {
            // The repair returned the refused SQL again: not a new attempt.
            let sql = rejected.clone().unwrap_or_default();
            let why = "the repair round returned the rejected SQL unchanged".to_string();
            attempt.extracted = Some(sql.clone());
            attempt.extraction = "repeated".into();
            attempt.validation = Validation { ok: false, error: Some(why.clone()), ..Validation::default() };
            let prior = last_err.as_ref().map(error_text).unwrap_or_default();
            (Err(Error::Sql(format!("{prior}; {why}"))), Some(sql))
        } else {
            attempt_once(task, &answer, &mut attempt)
        };
        // A cut-off answer explains most unusable SQL; say so where it fails.
        let cut = attempt.call.truncation_note();
        if !cut.is_empty() {
            if let Err(e) = outcome {
                if let Some(v) = attempt.validation.error.as_mut() {
                    *v = format!("{v}; {cut}");
                }
                outcome = Err(match e {
                    Error::Sql(m) => Error::Sql(format!("{m}; {cut}")),
                    Error::Db(m) => Error::Db(format!("{m}; {cut}")),
                    other => other,
                });
            }
        }
        let failed_round = attempt.round;
        trace.attempts.push(attempt);
        // The deterministic rename, before any repair call.
        if matches!(outcome, Err(Error::Sql(_))) && !repeated {
            if let Some(renamed) = failed_sql.as_deref().and_then(|sql| try_rename(task, sql, failed_round, trace)) {
                outcome = renamed;
            }
        }
        let no_rows = |o: &SqlOutcome| o.rows.as_ref().is_some_and(|r| r.rows.is_empty());
        if let Ok(o) = &outcome {
            if task.feedback.on_empty && round < rounds && no_rows(o) {
                let vars = repair_vars(task, &o.checked.sql, EMPTY_RESULT);
                empty = outcome.ok().map(|o| (round, o));
                messages.push(Message { role: "assistant".into(), content: shown.unwrap_or(answer) });
                messages.push(Message::user(prompts.render("repair_sql", &vars)?));
                continue;
            }
        }
        match outcome {
            Ok(o) => {
                trace.sql = Some(o.checked.sql.clone());
                trace.repaired = round > 0;
                trace.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
                return Ok(o);
            }
            Err(e) => {
                let vars = repair_vars(
                    task,
                    failed_sql.as_deref().unwrap_or_default(),
                    &crate::error::cut(&error_text(&e), REPAIR_ERROR_CHARS),
                );
                last_err = Some(e);
                if round < rounds {
                    if let (Some(rg), Some(sql)) = (&task.repair_grammar, &failed_sql) {
                        if rg.rules.names.is_strict() {
                            // The names the guard rejected cannot be written again.
                            let names: Vec<String> = unknown_columns(sql, &task.allowed.relations(), task.dialect)
                                .into_iter()
                                .map(|u| u.column)
                                .collect();
                            grammar = Some(rg.build(&task.allowed, task.dialect, &names));
                        }
                    }
                    rejected = failed_sql.clone();
                    messages.push(Message { role: "assistant".into(), content: shown.unwrap_or(answer) });
                    messages.push(Message::user(prompts.render("repair_sql", &vars)?));
                }
            }
        }
    }
    trace.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Some((round, o)) = empty {
        // Every later follow-up failed: the last query that ran (empty) is
        // the answer; repaired when a follow-up wrote it.
        trace.sql = Some(o.checked.sql.clone());
        trace.repaired = round > 0;
        return Ok(o);
    }
    Err(last_err.unwrap_or_else(|| Error::Sql("no attempt made".into())))
}

/// The `repair_sql` prompt's variables: the SQL that failed (cut to
/// [`REPAIR_SQL_CHARS`]) and what went wrong.
fn repair_vars(task: &SqlTask, sql: &str, error: &str) -> serde_json::Value {
    serde_json::json!({
        "sql": crate::error::cut(sql, REPAIR_SQL_CHARS),
        "error": error,
        "dialect": dialect_label(task.dialect),
        "allowed": task.allowed.describe(),
    })
}

/// Whether two queries are the same text up to blanks and a final `;`.
fn same_sql(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.trim().trim_end_matches(';').split_whitespace().collect::<Vec<_>>().join(" ");
    norm(a) == norm(b)
}

/// `--rename-unknown`: when the guard refused `sql` for names the view
/// lacks and each means exactly one view column, run the renamed query
/// through the guard (and the run) as an attempt of its own (extraction
/// `renamed`, no LLM call). Its outcome replaces the refusal only when it
/// is accepted; an ambiguous or unmatched name is noted on the refused
/// attempt instead.
fn try_rename(task: &SqlTask, sql: &str, round: usize, trace: &mut QueryTrace) -> Option<Result<SqlOutcome>> {
    let columns = task.rename?;
    let unknown: Vec<UnknownColumn> = unknown_columns(sql, &task.allowed.relations(), task.dialect);
    if unknown.is_empty() {
        return None;
    }
    let r = rename::rename_unknown(sql, &unknown, columns, task.dialect);
    if !r.notes.is_empty() {
        if let Some(v) = trace.attempts.last_mut().and_then(|a| a.validation.error.as_mut()) {
            v.push_str(&format!("; rename: {}", r.notes.join("; ")));
        }
    }
    let new_sql = r.sql?;
    let pairs: Vec<String> = r.renames.iter().map(|(a, b)| format!("{a} → {b}")).collect();
    let mut attempt = SqlAttempt {
        round,
        call: LlmCall { phase: format!("{}_rename", task.prompt_name), ..LlmCall::default() },
        extracted: Some(new_sql.clone()),
        extraction: "renamed".into(),
        ..SqlAttempt::default()
    };
    let (outcome, _) = check_and_run(task, new_sql, &mut attempt);
    if let Some(v) = attempt.validation.error.as_mut() {
        v.push_str(&format!(" (after renaming {})", pairs.join(", ")));
    }
    let ok = outcome.is_ok();
    trace.attempts.push(attempt);
    ok.then_some(outcome)
}

/// The repair message quotes the rejected SQL and the reason, each cut to
/// these many characters, so the repair prompt stays near the size of the
/// first one. The guard lists a view's columns with every unknown column, so
/// a wide view and a garbled answer made a 25,710-character reason once
/// (ACME, 55 columns, 16 unknown names): with the view that prompt came to
/// 9,889 tokens, past the embedded model's 8,192. A longer reason is cut
/// with its length noted (`error::cut`); shorter ones, every recorded one but
/// two, are sent unchanged, so recorded cassettes stay valid.
pub const REPAIR_ERROR_CHARS: usize = 8_000;
/// See [`REPAIR_ERROR_CHARS`]; the SQL is also in the conversation already
/// (the model's own answer), and answers are capped in tokens anyway.
pub const REPAIR_SQL_CHARS: usize = 6_000;

/// The message of an error without its `SQL rejected:` style prefix.
fn error_text(e: &Error) -> String {
    match e {
        Error::Sql(m) | Error::Db(m) => m.clone(),
        other => other.to_string(),
    }
}

/// Extract, check and (optionally) execute one answer. Returns the outcome
/// and the SQL that failed, for the repair prompt.
fn attempt_once(task: &SqlTask, answer: &str, attempt: &mut SqlAttempt) -> (Result<SqlOutcome>, Option<String>) {
    let Some((sql, how)) = extract::extract_sql(answer) else {
        let msg = "the answer contains no SQL query (expected a ```sql block)".to_string();
        attempt.validation = Validation { ok: false, error: Some(msg.clone()), ..Validation::default() };
        return (Err(Error::Sql(msg)), None);
    };
    attempt.extracted = Some(sql.clone());
    attempt.extraction = how.into();
    check_and_run(task, sql, attempt)
}

/// Run SQL given by the user instead of asking the LLM (`lucy ask --sql`):
/// the same guard and execution as an LLM answer, recorded as one attempt
/// with extraction `given`, and no repair round (there is no one to ask).
pub fn run_given(task: &SqlTask, sql: &str, trace: &mut QueryTrace) -> Result<SqlOutcome> {
    let started = Instant::now();
    trace.prompt = "given".into();
    let mut attempt =
        SqlAttempt { round: 0, extracted: Some(sql.to_string()), extraction: "given".into(), ..SqlAttempt::default() };
    attempt.call.phase = "given".into();
    let (outcome, _) = check_and_run(task, sql.to_string(), &mut attempt);
    trace.attempts.push(attempt);
    if let Ok(o) = &outcome {
        trace.sql = Some(o.checked.sql.clone());
    }
    trace.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
    outcome
}

/// Check one extracted SQL query with the guard and (optionally) execute it.
fn check_and_run(task: &SqlTask, sql: String, attempt: &mut SqlAttempt) -> (Result<SqlOutcome>, Option<String>) {
    // PostgreSQL: `"CLIENT_name"` means the view's CLIENT_name, as the
    // guard reads it (rename::fold_quoted_view_names).
    let folded = match &task.allowed {
        Allowed::View { columns, .. } if task.dialect == Dialect::Postgres => {
            rename::fold_quoted_view_names(&sql, columns, task.dialect)
        }
        _ => None,
    };
    let checked = match task.allowed.check(folded.as_deref().unwrap_or(&sql), task.dialect) {
        Ok(c) => c,
        Err(e) => {
            attempt.validation = Validation { ok: false, error: Some(error_text(&e)), ..Validation::default() };
            return (Err(e), Some(sql));
        }
    };
    attempt.validation =
        Validation { ok: true, error: None, relations: checked.relations.clone(), columns: checked.columns.clone() };
    let checked = match apply_literals(task, checked, attempt)
        .and_then(|c| apply_values(task, c, attempt))
        .and_then(|c| apply_grouping(task, c, attempt))
        .and_then(|c| apply_counted(task, c, attempt))
        .and_then(|c| apply_fanout(task, c, attempt))
        .and_then(|c| apply_distinct(task, c, attempt))
        .and_then(|c| apply_model_check(task, c, attempt))
    {
        Ok(c) => c,
        Err(e) => {
            attempt.validation.ok = false;
            attempt.validation.error = Some(error_text(&e));
            return (Err(e), Some(sql));
        }
    };
    let Some(target) = &task.execute else {
        return (Ok(SqlOutcome { checked, rows: None }), None);
    };
    let started = Instant::now();
    let opts = ExecOptions { limit: target.limit, timeout: target.timeout, max_result_bytes: target.max_result_bytes };
    match run(target.db, target.view.map(ViewDef::from), &checked.sql, &opts) {
        Ok(rows) => {
            attempt.execution = Some(summary(&rows, started));
            (Ok(SqlOutcome { checked, rows: Some(rows) }), None)
        }
        Err(e) => {
            attempt.execution = Some(ExecSummary {
                ok: false,
                error: Some(error_text(&e)),
                ms: started.elapsed().as_secs_f64() * 1000.0,
                ..ExecSummary::default()
            });
            (Err(e), Some(sql))
        }
    }
}

/// The fan-out analysis of an admitted query over the view: `warn` keeps
/// the query, `error` refuses it (the message names each aggregate and the
/// joins that repeat its rows; it is also the repair round's message), and
/// `rewrite` swaps in the rewritten query after the guard admits it too, or
/// refuses when some aggregate cannot be rewritten.
fn apply_fanout(task: &SqlTask, checked: CheckedSql, attempt: &mut SqlAttempt) -> Result<CheckedSql> {
    let Some((view, mode)) = task.fanout else { return Ok(checked) };
    let report = crate::check::fanout::analyze(&checked.sql, view, task.dialect, mode)?;
    if report.findings.is_empty() && report.skipped.is_empty() {
        return Ok(checked);
    }
    attempt.fanout = Some(report.clone());
    let refuse = |why: &str| Error::Sql(format!("fan-out: {} ({why})", report.describe()));
    match mode {
        FanoutMode::Warn => Ok(checked),
        _ if report.findings.is_empty() => Ok(checked),
        FanoutMode::Error => Err(refuse("--fanout error")),
        FanoutMode::Rewrite => {
            if report.findings.iter().any(|f| !f.rewritable) {
                return Err(refuse("--fanout rewrite could not rewrite every aggregate"));
            }
            let Some(rw) = &report.rewritten else { return Ok(checked) };
            guarded(task, rw, "fan-out", "--fanout warn or --fanout error")
        }
    }
}

/// A rewrite of an admitted query, through the guard too; a refusal names
/// the rewrite (`what`) and the flag that turns it `off`.
fn guarded(task: &SqlTask, rewritten: &str, what: &str, off: &str) -> Result<CheckedSql> {
    task.allowed
        .check(rewritten, task.dialect)
        .map_err(|e| Error::Sql(format!("the {what} rewrite was rejected by the guard ({e}); rerun with {off}")))
}

/// `--entity-literals on`: filters on an identifying column with values
/// the question does not hold go; the rewrite must pass the guard too.
fn apply_literals(task: &SqlTask, checked: CheckedSql, attempt: &mut SqlAttempt) -> Result<CheckedSql> {
    let Some(g) = &task.grounding else { return Ok(checked) };
    let Some(note) =
        crate::check::literals::rewrite(&checked.sql, &g.view_name, &g.entities, &g.question, task.dialect)?
    else {
        return Ok(checked);
    };
    let rewritten = guarded(task, &note.rewritten, "entity-literal", "--entity-literals off")?;
    attempt.literals = Some(note);
    Ok(rewritten)
}

/// `--value-literals on`: a text filter the database does not hold in its
/// column respelled or moved to the column that holds it; the rewrite
/// must pass the guard too.
fn apply_values(task: &SqlTask, checked: CheckedSql, attempt: &mut SqlAttempt) -> Result<CheckedSql> {
    let Some(g) = &task.grounding else { return Ok(checked) };
    let Some(note) =
        crate::check::values::rewrite(&checked.sql, &g.view_name, &g.values, &g.question, &g.fold, task.dialect)?
    else {
        return Ok(checked);
    };
    let rewritten = guarded(task, &note.rewritten, "value-literal", "--value-literals off")?;
    attempt.values = Some(note);
    Ok(rewritten)
}

/// `--by-groups on`: an ungrouped aggregate query grouped by what the
/// question asks "by"; the rewrite must pass the guard too.
fn apply_grouping(task: &SqlTask, checked: CheckedSql, attempt: &mut SqlAttempt) -> Result<CheckedSql> {
    let Some(g) = &task.grounding else { return Ok(checked) };
    let Some(note) = crate::check::grouping::rewrite(&checked.sql, &g.view_name, &g.by, task.dialect)? else {
        return Ok(checked);
    };
    let rewritten = guarded(task, &note.rewritten, "by-group", "--by-groups off")?;
    attempt.grouped = Some(note);
    Ok(rewritten)
}

/// `--count-names on`: `COUNT(*)` read as a count of the instance the
/// question counts where the view repeats its rows; the rewrite must pass
/// the guard too.
fn apply_counted(task: &SqlTask, checked: CheckedSql, attempt: &mut SqlAttempt) -> Result<CheckedSql> {
    let Some((view, instance)) = task.counted else { return Ok(checked) };
    let Some(note) =
        crate::check::counted::rewrite(&checked.sql, &view.grain, &view.view_name, instance, task.dialect)?
    else {
        return Ok(checked);
    };
    let rewritten = guarded(task, &note.rewritten, "COUNT(*)", "--count-names off")?;
    attempt.counted = Some(note);
    Ok(rewritten)
}

/// `--distinct auto` on an admitted query over the view: a list of rows the
/// view repeats gets `DISTINCT`, which the guard must admit too.
fn apply_distinct(task: &SqlTask, checked: CheckedSql, attempt: &mut SqlAttempt) -> Result<CheckedSql> {
    let Some(view) = task.distinct else { return Ok(checked) };
    let Some(note) = crate::check::distinct::analyze(&checked.sql, &view.grain, &view.view_name, task.dialect)? else {
        return Ok(checked);
    };
    let rewritten = guarded(task, &note.rewritten, "DISTINCT", "--distinct off")?;
    attempt.distinct = Some(note);
    Ok(rewritten)
}

/// `lucy check` on an admitted query over the base tables: findings refuse
/// the first answer (their list is the repair message) and are only
/// recorded on the repair.
fn apply_model_check(task: &SqlTask, checked: CheckedSql, attempt: &mut SqlAttempt) -> Result<CheckedSql> {
    let Some(graph) = task.model_check else { return Ok(checked) };
    let report = crate::check::check_sql(graph, &checked.sql, task.dialect)?;
    if report.is_clean() {
        attempt.check = Some(report);
        return Ok(checked);
    }
    let message = format!(
        "it does not follow the database model (lucy check found {} problem(s)):\n{}",
        report.findings.len(),
        report.message()
    );
    attempt.check = Some(report);
    if attempt.round == 0 {
        Err(Error::Sql(message))
    } else {
        Ok(checked)
    }
}

/// What a trace keeps of a result: the first rows within a byte budget.
fn summary(rows: &QueryRows, started: Instant) -> ExecSummary {
    let (sample, cut) = sample_rows(&rows.rows, 10, TRACE_SAMPLE_BYTES);
    ExecSummary {
        ok: true,
        error: None,
        columns: rows.columns.clone(),
        row_count: rows.rows.len(),
        truncated: rows.truncated,
        truncation: rows.truncation.clone(),
        sample_rows: sample,
        samples_cut: cut,
        ms: started.elapsed().as_secs_f64() * 1000.0,
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
