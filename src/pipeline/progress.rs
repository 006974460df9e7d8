//! Progress of one question for a person waiting: which phase runs, which
//! prompt is in flight, how fast the model answers.
//!
//! The pipeline calls a [`Progress`] observer at each phase start and
//! around every LLM prompt; it never prints. The observer decides what to
//! show: `lucy ask` draws a one-line status on a terminal's stderr
//! (`src/cli/ask.rs`), everything else passes [`NoProgress`]. Prompts are
//! seen by wrapping the LLM in [`Reporting`], a [`ChatModel`] that reports
//! each request to the observer and forwards it unchanged (same request,
//! same answer, so cassette keys and traces do not change).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Result;
use crate::llm::{ChatModel, ChatRequest, ChatResponse};

/// A step of the pipeline, in the order [`super::ask`] runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Phase 1: the relevant tables and attributes (LLM prompts).
    MatchTables,
    /// Phase 2: the solver builds the view (no LLM).
    GenerateView,
    /// Phase 3: SQL over the view, its repair round and its execution.
    QueryView,
    /// The direct baseline: SQL over the whole schema.
    DirectSql,
}

impl Step {
    /// The step as the status line names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Step::MatchTables => "MatchTables",
            Step::GenerateView => "GenerateView",
            Step::QueryView => "QueryView",
            Step::DirectSql => "SQL (direct)",
        }
    }
}

/// One LLM prompt of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    pub step: Step,
    /// 1 for the step's first prompt, 2 for the next, … (prompts of
    /// concurrent explorations are numbered as they start).
    pub index: usize,
    /// The prompt's name (`ChatRequest::phase`: `match_tables`,
    /// `attributes`, `pattern_children`, `match_roles`, `query_view`,
    /// `query_view_repair`, …).
    pub prompt: String,
    /// The table a per-table prompt is about, when the prompt names one
    /// of the model's tables as "table NAME" (the built-in templates do).
    pub subject: Option<String>,
    /// Samples asked for.
    pub samples: usize,
}

impl PromptInfo {
    /// What the prompt asks, in words: `attributes of CLIENT`.
    pub fn describe(&self) -> String {
        let what = match self.prompt.as_str() {
            "match_tables" => "relevant tables",
            "attributes" => "attributes",
            "pattern_children" => "pattern children",
            "match_roles" => "roles",
            "describe_table" => "description",
            p if p.ends_with("_repair") => "SQL repair",
            "query_view" | "query_view_schema" | "direct_sql" => "SQL",
            "query_plan" => "query plan",
            p => p,
        };
        match &self.subject {
            Some(t) => format!("{what} of {t}"),
            None => what.to_string(),
        }
    }
}

/// How one prompt went.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PromptStats {
    pub ok: bool,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Wall time of the call, in milliseconds.
    pub ms: f64,
    /// Time spent generating (the embedded model says; else the whole call).
    pub decode_ms: f64,
}

impl PromptStats {
    /// Generated tokens per second (0 when nothing was generated).
    pub fn tokens_per_s(&self) -> f64 {
        if self.completion_tokens == 0 || self.decode_ms <= 0.0 {
            0.0
        } else {
            self.completion_tokens as f64 * 1000.0 / self.decode_ms
        }
    }
}

/// An observer of one question's progress. Every method has a no-op
/// default; prompts of concurrent explorations may be reported from
/// several threads at once.
pub trait Progress: Send + Sync {
    /// A step starts.
    fn step(&self, _step: Step) {}
    /// A prompt is sent.
    fn prompt_started(&self, _prompt: &PromptInfo) {}
    /// A prompt's answer (or error) is back.
    fn prompt_finished(&self, _prompt: &PromptInfo, _stats: &PromptStats) {}
    /// The question is done (answered or failed).
    fn finished(&self) {}
}

/// The observer that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// A [`ChatModel`] that reports every request of one step to a
/// [`Progress`] and forwards it unchanged.
pub struct Reporting<'a> {
    inner: &'a dyn ChatModel,
    progress: &'a dyn Progress,
    step: Step,
    started: AtomicUsize,
    /// The model's table names, to find a per-table prompt's subject.
    tables: Vec<String>,
}

impl<'a> Reporting<'a> {
    /// Wrap `inner` for `step`; `tables` are the model's table names.
    pub fn new(inner: &'a dyn ChatModel, progress: &'a dyn Progress, step: Step, tables: Vec<String>) -> Self {
        Reporting { inner, progress, step, started: AtomicUsize::new(0), tables }
    }
}

/// The table a per-table prompt is about: the first "table NAME" in its
/// text whose NAME is one of `tables`. Prompts over many tables (the first
/// MatchTables prompt, SQL) have none.
fn subject(req: &ChatRequest, tables: &[String]) -> Option<String> {
    if matches!(req.phase.as_str(), "match_tables" | "direct_sql") || req.phase.starts_with("query_view") {
        return None;
    }
    let text = &req.messages.last()?.content;
    text.match_indices("table ").find_map(|(i, w)| {
        let rest = &text[i + w.len()..];
        let word: String = rest.chars().take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '$')).collect();
        tables.iter().find(|t| t.eq_ignore_ascii_case(&word)).cloned()
    })
}

impl ChatModel for Reporting<'_> {
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
        self.report(req, None)
    }

    fn chat_until(&self, req: &ChatRequest, decided: &crate::llm::Decider<'_>) -> Result<ChatResponse> {
        self.report(req, Some(decided))
    }

    fn model_name(&self) -> String {
        self.inner.model_name()
    }

    fn honours_grammar(&self) -> bool {
        self.inner.honours_grammar()
    }
}

impl Reporting<'_> {
    fn report(&self, req: &ChatRequest, decided: Option<&crate::llm::Decider<'_>>) -> Result<ChatResponse> {
        let info = PromptInfo {
            step: self.step,
            index: self.started.fetch_add(1, Ordering::SeqCst) + 1,
            prompt: req.phase.clone(),
            subject: subject(req, &self.tables),
            samples: req.n,
        };
        self.progress.prompt_started(&info);
        let t0 = std::time::Instant::now();
        let result = match decided {
            Some(d) => self.inner.chat_until(req, d),
            None => self.inner.chat(req),
        };
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        let stats = match &result {
            Ok(r) => PromptStats {
                ok: true,
                prompt_tokens: r.usage.prompt_tokens,
                completion_tokens: r.usage.completion_tokens,
                ms,
                decode_ms: r.local.map(|l| l.decode_ms).filter(|d| *d > 0.0).unwrap_or(ms),
            },
            Err(_) => PromptStats { ms, decode_ms: ms, ..PromptStats::default() },
        };
        self.progress.prompt_finished(&info, &stats);
        result
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::llm::fake::FakeChat;
    use crate::pipeline::{ask_with_progress, direct_sql_with_progress, AskOptions};

    /// Every event, as text.
    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);

    impl Progress for Log {
        fn step(&self, step: Step) {
            self.0.lock().unwrap().push(format!("step {}", step.as_str()));
        }
        fn prompt_started(&self, p: &PromptInfo) {
            self.0.lock().unwrap().push(format!("start {} {} {}", p.step.as_str(), p.index, p.describe()));
        }
        fn prompt_finished(&self, p: &PromptInfo, s: &PromptStats) {
            self.0.lock().unwrap().push(format!(
                "done {} {} ok={} tokens={}",
                p.step.as_str(),
                p.index,
                s.ok,
                s.completion_tokens
            ));
        }
        fn finished(&self) {
            self.0.lock().unwrap().push("finished".into());
        }
    }

    use crate::graph::fixtures::ddo;

    const Q1: &str =
        "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

    fn q1_chat() -> FakeChat {
        FakeChat::new()
            .on(&["JSON schema of the database"], &["[\"CLIENT\", \"DATACENTER\"]"])
            .on(&["JSON schema of the table CLIENT"], &["[name]"])
            .on(&["JSON schema of the table DATACENTER"], &["[name]"])
            .on(
                &["with a JSON query plan"],
                &[r#"{"kind": "query", "select": [{"col": "CLIENT_name"}, {"col": "DATACENTER_name"}], "where": {"col": "DATACENTER_name", "op": "like", "value": "dev%"}}"#],
            )
            .on(
                &["I created a view table lucy_view"],
                &["```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```"],
            )
    }

    /// Q1's events besides the attribute prompts (which only the paper's
    /// `selected` view asks).
    const Q1_EVENTS: [&str; 8] = [
        "step MatchTables",
        "start MatchTables 1 relevant tables",
        "done MatchTables 1 ok=true tokens=2",
        "step GenerateView",
        "step QueryView",
        "start QueryView 1 query plan",
        "done QueryView 1 ok=true tokens=2",
        "finished",
    ];

    #[test]
    fn the_observer_sees_every_step_and_prompt_in_order() {
        let chat = q1_chat();
        let log = Log::default();
        // The paper's view, whose columns the attribute prompts choose (the
        // default view shows every column and asks none of them).
        let opts = AskOptions {
            view: crate::pipeline::ViewSettings { columns: crate::types::ViewColumns::Selected, ..Default::default() },
            ..AskOptions::default()
        };
        let o = ask_with_progress(&ddo(), Q1, &opts, Some(&chat), &mut |_, _| {}, &log).unwrap();
        assert!(o.failure.is_none(), "{:?}", o.failure);
        let events = log.0.into_inner().unwrap();
        // The two attribute prompts run concurrently: compare them as a set.
        let (mut attrs, rest): (Vec<String>, Vec<String>) = events
            .into_iter()
            .partition(|e| e.starts_with("start MatchTables 2") || e.starts_with("start MatchTables 3"));
        attrs.iter_mut().for_each(|e| *e = e.replacen(" 2 ", " N ", 1).replacen(" 3 ", " N ", 1));
        attrs.sort();
        assert_eq!(attrs, ["start MatchTables N attributes of CLIENT", "start MatchTables N attributes of DATACENTER"]);
        let rest: Vec<&str> = rest
            .iter()
            .map(String::as_str)
            .filter(|e| !e.starts_with("done MatchTables 2") && !e.starts_with("done MatchTables 3"))
            .collect();
        assert_eq!(rest, Q1_EVENTS);
    }

    #[test]
    fn the_default_view_of_every_column_asks_no_attribute_prompt() {
        let chat = q1_chat();
        let log = Log::default();
        let o = ask_with_progress(&ddo(), Q1, &AskOptions::default(), Some(&chat), &mut |_, _| {}, &log).unwrap();
        assert!(o.failure.is_none(), "{:?}", o.failure);
        assert_eq!(o.sql.as_deref().map(|s| s.contains("DATACENTER_name LIKE 'dev%'")), Some(true), "{:?}", o.sql);
        assert_eq!(log.0.into_inner().unwrap(), Q1_EVENTS);
        assert_eq!(chat.phases(), ["match_tables", "query_plan"]);
        let report = crate::pipeline::explain::render(&o.trace);
        assert!(
            report.contains("relevant attributes: every column of these tables (the view shows them all)\n"),
            "{report}"
        );
    }

    #[test]
    fn a_failing_prompt_is_reported_and_the_run_still_finishes() {
        let chat = FakeChat::new().fail(&["JSON schema of the database"], "scripted outage");
        let log = Log::default();
        let o = ask_with_progress(&ddo(), Q1, &AskOptions::default(), Some(&chat), &mut |_, _| {}, &log).unwrap();
        assert!(o.failure.is_some());
        assert_eq!(
            log.0.into_inner().unwrap(),
            [
                "step MatchTables",
                "start MatchTables 1 relevant tables",
                "done MatchTables 1 ok=false tokens=0",
                "finished"
            ]
        );
    }

    #[test]
    fn the_direct_baseline_reports_its_one_step() {
        let chat = FakeChat::new().on(&["CREATE TABLE"], &["```sql\nSELECT name FROM CLIENT\n```"]);
        let log = Log::default();
        let o = direct_sql_with_progress(&ddo(), Q1, None, &AskOptions::default(), Some(&chat), &log).unwrap();
        assert!(o.failure.is_none(), "{:?}", o.failure);
        assert_eq!(
            log.0.into_inner().unwrap(),
            ["step SQL (direct)", "start SQL (direct) 1 SQL", "done SQL (direct) 1 ok=true tokens=2", "finished"]
        );
    }

    #[test]
    fn a_per_table_prompt_names_its_table() {
        let req = |phase: &str, text: &str| ChatRequest {
            phase: phase.into(),
            messages: vec![crate::llm::Message::user(text)],
            temperature: 0.2,
            n: 5,
            response_schema: None,
            grammar: None,
            max_tokens: None,
        };
        let tables = vec!["CLIENT".to_string(), "DATACENTER".to_string()];
        let r = req("attributes", "Here is a JSON schema of the table CLIENT. \"DescriptionField\" …");
        assert_eq!(subject(&r, &tables).as_deref(), Some("CLIENT"));
        let r = req("pattern_children", "… the table datacenter is part of a star pattern");
        assert_eq!(subject(&r, &tables).as_deref(), Some("DATACENTER"));
        // A word that is no table of the model, and prompts over many tables.
        assert_eq!(subject(&req("attributes", "the table below"), &tables), None);
        assert_eq!(subject(&req("match_tables", "the table CLIENT"), &tables), None);
        assert_eq!(subject(&req("query_view_repair", "the table CLIENT"), &tables), None);
    }
}
