//! [`ask_with_progress`]: the three phases as a sequence a reader can
//! follow. A [`Run`] holds what every phase shares (the question, the
//! options, the prompts, the outcome so far); each phase is one method that
//! either hands the next phase its input or ends the run ([`Flow`]).

use std::time::Instant;

use super::*;

/// Where a phase left the run.
enum Flow<T> {
    /// On to the next phase with this.
    Go(T),
    /// The run ends here: with a failure, or stopped as asked (`None`).
    End(Option<Failure>),
}

/// Go on with the value, or end the run from inside `ask_with_progress`.
macro_rules! go {
    ($flow:expr, $label:lifetime) => {
        match $flow {
            Flow::Go(v) => v,
            Flow::End(f) => break $label f,
        }
    };
}

/// One question's run through the phases.
struct Run<'a> {
    graph: &'a SchemaGraph,
    question: &'a str,
    opts: &'a AskOptions,
    progress: &'a dyn Progress,
    prompts: Prompts,
    dialect: Dialect,
    /// Tables or attributes were given: MatchTables is skipped.
    given: bool,
    /// Where to stop (an offline run stops after the view at the latest).
    stop: Option<StopAfter>,
    started: Instant,
    /// The relevant tables and columns, as phase 1 (or a later step) set them.
    found: Relevance,
    /// The database's values the question matches (`query.values`).
    values: Vec<link::values::ValueMatch>,
    out: AskOutcome,
}

/// [`ask_observed`], telling `progress` as each step starts and around
/// every LLM prompt (see [`progress`]), for a person waiting.
pub fn ask_with_progress(
    graph: &SchemaGraph,
    question: &str,
    opts: &AskOptions,
    llm: Option<&dyn ChatModel>,
    observe: &mut dyn FnMut(&str, &Trace),
    progress: &dyn Progress,
) -> Result<AskOutcome> {
    let _finish = Finish(progress);
    let mut run = Run::new(graph, question, opts, llm, progress)?;
    let end = 'phases: {
        go!(run.match_tables(llm, observe)?, 'phases);
        let view = go!(run.generate_view(observe)?, 'phases);
        let answer = go!(run.query_view(view, llm, observe)?, 'phases);
        run.after_answer(answer);
        None
    };
    Ok(run.finish(end))
}

impl<'a> Run<'a> {
    /// Check the options against each other and start the trace.
    fn new(
        graph: &'a SchemaGraph,
        question: &'a str,
        opts: &'a AskOptions,
        llm: Option<&dyn ChatModel>,
        progress: &'a dyn Progress,
    ) -> Result<Run<'a>> {
        let started = Instant::now();
        let prompts = Prompts::load(opts.prompts_dir.as_deref())?;
        let dialect = dialect_for(graph, opts)?;
        opts.link.check()?;
        let given = !opts.tables.is_empty() || !opts.attrs.is_empty();
        if opts.sql.is_some() && !given {
            return Err(Error::Input(
                "SQL given with --sql is run over the view, which needs its relevant tables: add --tables T1,T2 (or --attrs T.c,…); for SQL over the base tables use --direct --sql".into(),
            ));
        }
        let offline = !given && !opts.linker.needs_llm();
        // Without an LLM, the run ends after the view at the latest.
        let stop = match opts.stop_after {
            Some(StopAfter::Match) => Some(StopAfter::Match),
            _ if offline => Some(StopAfter::View),
            s => s,
        };
        let needs_llm =
            opts.sql.is_none() && (!(given || offline) || !matches!(stop, Some(StopAfter::Match | StopAfter::View)));
        if needs_llm && llm.is_none() {
            return Err(no_llm(if given { "QueryView" } else { "MatchTables" }));
        }
        if query::choose::is_on(opts.query.exec_vote) && !matches!(stop, Some(StopAfter::Match | StopAfter::View)) {
            query::choose::check_k(opts.query.exec_vote)?;
            if opts.execute.is_none() || opts.sql.is_some() || stop == Some(StopAfter::Sql) {
                return Err(Error::Input(query::choose::NEEDS_EXECUTION.into()));
            }
        }
        let mut out = AskOutcome {
            trace: new_trace(graph, "lucy", question, opts, llm.filter(|_| opts.sql.is_none())),
            tables: Vec::new(),
            attributes: Vec::new(),
            view: None,
            sql: None,
            rows: None,
            stopped_after: None,
            failure: None,
        };
        if let Some(ex) = &opts.examples {
            out.trace.examples = Some(examples_trace(ex));
        }
        Ok(Run {
            graph,
            question,
            opts,
            progress,
            prompts,
            dialect,
            given,
            stop,
            started,
            found: Relevance::default(),
            values: Vec::new(),
            out,
        })
    }

    /// The outcome, ended with `failure` (or none).
    fn finish(mut self, failure: Option<Failure>) -> AskOutcome {
        let out = &mut self.out;
        out.trace.failure = failure.clone();
        out.failure = failure;
        out.trace.stopped_after = out.stopped_after.map(|s| s.as_str().to_string());
        out.trace.total_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        self.out
    }

    /// End the run here when asked to stop after `phase`.
    fn stop_after(&mut self, phase: StopAfter) -> Flow<()> {
        if self.stop == Some(phase) {
            self.out.stopped_after = Some(phase);
            return Flow::End(None);
        }
        Flow::Go(())
    }

    /// Phase 1: the relevant tables and attributes (given, found offline,
    /// or MatchTables' prompts).
    fn match_tables(&mut self, llm: Option<&dyn ChatModel>, observe: &mut dyn FnMut(&str, &Trace)) -> Result<Flow<()>> {
        let (graph, question, opts) = (self.graph, self.question, self.opts);
        if !self.given {
            self.progress.step(Step::MatchTables);
        }
        let mut mt = MatchTrace::default();
        self.values = matched_values(graph, question, opts, &mut mt.warnings);
        let mut fail = None;
        if self.given {
            self.found = given_relevance(graph, &opts.tables, &opts.attrs)?;
            (mt.tables, mt.attributes) = relevance_names(graph, &self.found);
            mt.source = opts.given_source.clone().unwrap_or_else(|| "given".into());
        } else if let Some((rel, source)) = opts.linker.offline(graph, question)? {
            self.found = rel;
            (mt.tables, mt.attributes) = relevance_names(graph, &self.found);
            mt.source = source;
        } else if let Some(llm) = llm {
            let reporting = progress::Reporting::new(llm, self.progress, Step::MatchTables, table_names(graph));
            fail = self.match_with_llm(&reporting, &mut mt)?;
        }
        self.out.tables = mt.tables.clone();
        self.out.attributes = mt.attributes.clone();
        self.out.trace.match_tables = Some(mt);
        observe("match_tables", &self.out.trace);
        if fail.is_some() {
            return Ok(Flow::End(fail));
        }
        Ok(self.stop_after(StopAfter::Match))
    }

    /// MatchTables by the LLM, with the prefilter and the verified
    /// queries' tables; a failure of the phase comes back as `Some`.
    fn match_with_llm(&mut self, llm: &dyn ChatModel, mt: &mut MatchTrace) -> Result<Option<Failure>> {
        let (graph, question, opts) = (self.graph, self.question, self.opts);
        let mut mopts = opts.link.clone();
        let prefilter = opts.linker.restriction(graph, question, Some(llm))?;
        mopts.restrict_core_tables = prefilter.or(opts.restrict_core_tables.clone()).or(mopts.restrict_core_tables);
        if let (Some(ex), Some(offered)) = (&opts.examples, mopts.restrict_core_tables.as_mut()) {
            if ex.tables == ExampleTables::Offer {
                let added = offer_example_tables(graph, ex, offered);
                if let Some(t) = self.out.trace.examples.as_mut() {
                    t.tables = added;
                }
            }
        }
        mopts.values = self.values.clone();
        // A view of every column of its tables reads nothing of the
        // attribute prompts' answers.
        mopts.attributes = !opts.view.columns.every_table();
        let fail = match link::match_tables(graph, question, &mopts, llm, &self.prompts, mt) {
            Err(e) => Some(failure("match_tables", kind_of(&e), e.to_string())),
            Ok(r) if r.tables.is_empty() && r.roles.is_empty() => {
                let why = mt.steps.first().map(|s| s.warnings.join("; ")).unwrap_or_default();
                Some(failure("match_tables", "nothing_matched", format!("MatchTables found no relevant table ({why})")))
            }
            Ok(r) => {
                self.found = r;
                None
            }
        };
        if let (None, Some(ex)) = (&fail, &opts.examples) {
            if ex.tables == ExampleTables::Add {
                let added = add_example_tables(graph, ex, self.dialect, &mut self.found);
                if !added.is_empty() {
                    (mt.tables, mt.attributes) = relevance_names(graph, &self.found);
                    mt.source = format!("{} + examples", if mt.source.is_empty() { "llm" } else { &mt.source });
                }
                if let Some(t) = self.out.trace.examples.as_mut() {
                    t.tables = added;
                }
            }
        }
        Ok(fail)
    }

    /// Phase 2: the view over the relevant tables (solved again without
    /// the parts no relationship joins, `view.drop_unjoinable`).
    fn generate_view(&mut self, observe: &mut dyn FnMut(&str, &Trace)) -> Result<Flow<ViewResult>> {
        self.progress.step(Step::GenerateView);
        let opts = self.opts;
        let req = ViewRequest {
            tables: self.out.tables.clone(),
            attributes: self.out.attributes.clone(),
            dialect: self.dialect,
            view_name: opts.view.name.clone(),
            time_limit_s: opts.limits.solver_time_limit_s,
            keep: opts.keep.clone(),
            inner_branches: Vec::new(),
            filters: Vec::new(),
            columns: opts.view.columns,
        };
        let t0 = Instant::now();
        let solved = crate::solve::generate(self.graph, &self.found, &req.options());
        let mut vt = ViewTrace { request: req, result: None, error: None, cost: Default::default() };
        vt.cost.ms = t0.elapsed().as_secs_f64() * 1000.0;
        let solved = match solved {
            Ok(first) if first.status == SolveStatus::Infeasible && opts.view.drop_unjoinable && !self.given => {
                self.drop_unjoinable(first, &mut vt)
            }
            other => other,
        };
        let flow = match solved {
            Ok(v) if v.status == SolveStatus::Infeasible => {
                let why = v.explanation.clone().unwrap_or_else(|| "no view satisfies the model's constraints".into());
                vt.result = Some(v);
                Flow::End(Some(failure("generate_view", "infeasible", format!("GenerateView infeasible: {why}"))))
            }
            Ok(v) => {
                vt.result = Some(v.clone());
                self.out.view = Some(v.clone());
                Flow::Go(v)
            }
            Err(e) => {
                vt.error = Some(e.to_string());
                Flow::End(Some(failure("generate_view", kind_of(&e), e.to_string())))
            }
        };
        self.out.trace.generate_view = Some(vt);
        observe("generate_view", &self.out.trace);
        Ok(match flow {
            Flow::Go(v) => match self.stop_after(StopAfter::View) {
                Flow::Go(()) => Flow::Go(v),
                Flow::End(f) => Flow::End(f),
            },
            end => end,
        })
    }

    /// `view.drop_unjoinable`: relevant tables no relationship joins to the
    /// rest; keep the best part and solve again (the first try kept in the
    /// trace's `unjoinable`).
    fn drop_unjoinable(&mut self, first: ViewResult, vt: &mut ViewTrace) -> Result<ViewResult> {
        let graph = self.graph;
        let top = self.out.trace.match_tables.as_ref().and_then(top_voted).and_then(|t| graph.table_id(&t));
        let Some(k) = unjoinable::keep_best(graph, self.question, &self.found, top) else { return Ok(first) };
        vt.result = Some(first);
        let (tables, attributes) = relevance_names(graph, &k.relevance);
        let req = ViewRequest { tables, attributes, ..vt.request.clone() };
        let t1 = Instant::now();
        let again = crate::solve::generate(graph, &k.relevance, &req.options());
        let first =
            std::mem::replace(vt, ViewTrace { request: req, result: None, error: None, cost: Default::default() });
        vt.cost.ms = t1.elapsed().as_secs_f64() * 1000.0;
        self.out.trace.unjoinable =
            Some(UnjoinableTrace { parts: k.parts, kept: k.kept, dropped: k.dropped, why: k.why, first });
        self.found = k.relevance;
        self.out.tables = vt.request.tables.clone();
        self.out.attributes = vt.request.attributes.clone();
        again
    }

    /// Phase 3: the SQL over the view (given with `--sql`, or QueryView's),
    /// checked, rewritten and run.
    fn query_view(
        &mut self,
        view: ViewResult,
        llm: Option<&dyn ChatModel>,
        observe: &mut dyn FnMut(&str, &Trace),
    ) -> Result<Flow<(ViewResult, bool)>> {
        self.progress.step(Step::QueryView);
        let run_it = self.stop != Some(StopAfter::Sql);
        let mut qt = QueryTrace::default();
        let r = match (&self.opts.sql, llm) {
            (Some(sql), _) => self.given_sql(sql, &view, run_it, &mut qt),
            (None, None) => return Err(no_llm("QueryView")),
            (None, Some(llm)) => {
                let tables = table_names(self.graph);
                let reporting = progress::Reporting::new(llm, self.progress, Step::QueryView, tables);
                self.written_sql(&view, run_it, &reporting, &mut qt)
            }
        };
        self.out.trace.query_view = Some(qt);
        observe("query_view", &self.out.trace);
        match r {
            Ok(o) => {
                self.out.sql = Some(o.checked.sql);
                self.out.rows = o.rows;
                Ok(Flow::Go((view, run_it)))
            }
            Err(e) => {
                let (phase, msg) = match &e {
                    Error::Db(m) => ("execute", format!("execution failed after the repair round: {m}")),
                    Error::Sql(m) => ("query_view", format!("QueryView SQL rejected after the repair round: {m}")),
                    other => ("query_view", other.to_string()),
                };
                Ok(Flow::End(Some(failure(phase, kind_of(&e), msg))))
            }
        }
    }

    /// `--sql`: the given SQL through the same guard, rewrite and execution.
    fn given_sql(&self, sql: &str, view: &ViewResult, run_it: bool, qt: &mut QueryTrace) -> Result<query::SqlOutcome> {
        let exec = exec_target(self.opts, view, run_it);
        let task = given_task(allowed_over(view), self.dialect, exec, Some((view, self.opts.query.fanout)));
        query::run_given(&task, sql, qt)
    }

    /// QueryView: the LLM writes the SQL over `view` (`query.exec_vote`
    /// answers voted by their results); a prompt over the model's context
    /// is asked again with short column descriptions.
    fn written_sql(
        &mut self,
        view: &ViewResult,
        run_it: bool,
        llm: &dyn ChatModel,
        qt: &mut QueryTrace,
    ) -> Result<query::SqlOutcome> {
        let (graph, question, opts) = (self.graph, self.question, self.opts);
        let counted = if opts.query.count_names { counted_instance(graph, question, view) } else { None };
        let at = ViewAt { graph, question, opts, prompts: &self.prompts, dialect: self.dialect, values: &self.values };
        let (exec, allowed) = (exec_target(opts, view, run_it), allowed_over(view));
        let (task, compact) = at.task(view, counted.as_deref(), self.out.trace.examples.as_mut(), qt, exec, allowed)?;
        let prompts = &self.prompts;
        let voted = |task: &SqlTask, qt: &mut QueryTrace| {
            query::choose::generate_sql_voted(task, opts.query.exec_vote, llm, prompts, qt)
        };
        // `query.form` plan or auto: the plan first (free SQL its fallback).
        let shown =
            self.out.trace.examples.as_ref().map_or(0, |e| e.used.iter().filter(|u| u.in_prompt.is_some()).count());
        let plan = super::plan_form::plan_task(graph, question, opts, prompts, self.dialect, view, qt)?
            .map(|p| query::plan::PlanTask { examples_shown: shown, ..p });
        let plan_sql_task = task.clone();
        let sql_path = |qt: &mut QueryTrace| match voted(&task, qt) {
            // The prompt did not fit the model's context: once more with the
            // column descriptions cut short (the view and the names unchanged).
            Err(e) if opts.query.shorten_prompt && crate::llm::is_context_overflow(&e) && compact != task.prompt => {
                qt.compacted = Some(e.to_string());
                let task = SqlTask { prompt: compact, ..task };
                voted(&task, qt)
            }
            r => r,
        };
        match plan {
            Some(p) => query::plan::generate(&p, &plan_sql_task, llm, qt, sql_path),
            None => sql_path(qt),
        }
    }

    /// After the answer ran: the view narrowed, a branch INNER-joined, a
    /// lookup row filtering it (each runs the same SQL again; no LLM call).
    fn after_answer(&mut self, (view, run_it): (ViewResult, bool)) {
        let (graph, question, opts) = (self.graph, self.question, self.opts);
        let out = &mut self.out;
        // Tables the person gave (`--tables`) are never narrowed away: they
        // chose the view, and a `COUNT(*)` over it counts its rows.
        let narrow_it = opts.tables.is_empty() && out.rows.as_ref().is_some_and(|rows| opts.view.narrow.applies(rows));
        if let (true, Some(db), Some(vt)) =
            (narrow_it, opts.execute.as_ref().filter(|_| run_it), &out.trace.generate_view)
        {
            let exec = answer_exec(opts);
            let (sql, written) = answer_sql(out);
            let named = match opts.view.narrow {
                narrow::NarrowView::Unnamed => link::named::core_tables(graph, question, &self.found.tables, &[]),
                _ => Vec::new(),
            };
            let narrowed = narrow::narrow(graph, &self.found, &vt.request, &view, &sql, &written, &named, db, &exec);
            out.trace.narrowed = take(narrowed, out);
        }
        if let (true, Some(db), Some(vt)) =
            (out.rows.is_some(), opts.execute.as_ref().filter(|_| run_it), &out.trace.generate_view)
        {
            let first = vt.request.clone();
            if opts.view.inner_branches == branches::InnerBranches::Named {
                inner_branches(graph, question, opts, &first, db, out);
            }
            if opts.view.lookup_filters == lookups::LookupFilters::Named {
                lookup_filters(graph, question, opts, &first, db, out);
            }
        }
        if self.stop == Some(StopAfter::Sql) {
            out.stopped_after = Some(StopAfter::Sql);
        }
    }
}
