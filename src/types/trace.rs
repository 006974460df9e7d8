//! Trace of one `lucy ask` run: what each phase saw, chose and why.
//! Written by `lucy ask --trace`, read by `lucy explain` and `lucy bench`.
//!
//! A trace never contains secrets: it holds prompts, answers and results,
//! never client configuration.

use serde::{Deserialize, Serialize};

use super::chat::{Message, Usage};
use super::plan::{ColumnRef, ViewRequest, ViewResult};
use super::value::SqlValue;
use crate::error::{read_to_string, Error, Result};

/// Version of the trace format.
pub const TRACE_VERSION: u32 = 1;

/// One `lucy ask` (or `--method direct`) run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub version: u32,
    pub lucy_version: String,
    /// `lucy` (the three phases) or `direct` (the PROMPTB baseline).
    pub method: String,
    pub question: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// dbModel name.
    pub model: String,
    /// LLM model name, when one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<String>,
    /// The options the run used (samples, temperature, ...).
    #[serde(default)]
    pub options: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_tables: Option<MatchTrace>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_view: Option<ViewTrace>,
    /// QueryView, or the direct baseline's single SQL phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_view: Option<QueryTrace>,
    /// Phase after which the run stopped on request (`match`, `view`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_after: Option<String>,
    /// Why the run failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Verified examples retrieved for the question, and how each was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<ExamplesTrace>,
    /// `--narrow-view on`: the relevant tables QueryView's SQL reads no
    /// column of, dropped, and the view solved again without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub narrowed: Option<NarrowTrace>,
    /// `--drop-unjoinable on`: MatchTables' relevant tables lay in parts
    /// of the model no relationship joins; the part kept and the rest
    /// dropped before GenerateView solved again (`pipeline::unjoinable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unjoinable: Option<UnjoinableTrace>,
    /// `--inner-branches named`: the pattern branch the answer is about,
    /// joined by INNER JOIN, and the same SQL over that view
    /// (`pipeline::branches`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inner_branches: Option<InnerBranchTrace>,
    /// `--lookup-filters named`: the lookup rows the question names, as
    /// filters on the view, and the same SQL over the filtered view
    /// (`pipeline::lookups`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup_filters: Option<LookupFilterTrace>,
    /// Wall time of the whole run.
    pub total_ms: f64,
}

/// The verified examples of one run (`lucy ask` with an examples file).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExamplesTrace {
    /// The examples file.
    pub file: String,
    /// The embedder that ranked them.
    pub embedder: String,
    /// How many were asked for (`--examples-k`).
    pub k: usize,
    /// What their tables did: `off`, `offer` or `add` (`--example-tables`).
    pub tables_mode: String,
    /// Tables the examples offered to MatchTables or added to its answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<String>,
    /// The retrieved examples, most similar first.
    pub used: Vec<UsedExample>,
}

/// One retrieved example.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsedExample {
    /// Line in the examples file.
    pub line: usize,
    pub question: String,
    /// Its SQL over the base tables.
    pub sql: String,
    /// Cosine similarity to the question.
    pub score: f64,
    /// The model tables it reads.
    pub tables: Vec<String>,
    /// Its SQL over the view, as the QueryView prompt showed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_prompt: Option<String>,
    /// Why it was left out of the QueryView prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

/// Where and why a run failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failure {
    /// `match_tables`, `generate_view`, `query_view` or `execute`.
    pub phase: String,
    /// `llm`, `nothing_matched`, `infeasible`, `solver`, `sql_rejected`,
    /// `execution`, `input`.
    pub kind: String,
    pub message: String,
}

impl Failure {
    /// Process exit code for a failed run: 3 infeasible, 2 bad input, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self.kind.as_str() {
            "infeasible" => 3,
            "input" => 2,
            _ => 1,
        }
    }
}

/// Cost of a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseCost {
    pub ms: f64,
    /// LLM calls (prompts sent).
    pub llm_calls: u32,
    /// HTTP requests those calls took (retries and per-sample fallbacks count).
    pub requests: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens the embedded model did not evaluate again (prefix
    /// cache); `prompt_tokens - prompt_reused` were evaluated.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub prompt_reused: u64,
    /// Embedded model: prompt tokens evaluated per second of prefill.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub prefill_tok_s: f64,
    /// Embedded model: generated tokens per second of decoding (all samples).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub decode_tok_s: f64,
    /// Embedded model: wall time of prefill and decode (the rates' denominators).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub prefill_ms: f64,
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub decode_ms: f64,
    /// Tokens evaluated in prefill / generated, by calls that report timings.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub prefill_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub decode_tokens: u64,
    /// Embedded model: answers the grammar did not hold for (see
    /// `LocalCost::unconstrained`).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub unconstrained: u64,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

impl PhaseCost {
    /// Add one LLM call.
    pub fn add_call(&mut self, call: &LlmCall) {
        self.llm_calls += 1;
        self.requests += call.requests;
        self.prompt_tokens += call.usage.prompt_tokens;
        self.completion_tokens += call.usage.completion_tokens;
        if let Some(l) = &call.local {
            self.prompt_reused += l.prompt_reused;
            self.prefill_tokens += l.prompt_evaluated;
            self.prefill_ms += l.prefill_ms;
            self.decode_tokens += call.usage.completion_tokens;
            self.decode_ms += l.decode_ms;
            self.unconstrained += u64::from(l.unconstrained);
            self.prefill_tok_s = rate(self.prefill_tokens, self.prefill_ms);
            self.decode_tok_s = rate(self.decode_tokens, self.decode_ms);
        }
    }
}

impl PhaseCost {
    /// Add another cost's LLM calls (not its wall time).
    pub fn add_calls_of(&mut self, o: &PhaseCost) {
        self.llm_calls += o.llm_calls;
        self.requests += o.requests;
        self.prompt_tokens += o.prompt_tokens;
        self.completion_tokens += o.completion_tokens;
        self.prompt_reused += o.prompt_reused;
        self.prefill_tokens += o.prefill_tokens;
        self.prefill_ms += o.prefill_ms;
        self.decode_tokens += o.decode_tokens;
        self.decode_ms += o.decode_ms;
        self.unconstrained += o.unconstrained;
        self.prefill_tok_s = rate(self.prefill_tokens, self.prefill_ms);
        self.decode_tok_s = rate(self.decode_tokens, self.decode_ms);
    }
}

/// Tokens per second, rounded to 0.1.
fn rate(tokens: u64, ms: f64) -> f64 {
    if ms > 0.0 {
        (tokens as f64 / ms * 10_000.0).round() / 10.0
    } else {
        0.0
    }
}

/// One prompt sent to the LLM and what came back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LlmCall {
    /// Prompt/phase name, e.g. `match_tables`, `attributes`, `query_view`.
    pub phase: String,
    pub messages: Vec<Message>,
    pub temperature: f64,
    pub n: usize,
    /// Whether a JSON schema was sent (`response_schema`).
    pub schema_sent: bool,
    /// Whether the answers were produced under that schema.
    pub structured: bool,
    /// Raw answers, one per sample.
    pub choices: Vec<String>,
    pub usage: Usage,
    pub latency_ms: f64,
    pub requests: u32,
    /// Answers the server cut off at the token limit (`finish_reason:
    /// length`); see `--llm-max-tokens`.
    #[serde(default, skip_serializing_if = "super::chat::is_zero")]
    pub truncated: u32,
    /// Prefill/decode cost when the embedded model answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<crate::types::chat::LocalCost>,
    /// Whether a grammar was sent (`grammar`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub grammar_sent: bool,
    /// Answers the backend stopped because they repeated themselves
    /// (`ChatResponse::cuts`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cuts: Vec<crate::types::chat::Cut>,
    /// Samples not decoded because the vote was decided without them
    /// (`ChatResponse::skipped`).
    #[serde(default, skip_serializing_if = "super::chat::is_zero")]
    pub skipped: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl LlmCall {
    /// A note for errors and warnings when answers were cut off at the token
    /// limit (empty otherwise): the likeliest reason an answer is unusable.
    pub fn truncation_note(&self) -> String {
        if let Some(c) = self.cuts.first() {
            // The backend says why: a loop, which a higher limit would not fix.
            return if self.choices.len() > 1 {
                format!("{} of {} answer(s) were stopped: {}", self.cuts.len(), self.choices.len(), c.describe())
            } else {
                c.describe()
            };
        }
        match self.truncated {
            0 => String::new(),
            t => format!(
                "{t} of {} answer(s) stopped at the token limit (finish_reason \"length\"); raise --llm-max-tokens or the server's limit",
                self.choices.len().max(t as usize)
            ),
        }
    }
}

/// An item and how many samples chose it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vote {
    pub item: String,
    pub votes: usize,
    pub kept: bool,
}

/// A name from an answer mapped to a different model name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Remap {
    pub from: String,
    pub to: String,
    /// `case`, `qualifier`, `normalized`, `fuzzy` or `inner_to_root`.
    pub how: String,
    /// Similarity for fuzzy remaps (Jaro-Winkler on normalised names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// One PROMPTA-style list question (Algorithm 1 lines 5/12, Algorithm 2 line 7/11).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListStep {
    /// `match_tables`, `pattern_children` or `attributes`.
    pub prompt: String,
    /// The table asked about (None for the core-table question).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The names offered to the LLM.
    pub candidates: Vec<String>,
    pub call: LlmCall,
    /// Each sample's answer after parsing and mapping to model names.
    pub samples: Vec<Vec<String>>,
    /// Every item chosen by some sample, ranked.
    pub votes: Vec<Vote>,
    /// Minimum number of votes an item needed.
    pub min_votes: usize,
    /// Relevant tables chosen by this step.
    pub tables: Vec<String>,
    /// Relevant attributes chosen by this step.
    pub attributes: Vec<ColumnRef>,
    pub remaps: Vec<Remap>,
    pub warnings: Vec<String>,
}

/// Phase 1: MatchTables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MatchTrace {
    /// `llm`, or `given` when `--tables/--attrs` replaced the phase.
    pub source: String,
    /// Core tables offered to the first prompt.
    pub core_tables: Vec<String>,
    /// The prefilter's restriction of the core tables, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restricted_to: Option<Vec<String>>,
    pub steps: Vec<ListStep>,
    pub tables: Vec<String>,
    pub attributes: Vec<ColumnRef>,
    pub warnings: Vec<String>,
    pub cost: PhaseCost,
}

impl MatchTrace {
    /// The step of the first prompt, the core-table listing
    /// (`match_tables`; the latest, should a trace hold more than one);
    /// `None` when the phase did not ask it (given tables).
    pub fn listing_step(&self) -> Option<&ListStep> {
        self.steps.iter().rev().find(|s| s.prompt == "match_tables")
    }
}

/// Phase 2: GenerateView.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewTrace {
    /// The solver's input.
    pub request: ViewRequest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ViewResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub cost: PhaseCost,
}

/// `--narrow-view on` for one question (`pipeline::narrow`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NarrowTrace {
    /// Relevant tables the SQL reads no column of.
    pub dropped: Vec<String>,
    /// GenerateView without them, and the same SQL over that view.
    #[serde(flatten)]
    pub rerun: Rerun,
}

/// A view solved again after the answer and the same SQL run over it
/// (`pipeline::rerun`): narrowing, inner branches, lookup filters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rerun {
    /// GenerateView for the changed request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ViewTrace>,
    /// Rows of the SQL over the new view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<usize>,
    /// Whether these rows are the answer.
    #[serde(default)]
    pub used: bool,
    /// Why not, when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `--inner-branches named` for one question (`pipeline::branches`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InnerBranchTrace {
    /// The branches joined by INNER JOIN instead of LEFT JOIN.
    pub tables: Vec<String>,
    /// GenerateView with them INNER-joined, and the same SQL over it.
    #[serde(flatten)]
    pub rerun: Rerun,
}

/// `--lookup-filters named` for one question (`pipeline::lookups`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookupFilterTrace {
    /// The filters put on the view.
    pub filters: Vec<crate::types::ViewFilter>,
    /// For each filter, the lookup value the question named
    /// (`Party_Role.Party_Role_Name 'Agent'`).
    pub because: Vec<String>,
    /// GenerateView with the filters, and the same SQL over it.
    #[serde(flatten)]
    pub rerun: Rerun,
}

/// `--drop-unjoinable on` for one question (`pipeline::unjoinable`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnjoinableTrace {
    /// The relevant tables grouped by the part of the model each lies in.
    pub parts: Vec<Vec<String>>,
    /// The tables of the part kept.
    pub kept: Vec<String>,
    /// The relevant tables dropped.
    pub dropped: Vec<String>,
    /// Why that part.
    pub why: String,
    /// GenerateView over every relevant table (infeasible).
    pub first: ViewTrace,
}

/// What the guard said about one SQL answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default)]
    pub relations: Vec<String>,
    #[serde(default)]
    pub columns: Vec<String>,
}

/// Summary of one execution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecSummary {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub columns: Vec<String>,
    pub row_count: usize,
    pub truncated: bool,
    /// Which bound cut the result (row limit, `--max-result-bytes`, cell cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<String>,
    /// The first rows (at most 10, within a 16 KiB budget).
    pub sample_rows: Vec<Vec<SqlValue>>,
    /// True when the budget cut cells of `sample_rows`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub samples_cut: bool,
    pub ms: f64,
}

/// One SQL answer: the initial one (round 0) or the repair (round 1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SqlAttempt {
    pub round: usize,
    pub call: LlmCall,
    /// The SQL found in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extracted: Option<String>,
    /// How it was found: `sql_fence`, `fence`, `bare` or `none`.
    pub extraction: String,
    pub validation: Validation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ExecSummary>,
    /// What the fan-out analysis found and did (only when it found something).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fanout: Option<super::grain::FanoutReport>,
    /// `DISTINCT` added to a list of rows the view repeats (`--distinct
    /// auto`; only when it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct: Option<super::grain::DistinctNote>,
    /// `COUNT(*)` read as a count of the table the question counts
    /// (`--count-names on`; only when it was rewritten).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<super::grain::CountNote>,
    /// Filters on an entity the question never names, dropped
    /// (`--entity-literals on`; only when one was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub literals: Option<super::grain::LiteralNote>,
    /// Filters mended by the database's values (`--value-literals on`;
    /// only when one was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<super::grain::ValueNote>,
    /// The grouping the question asks "by", added (`--by-groups on`; only
    /// when it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grouped: Option<super::grain::GroupNote>,
    /// `lucy check` of the SQL against the model (the `direct+check`
    /// baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<super::check::CheckReport>,
}

/// Phase 3: QueryView (or the direct baseline's SQL phase).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryTrace {
    /// Prompt used: `query_view`, `query_view_schema` or `direct_sql`.
    pub prompt: String,
    pub attempts: Vec<SqlAttempt>,
    /// The accepted SQL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    pub repaired: bool,
    pub cost: PhaseCost,
    /// The execution-guided choice among sampled answers (`--exec-vote K`,
    /// K ≥ 2); absent when it was off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_vote: Option<ExecVote>,
    /// `--name-hints on`: the lines naming the view column a phrase of the
    /// question spells, as the prompt showed them; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
    /// The first prompt did not fit the model's context and QueryView asked
    /// again with column descriptions cut short (the error it got first);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compacted: Option<String>,
    /// The plan form (`--query-form plan|auto`, issue 46): the plan the
    /// model answered, its table and the SQL it compiled to, and whether
    /// `auto` fell back to free SQL; absent in the `sql` form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanTrace>,
}

/// QueryView's plan form: what the model read the question as.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanTrace {
    /// `plan` or `auto`.
    pub form: String,
    /// The plan as the model answered it, when the answer parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<serde_json::Value>,
    /// What lucy put right in the model's plan before compiling it
    /// (`query::plan::tidy`), one note per change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tidied: Vec<String>,
    /// The plan that was compiled, as a table: what is selected, filtered,
    /// grouped, ordered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table: Vec<PlanLine>,
    /// The SQL the plan compiled to (before the guard's rewrites).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiled: Option<String>,
    /// Why the plan is not the answer: it did not parse or compile, it is
    /// `needs_sql`, or the guard, a rewrite or the run refused its SQL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `auto`: free SQL (the `sql` form) answered instead, after `error`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fell_back: bool,
}

/// One line of a plan's table: the part (`select`, `filter`, `group`,
/// `having`, `order`, `limit`, a kind's own) and what it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanLine {
    pub part: String,
    pub text: String,
}

/// Execution-guided choice (`--exec-vote K`): K answers sampled in one call,
/// each checked by the guard and run read-only; the answer is a candidate of
/// the result that most candidates agree on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecVote {
    /// Answers asked for (K).
    pub k: usize,
    /// The sampling call, when no candidate was chosen (QueryView then ran
    /// as without the vote, its attempts follow). When one was chosen, the
    /// call is the first attempt's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<LlmCall>,
    /// Every sampled answer, in the call's order (candidate 0 is the answer
    /// QueryView takes without the vote).
    pub candidates: Vec<SqlCandidate>,
    /// The distinct results and their votes, most votes first.
    pub results: Vec<VoteResult>,
    /// Index of the chosen candidate; `None` when none passed the guard and
    /// the execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<usize>,
}

/// One sampled SQL answer of an execution vote.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SqlCandidate {
    /// The SQL found in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extracted: Option<String>,
    /// How it was found: `sql_fence`, `fence`, `bare` or `none`.
    pub extraction: String,
    pub validation: Validation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ExecSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fanout: Option<super::grain::FanoutReport>,
    /// `DISTINCT` added to it (`--distinct auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct: Option<super::grain::DistinctNote>,
    /// `COUNT(*)` read as a count of the counted table (`--count-names on`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<super::grain::CountNote>,
    /// Filters on an entity the question never names, dropped (`--entity-literals on`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub literals: Option<super::grain::LiteralNote>,
    /// Filters mended by the database's values (`--value-literals on`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<super::grain::ValueNote>,
    /// The grouping the question asks "by", added (`--by-groups on`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grouped: Option<super::grain::GroupNote>,
    /// An earlier candidate with the same SQL: this one shares its outcome
    /// and was not run again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_as: Option<usize>,
    /// Hash of the result it voted with: `set:` and 16 hex digits for the
    /// rows as a multiset, `seq:` for the rows in order (the SQL has ORDER BY).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_hash: Option<String>,
    /// Votes for its result (0: it did not vote).
    pub votes: usize,
    pub chosen: bool,
}

/// One distinct result of an execution vote.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VoteResult {
    /// `set:…` or `seq:…`, as in [`SqlCandidate::result_hash`].
    pub hash: String,
    /// Candidates whose result it is.
    pub members: Vec<usize>,
    /// Candidates that agree with it: its members, and candidates with the
    /// same rows in another order where one side does not order its rows.
    pub votes: usize,
    pub row_count: usize,
}

impl Trace {
    /// Whether the view showed every column of the tables it joins
    /// (`view.columns` `all` or `all-once`): MatchTables' attributes then
    /// chose none of its columns (and since session 32 are not asked).
    pub fn view_shows_every_column(&self) -> bool {
        self.generate_view.as_ref().is_some_and(|v| v.request.columns.every_table())
    }

    /// Cost per phase, in pipeline order (phases that ran only).
    pub fn phase_costs(&self) -> Vec<(&'static str, PhaseCost)> {
        let mut v = Vec::new();
        if let Some(m) = &self.match_tables {
            v.push(("match_tables", m.cost));
        }
        if let Some(g) = &self.generate_view {
            v.push(("generate_view", g.cost));
        }
        if let Some(q) = &self.query_view {
            v.push((if self.method.starts_with("direct") { "direct_sql" } else { "query_view" }, q.cost));
        }
        v
    }

    /// Read a trace file.
    pub fn load(path: &std::path::Path) -> Result<Trace> {
        let text = read_to_string(path)?;
        serde_json::from_str(&text).map_err(|e| {
            Error::Input(format!("{}: not a lucy trace ({e}); write one with `lucy ask --trace FILE`", path.display()))
        })
    }
}
