//! What a plan may name: the view's columns with their type class, whether
//! SUM/AVG may read them, the literals a text column is offered, and the
//! view's grain (which columns the view repeats). The grammar
//! ([`super::grammar`]) and the compiler ([`super::compile`]) read the
//! same [`PlanView`], so a plan the grammar admits compiles.

use crate::graph::SchemaGraph;
use crate::query::measures::{is_measure_with, sql_type, type_class, TypeClass};
use crate::types::grain::Grain;
use crate::types::{Dialect, FanoutMode, ViewResult};

/// A column's class, for the literals a condition on it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnClass {
    /// JSON numbers.
    Number,
    /// Strings (offered values where known).
    Text,
    /// Date strings (`2020-01-31`, `2020-01`, `2020`, a time after) and
    /// date parts.
    Date,
    /// Anything else: strings, and tests for NULL.
    Other,
}

/// One view column as a plan sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanColumn {
    /// The view column's alias.
    pub alias: String,
    pub class: ColumnClass,
    /// SUM and AVG may read it (`query::measures`).
    pub measure: bool,
    /// The text literals `=`, `!=` and `in` may compare it with; empty:
    /// any string (bounded). `like` always takes any pattern.
    pub values: Vec<String>,
    /// The model table this column refers to, when a relationship joins
    /// it to another table's column (a foreign key): counting it counts
    /// that table's rows.
    pub refers_to: Option<String>,
}

/// The view a plan is written over.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanView {
    pub view_name: String,
    pub columns: Vec<PlanColumn>,
    /// Which instance each column comes from and which joins repeat it.
    pub grain: Grain,
    /// `--fanout`: with `rewrite` an aggregate over repeated rows is
    /// rewritten after compilation (`check::fanout`); otherwise a plan may
    /// not count, sum or average a column the view repeats.
    pub fanout: FanoutMode,
    pub dialect: Dialect,
}

/// A view column's offered literals, for [`PlanView::of_view`]: at most
/// this many values of a fully indexed column become its only choices.
pub const MAX_CLOSED_VALUES: usize = 64;

/// What the value index says about one view column, for
/// [`PlanView::of_view`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnValues {
    pub alias: String,
    /// Values of the column that the question matched.
    pub matched: Vec<String>,
    /// Every value of the column, when the index holds them all.
    pub all: Option<Vec<String>>,
}

impl PlanView {
    /// The plan view of `view`: classes from the model's declared types,
    /// measures from `measures` (aliases; `None`: by the model's keys and
    /// types alone, `query::measures`), offered literals from `values`: a
    /// text column's matched values, and every value of a fully indexed one
    /// with at most [`MAX_CLOSED_VALUES`]; a column with neither takes any
    /// string.
    pub fn of_view(
        graph: &SchemaGraph,
        view: &ViewResult,
        dialect: Dialect,
        fanout: FanoutMode,
        measures: Option<&[String]>,
        values: &[ColumnValues],
    ) -> Self {
        let columns = view
            .columns
            .iter()
            .map(|c| {
                let class = match sql_type(graph, &c.table, &c.column).map(type_class) {
                    Some(TypeClass::Number) => ColumnClass::Number,
                    Some(TypeClass::Temporal) => ColumnClass::Date,
                    Some(TypeClass::Text) | None => ColumnClass::Text,
                    Some(TypeClass::Other) => ColumnClass::Other,
                };
                let measure = match measures {
                    Some(m) => m.iter().any(|a| a == &c.alias),
                    None => is_measure_with(graph, &c.table, &c.column, None),
                };
                let mut offered: Vec<String> = Vec::new();
                if class == ColumnClass::Text {
                    if let Some(v) = values.iter().find(|v| v.alias == c.alias) {
                        offered.extend(v.matched.iter().cloned());
                        if let Some(all) = v.all.as_ref().filter(|a| a.len() <= MAX_CLOSED_VALUES) {
                            offered.extend(all.iter().cloned());
                        }
                    }
                }
                let mut seen = std::collections::HashSet::new();
                offered.retain(|v| v.chars().count() <= super::ast::MAX_TEXT_CHARS && seen.insert(v.clone()));
                let refers_to = graph.model().relationships.iter().find_map(|r| {
                    let col = |i: usize| r.on.iter().any(|p| p[i].eq_ignore_ascii_case(&c.column));
                    if r.from.eq_ignore_ascii_case(&c.table) && col(0) && !r.to.eq_ignore_ascii_case(&c.table) {
                        Some(r.to.clone())
                    } else if r.to.eq_ignore_ascii_case(&c.table) && col(1) && !r.from.eq_ignore_ascii_case(&c.table) {
                        Some(r.from.clone())
                    } else {
                        None
                    }
                });
                PlanColumn { alias: c.alias.clone(), class, measure, values: offered, refers_to }
            })
            .collect();
        PlanView { view_name: view.view_name.clone(), columns, grain: view.grain.clone(), fanout, dialect }
    }

    /// The column of this alias (exact, then case-insensitive).
    pub fn column(&self, alias: &str) -> Option<&PlanColumn> {
        self.columns
            .iter()
            .find(|c| c.alias == alias)
            .or_else(|| self.columns.iter().find(|c| c.alias.eq_ignore_ascii_case(alias)))
    }

    /// The instance a column comes from.
    pub fn instance_of(&self, alias: &str) -> Option<String> {
        self.grain.instance_of(alias).map(|i| i.instance.clone())
    }

    /// Whether an aggregate over `alias` counts rows the view repeats when
    /// the query groups by `groups` (view columns): the grain's multipliers
    /// of its instance and the grouped instances.
    pub fn repeats(&self, alias: &str, groups: &[String]) -> bool {
        let Some(inst) = self.instance_of(alias) else { return false };
        let mut set: Vec<String> = vec![inst];
        set.extend(groups.iter().filter_map(|g| self.instance_of(g)));
        let refs: Vec<&str> = set.iter().map(String::as_str).collect();
        !self.grain.multipliers_of(&refs).is_empty()
    }

    /// The view columns a row of `instance` is told apart by: its key
    /// columns, else every column of it the view holds; empty when the
    /// view holds none (`count_of` cannot count it, and the grammar does not
    /// offer it).
    pub fn row_keys(&self, instance: &str) -> Vec<String> {
        let g = &self.grain;
        match g.instance(instance) {
            Some(i) if !i.key.is_empty() => i.key.clone(),
            _ => g
                .columns
                .iter()
                .filter(|c| c.instance.eq_ignore_ascii_case(instance))
                .map(|c| c.alias.clone())
                .collect(),
        }
    }

    /// The instances `count_of` may count: those with [`row_keys`](Self::row_keys).
    pub fn countable(&self) -> Vec<String> {
        self.grain
            .instances
            .iter()
            .filter(|i| !self.row_keys(&i.instance).is_empty())
            .map(|i| i.instance.clone())
            .collect()
    }

    /// Whether the view repeats `alias`'s rows whatever the grouping (the
    /// grammar's coarse test; the compiler's is [`repeats`](Self::repeats)).
    pub fn repeated(&self, alias: &str) -> bool {
        self.grain.instance_of(alias).is_some_and(|i| !i.multiplied_by.is_empty())
    }
}
