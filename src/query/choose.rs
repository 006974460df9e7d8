//! Execution-guided choice (`--exec-vote K`, issue #23 item 6): QueryView
//! asks for K answers in one call, passes each through the guard (and the
//! fan-out check) and runs it read-only under the usual bounds, and answers
//! with the result most candidates agree on. A candidate the guard rejects,
//! or whose execution fails, does not vote. Ties go to the result of the
//! earliest candidate: candidate 0 is the answer QueryView takes without the
//! vote (the same request with `n = 1` on a backend that seeds samples by
//! index, as the embedded model does).
//!
//! Results are compared as multisets of rows, unless the SQL orders its rows
//! (a top-level ORDER BY): then as sequences. An unordered result agrees
//! with an ordered one holding the same rows, so `… ORDER BY name` and the
//! same query without it vote together, while two orders of the same rows
//! do not. Cells are compared as the values they are: NULL equals NULL, an
//! integral float equals the integer (`3.0` = `3`), other floats agree to 10
//! significant digits (`0.1 + 0.2` = `0.3`), text and blobs byte for byte;
//! column names do not matter, the column count does.
//!
//! If no candidate passes, QueryView runs as without the vote (its own first
//! answer and repair round), at the cost of that one more answer.

use std::time::Instant;

use sha2::{Digest, Sha256};

use super::{attempt_once, extract, generate_sql, SqlOutcome, SqlTask};
use crate::error::{Error, Result};
use crate::llm::{traced, ChatModel, ChatRequest, Message};
use crate::prompts::Prompts;
use crate::types::trace::{ExecVote, QueryTrace, SqlAttempt, SqlCandidate, VoteResult};
use crate::types::{Dialect, SqlValue};

/// Most answers one vote may sample: every candidate's rows (each up to
/// `--max-result-bytes`) are held until the vote is counted.
pub const MAX_EXEC_VOTE: usize = 16;

/// Why a vote cannot run without executing the SQL.
pub const NEEDS_EXECUTION: &str = "--exec-vote K compares the candidates' results, so it needs the SQL executed: add --execute DB|URL (and leave out --stop-after sql and --sql), or use --exec-vote 0";

/// Whether `k` turns the vote on: 0 and 1 leave QueryView as it is.
pub fn is_on(k: usize) -> bool {
    k > 1
}

/// Check `k` against [`MAX_EXEC_VOTE`].
pub fn check_k(k: usize) -> Result<()> {
    if k > MAX_EXEC_VOTE {
        return Err(Error::Input(format!(
            "--exec-vote {k} is more than {MAX_EXEC_VOTE}: each candidate's rows are held until the vote; give 0 (off) or 2 ..= {MAX_EXEC_VOTE}"
        )));
    }
    Ok(())
}

/// QueryView with the execution vote when `k` ≥ 2, else [`generate_sql`]
/// unchanged: `k` answers sampled in one call, each candidate voting in one
/// tally, a tie to the earliest. A failing call fails the vote; when no
/// candidate passes, QueryView runs as without the vote. `task.execute`
/// must be set when the vote is on.
pub fn generate_sql_voted(
    task: &SqlTask,
    k: usize,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    trace: &mut QueryTrace,
) -> Result<SqlOutcome> {
    if !is_on(k) {
        return generate_sql(task, llm, prompts, trace);
    }
    check_k(k)?;
    if task.execute.is_none() {
        return Err(Error::Input(NEEDS_EXECUTION.into()));
    }
    let started = Instant::now();
    trace.prompt = task.prompt_name.clone();
    let mut vote = ExecVote { k, ..ExecVote::default() };
    // `generate_sql`'s first request, asking for k answers.
    let req = ChatRequest {
        phase: task.prompt_name.clone(),
        messages: vec![Message::user(task.prompt.clone())],
        temperature: task.temperature,
        n: k,
        response_schema: None,
        grammar: task.grammar.clone(),
        max_tokens: Some(task.allowed.max_tokens()),
    };
    let (call, result) = traced::call(llm, &req);
    trace.cost.add_call(&call);
    let answers = match result {
        Ok(r) => r.choices,
        Err(e) => {
            vote.call = Some(call);
            trace.exec_vote = Some(vote);
            trace.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
            return Err(e);
        }
    };
    let mut outcomes: Vec<Option<SqlOutcome>> = Vec::with_capacity(answers.len());
    let mut keys: Vec<Option<ResultKey>> = Vec::with_capacity(answers.len());
    for answer in &answers {
        let sql = extract::extract_sql(answer).map(|(s, _)| s);
        // The same SQL again: the same outcome, not run twice; it still
        // votes.
        let same = sql.as_ref().and_then(|s| vote.candidates.iter().position(|c| c.extracted.as_ref() == Some(s)));
        if let Some(j) = same {
            let mut same = vote.candidates[j].clone();
            same.same_as = Some(j);
            same.chosen = false;
            keys.push(keys[j].clone());
            outcomes.push(None);
            vote.candidates.push(same);
            continue;
        }
        let mut attempt = SqlAttempt { round: 0, extraction: "none".into(), ..SqlAttempt::default() };
        let (outcome, _) = attempt_once(task, answer, &mut attempt);
        let outcome = outcome.ok();
        keys.push(outcome.as_ref().and_then(|o| {
            let rows = o.rows.as_ref()?;
            Some(ResultKey::of(rows.columns.len(), &rows.rows, orders_rows(&o.checked.sql, task.dialect)))
        }));
        outcomes.push(outcome);
        vote.candidates.push(SqlCandidate {
            extracted: attempt.extracted,
            extraction: attempt.extraction,
            validation: attempt.validation,
            execution: attempt.execution,
            fanout: attempt.fanout,
            distinct: attempt.distinct,
            counted: attempt.counted,
            literals: attempt.literals,
            values: attempt.values,
            grouped: attempt.grouped,
            ..SqlCandidate::default()
        });
    }
    let tally = tally(&keys);
    for (c, key) in vote.candidates.iter_mut().zip(&keys) {
        if let Some(key) = key {
            c.result_hash = Some(key.label());
            c.votes = tally.results.iter().find(|r| r.key.same_result(key)).map_or(0, |r| r.votes);
        }
    }
    vote.results = tally
        .results
        .iter()
        .map(|r| VoteResult { hash: r.key.label(), members: r.members.clone(), votes: r.votes, row_count: r.key.rows })
        .collect();
    vote.chosen = tally.chosen;
    let chosen = tally.chosen.and_then(|c| {
        let root = vote.candidates[c].same_as.unwrap_or(c);
        outcomes.get_mut(root).and_then(Option::take).map(|o| (c, o))
    });
    let Some((c, outcome)) = chosen else {
        // No candidate passed: QueryView as without the vote.
        vote.chosen = None;
        vote.call = Some(call);
        trace.exec_vote = Some(vote);
        let r = generate_sql(task, llm, prompts, trace);
        trace.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
        return r;
    };
    vote.candidates[c].chosen = true;
    let cand = &vote.candidates[c];
    trace.attempts.push(SqlAttempt {
        round: 0,
        call,
        extracted: cand.extracted.clone(),
        extraction: cand.extraction.clone(),
        validation: cand.validation.clone(),
        execution: cand.execution.clone(),
        fanout: cand.fanout.clone(),
        distinct: cand.distinct.clone(),
        counted: cand.counted.clone(),
        literals: cand.literals.clone(),
        values: cand.values.clone(),
        grouped: cand.grouped.clone(),
        check: None,
    });
    trace.sql = Some(outcome.checked.sql.clone());
    trace.repaired = false;
    trace.exec_vote = Some(vote);
    trace.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(outcome)
}

/// Whether `sql` orders its rows (a top-level ORDER BY, also of a set
/// operation). SQL the guard admitted parses; if it did not, unordered.
pub fn orders_rows(sql: &str, dialect: Dialect) -> bool {
    crate::sql::analyze::parse_query(sql, dialect).is_ok_and(|q| q.order_by.is_some())
}

/// What a candidate's result is compared by: digests of its rows, never the
/// rows themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultKey {
    /// SHA-256 of the column count and the rows as a multiset.
    pub set: [u8; 32],
    /// SHA-256 of the column count and the rows in order, when the SQL
    /// orders them.
    pub seq: Option<[u8; 32]>,
    pub rows: usize,
}

impl ResultKey {
    /// The key of `rows` (of `columns` columns); `ordered` when the SQL
    /// orders its rows.
    pub fn of(columns: usize, rows: &[Vec<SqlValue>], ordered: bool) -> ResultKey {
        let mut encoded: Vec<Vec<u8>> = rows.iter().map(|r| encode_row(r)).collect();
        let seq = ordered.then(|| digest(columns, &encoded));
        encoded.sort_unstable();
        ResultKey { set: digest(columns, &encoded), seq, rows: rows.len() }
    }

    /// The same result (the identity of a [`Tallied`] result): the same
    /// rows, both unordered or both in the same order.
    pub fn same_result(&self, other: &ResultKey) -> bool {
        self.set == other.set && self.seq == other.seq
    }

    /// Whether a candidate with this key agrees with `other`: the same rows,
    /// and the same order unless one of them leaves the order open.
    pub fn agrees(&self, other: &ResultKey) -> bool {
        self.set == other.set && (self.seq.is_none() || other.seq.is_none() || self.seq == other.seq)
    }

    /// `seq:` and 16 hex digits when ordered, else `set:` and 16 hex digits.
    pub fn label(&self) -> String {
        let (tag, d) = match &self.seq {
            Some(s) => ("seq", s),
            None => ("set", &self.set),
        };
        let hex: String = d.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!("{tag}:{hex}")
    }
}

/// One distinct result of a vote.
#[derive(Debug, Clone, PartialEq)]
pub struct Tallied {
    pub key: ResultKey,
    /// Candidates whose result it is, in order.
    pub members: Vec<usize>,
    /// Candidates that agree with it ([`ResultKey::agrees`]).
    pub votes: usize,
}

/// The count of a vote.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    /// Distinct results, most votes first; ties: the one with the earliest
    /// member first.
    pub results: Vec<Tallied>,
    /// The first member of the first result.
    pub chosen: Option<usize>,
}

/// Count the vote over each candidate's key (`None`: it failed and does
/// not vote).
pub fn tally(keys: &[Option<ResultKey>]) -> Tally {
    let mut results: Vec<Tallied> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let Some(key) = key else { continue };
        match results.iter_mut().find(|r| r.key.same_result(key)) {
            Some(r) => r.members.push(i),
            None => results.push(Tallied { key: key.clone(), members: vec![i], votes: 0 }),
        }
    }
    for r in &mut results {
        r.votes = keys.iter().flatten().filter(|k| k.agrees(&r.key)).count();
    }
    results.sort_by(|a, b| b.votes.cmp(&a.votes).then(a.members[0].cmp(&b.members[0])));
    let chosen = results.first().map(|r| r.members[0]);
    Tally { results, chosen }
}

fn digest(columns: usize, rows: &[Vec<u8>]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((columns as u64).to_le_bytes());
    for r in rows {
        h.update((r.len() as u64).to_le_bytes());
        h.update(r);
    }
    h.finalize().into()
}

fn encode_row(row: &[SqlValue]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in row {
        match v {
            SqlValue::Null => out.push(0),
            SqlValue::Integer(i) => tagged(&mut out, 1, i.to_string().as_bytes()),
            SqlValue::Real(r) => tagged(&mut out, 1, canonical_real(*r).as_bytes()),
            SqlValue::Text(s) => tagged(&mut out, 2, s.as_bytes()),
            SqlValue::Blob(b) => tagged(&mut out, 3, b),
        }
    }
    out
}

fn tagged(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    out.extend((bytes.len() as u64).to_le_bytes());
    out.extend(bytes);
}

/// Integers below this magnitude are exact in an `i64` (2^63 ≈ 9.22e18).
const I64_SAFE: f64 = 9.2e18;

/// A float as the vote compares it: integral values as the integer (so
/// `3.0` = `3`), others rounded to 10 significant digits.
fn canonical_real(r: f64) -> String {
    if r.is_nan() {
        return "nan".into();
    }
    if r.is_infinite() {
        return if r > 0.0 { "inf" } else { "-inf" }.into();
    }
    let rounded = format!("{r:.9e}");
    let back: f64 = rounded.parse().unwrap_or(r);
    for x in [r, back] {
        if x.fract() == 0.0 && x.abs() < I64_SAFE {
            return (x as i64).to_string();
        }
    }
    rounded
}

#[cfg(test)]
#[path = "choose_tests.rs"]
mod tests;
