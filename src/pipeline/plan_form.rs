//! QueryView's plan form (`--query-form plan|auto`, issue 46): the plan
//! task over one view ([`crate::query::plan`]). The plan view's measures
//! come from `measures` (the value index deciding for text columns), and
//! its offered literals from the value index whenever a database is given
//! (`--execute`), whatever `--values` says: the values the question matches
//! in a view column, and all values of a fully indexed column with few of
//! them. The prompt shows the same matched values and the name hints.

use crate::error::Result;
use crate::graph::SchemaGraph;
use crate::link;
use crate::prompts::Prompts;
use crate::query::plan::{self, ColumnValues, PlanPromptExtras, PlanTask, PlanView, QueryForm};
use crate::types::trace::QueryTrace;
use crate::types::{Dialect, ViewResult};

use super::{measures, AskOptions};

/// The plan task over `view`, or `None` in the `sql` form. `qt` holds the
/// name hints QueryView's task computed (shown in the plan prompt too).
/// Its `examples_shown` is 0: the caller counts the verified queries.
pub(super) fn plan_task(
    graph: &SchemaGraph,
    question: &str,
    opts: &AskOptions,
    prompts: &Prompts,
    dialect: Dialect,
    view: &ViewResult,
    qt: &QueryTrace,
) -> Result<Option<PlanTask>> {
    if opts.query.form == QueryForm::Sql {
        return Ok(None);
    }
    let index = opts.execute.as_ref().and_then(|db| link::values::shared(graph, db).ok()).map(|(i, _)| i);
    let measure_cols = measures::measure_columns(graph, &view.columns, index.as_deref());
    let matches = match &index {
        Some(i) => link::values::match_question(graph, i, question),
        None => Vec::new(),
    };
    let values: Vec<ColumnValues> = view
        .columns
        .iter()
        .map(|c| {
            let matched = matches
                .iter()
                .filter(|m| {
                    let (t, col) = graph.column_names(m.column);
                    t == c.table && col.eq_ignore_ascii_case(&c.column)
                })
                .map(|m| m.value.clone())
                .collect();
            let all = index.as_ref().and_then(|i| {
                i.columns
                    .iter()
                    .find(|x| x.complete && x.table == c.table && x.column.eq_ignore_ascii_case(&c.column))
                    .map(|x| x.values.clone())
            });
            ColumnValues { alias: c.alias.clone(), matched, all }
        })
        .collect();
    let pv = PlanView::of_view(graph, view, dialect, opts.query.fanout, Some(&measure_cols), &values);
    let notes = link::values::view_notes(graph, &matches, &view.columns);
    let extras = PlanPromptExtras {
        evidence: opts.evidence.as_deref(),
        values: &notes,
        hints: &qt.hints,
        description_chars: None,
    };
    let prompt = plan::plan_prompt(prompts, view, &pv, question, extras)?;
    let grammar = plan::grammar::plan_grammar(&pv, &plan::Cues::of(question));
    Ok(Some(PlanTask {
        form: opts.query.form,
        question: match opts.evidence.as_deref() {
            Some(e) if !e.is_empty() => format!("{question}\n{e}"),
            _ => question.to_string(),
        },
        prompt,
        view: pv,
        grammar,
        temperature: opts.query.temperature,
        max_tokens: opts.query.plan_max_tokens,
        examples_shown: 0,
    }))
}
