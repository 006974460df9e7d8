//! The settings of [`super::ask`], one struct per phase, each with one
//! `Default` and `#[serde(default)]`, so that a project file, `--set
//! PHASE.KEY=VALUE`, the HTTP API and a trace's `options` all name a
//! setting the same way (`query.exec_vote`, `limits.rows`).
//!
//! MatchTables' settings are [`crate::link::MatchOptions`] (key `link`);
//! GenerateView's [`ViewSettings`] (`view`), QueryView's
//! [`QuerySettings`] (`query`) and the bounds of a run [`Limits`]
//! (`limits`). [`LEVERS`] documents every key with the measurement that
//! set its default; a unit test keeps it equal to the structs' fields.

use serde::{Deserialize, Serialize};

use crate::query::grammar::QueryNames;
use crate::sql::exec::DEFAULT_MAX_RESULT_BYTES;
use crate::types::{DistinctMode, FanoutMode, ViewColumns};

use super::{branches, lookups, narrow, unjoinable};

/// GenerateView's settings (`view.*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ViewSettings {
    /// Name of the view the SQL reads.
    pub name: String,
    /// Which columns the view holds: `all` (every column of every joined
    /// table), `selected` (the paper's: chosen attributes and keys).
    pub columns: ViewColumns,
    /// When the relevant tables lie in parts no relationship joins, keep
    /// the best part and solve again.
    pub drop_unjoinable: bool,
    /// After the SQL runs: drop relevant tables it reads nothing of and run
    /// it again over the narrower view (`off|empty|on|unnamed`).
    pub narrow: narrow::NarrowView,
    /// After the SQL runs: INNER-join the pattern branch the answer is
    /// about and run it again (`named|off`).
    pub inner_branches: branches::InnerBranches,
    /// After the SQL runs: a lookup row the question names filters the
    /// view and the SQL runs again (`named|off`).
    pub lookup_filters: lookups::LookupFilters,
}

impl Default for ViewSettings {
    fn default() -> Self {
        ViewSettings {
            name: crate::types::default_view_name(),
            columns: ViewColumns::All,
            drop_unjoinable: unjoinable::DEFAULT_ON,
            narrow: narrow::DEFAULT,
            inner_branches: branches::DEFAULT,
            lookup_filters: lookups::DEFAULT,
        }
    }
}

/// QueryView's settings (`query.*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QuerySettings {
    /// Sampling temperature of the SQL-writing prompts.
    pub temperature: f64,
    /// PROMPTC' (the relevant tables' DDL with descriptions) instead of
    /// PROMPTC.
    pub schema_context: bool,
    /// Names QueryView's grammar admits where a column may be written
    /// (`free|strict`).
    pub names: QueryNames,
    /// Rename a column the guard rejects to the one view column it
    /// unambiguously means, before any repair call.
    pub rename_unknown: bool,
    /// Execution-guided choice: sample K answers, run each, answer with the
    /// result most agree on (0 or 1: off; needs a database).
    pub exec_vote: usize,
    /// Show the database's values the question matches in the attribute
    /// and QueryView prompts (needs a database).
    pub values: bool,
    /// A list of rows the view repeats: `auto` adds DISTINCT, `off` runs it
    /// as written.
    pub distinct: DistinctMode,
    /// Aggregates over rows the view repeats: `rewrite`, `error` or `warn`.
    pub fanout: FanoutMode,
    /// List the question's phrases that spell one view column's name.
    pub name_hints: bool,
    /// `COUNT(*)` over repeated rows counts the table the question counts.
    pub count_names: bool,
    /// Drop a filter on an identifying column to values the question lacks.
    pub entity_literals: bool,
    /// Group an all-rows aggregate by the column the question asks "by".
    pub by_groups: bool,
    /// Respell a text filter's literal to the value the database holds.
    pub value_literals: bool,
    /// Ask once more with short descriptions when the prompt does not fit.
    pub shorten_prompt: bool,
    /// The form of QueryView's answer: `sql` (free SQL under the view's
    /// grammar), `plan` (a JSON query plan lucy compiles), `auto` (the plan
    /// first, free SQL when it cannot say the question).
    pub form: crate::query::plan::QueryForm,
    /// Cap on a plan answer, in tokens.
    pub plan_max_tokens: u32,
    /// Follow-up rounds of the SQL call; set by a method, not a setting.
    #[serde(skip)]
    pub feedback: crate::query::Feedback,
}

impl Default for QuerySettings {
    fn default() -> Self {
        QuerySettings {
            temperature: 0.2,
            schema_context: false,
            names: QueryNames::default(),
            rename_unknown: crate::query::DEFAULT_RENAME_UNKNOWN,
            exec_vote: 0,
            values: false,
            distinct: DistinctMode::default(),
            fanout: FanoutMode::default(),
            name_hints: crate::link::hints::DEFAULT_ON,
            count_names: crate::check::counted::DEFAULT_ON,
            entity_literals: crate::check::literals::DEFAULT_ON,
            by_groups: crate::check::grouping::DEFAULT_ON,
            value_literals: crate::check::values::DEFAULT_ON,
            shorten_prompt: true,
            form: crate::query::plan::QueryForm::Auto,
            plan_max_tokens: crate::query::plan::PLAN_MAX_TOKENS,
            feedback: crate::query::Feedback::default(),
        }
    }
}

/// The bounds of a run (`limits.*`): every solve and query is bounded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Keep (and print) at most this many result rows.
    pub rows: Option<usize>,
    /// Stop reading rows once the result holds this many bytes.
    pub result_bytes: usize,
    /// Time bound of the SQL's execution, in seconds.
    pub exec_timeout_s: f64,
    /// Time bound of one solver call, in seconds.
    pub solver_time_limit_s: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { rows: None, result_bytes: DEFAULT_MAX_RESULT_BYTES, exec_timeout_s: 30.0, solver_time_limit_s: 10.0 }
    }
}

/// One settable key, for `lucy config levers`, `--help-all` and errors.
#[derive(Debug, Clone, Copy)]
pub struct Lever {
    /// `PHASE.KEY`, as in `--set` and the trace's `options`.
    pub key: &'static str,
    /// What it does, in one line.
    pub what: &'static str,
    /// The measurement that set its default (or why it is what it is).
    pub measured: &'static str,
}

/// Every settable key of [`super::AskOptions`]' phase settings.
pub const LEVERS: &[Lever] = &[
    Lever { key: "link.samples", what: "sampled answers per MatchTables prompt, voted", measured: "the paper's 5" },
    Lever { key: "link.temperature", what: "sampling temperature of MatchTables", measured: "the paper's 0.2" },
    Lever { key: "link.min_votes", what: "votes an item needs to be kept", measured: "the paper's 1" },
    Lever { key: "link.max_items", what: "at most this many tables/attributes per prompt", measured: "the paper's 8" },
    Lever {
        key: "link.kind_names",
        what: "keep subtype children the question names word for word",
        measured: "on since session 18",
    },
    Lever {
        key: "link.kind_instance",
        what: "a chosen marker kind keeps only the root's rows of that kind",
        measured: "on since session 18",
    },
    Lever {
        key: "link.table_names",
        what: "keep core tables the question names word for word",
        measured: "on (ACME's named tables, session 19)",
    },
    Lever {
        key: "link.core_majority",
        what: "keep only core tables most samples named",
        measured: "off: one gained, one lost on held-out questions",
    },
    Lever {
        key: "link.adaptive",
        what: "stop sampling a table's list prompt once its vote is decided (embedded model)",
        measured: "on: the same vote, fewer samples (benchmarks/results/speed.md)",
    },
    Lever { key: "view.name", what: "name of the view the SQL reads", measured: "lucy_view" },
    Lever {
        key: "view.columns",
        what: "the view's columns: all | selected",
        measured: "all: measured on DDO (docs/phases.md)",
    },
    Lever {
        key: "view.drop_unjoinable",
        what: "keep the best joinable part of the relevant tables",
        measured: "on (session 20)",
    },
    Lever {
        key: "view.narrow",
        what: "after the answer, drop tables the SQL reads nothing of: off|empty|on|unnamed",
        measured: "unnamed: DDO 12 -> 13, Spider 50 29 -> 31 (session 10)",
    },
    Lever {
        key: "view.inner_branches",
        what: "after the answer, INNER-join the branch it is about: named|off",
        measured: "named (ACME, session 21)",
    },
    Lever {
        key: "view.lookup_filters",
        what: "after the answer, filter by a lookup row the question names: named|off",
        measured: "named (ACME, session 21)",
    },
    Lever { key: "query.temperature", what: "temperature of the SQL prompt", measured: "the paper's 0.2" },
    Lever {
        key: "query.schema_context",
        what: "show the relevant tables' DDL and descriptions (PROMPTC')",
        measured: "off: the paper's PROMPTC",
    },
    Lever { key: "query.names", what: "names the SQL grammar admits: free | strict", measured: "strict (session 15)" },
    Lever {
        key: "query.rename_unknown",
        what: "rename a rejected column to the one view column it means",
        measured: "on",
    },
    Lever {
        key: "query.exec_vote",
        what: "sample K answers, run each, answer with the majority result (needs a database)",
        measured: "0: K=3 DDO 16 -> 15 (session 25)",
    },
    Lever {
        key: "query.values",
        what: "show matched database values in the prompts (needs a database)",
        measured: "off: no gain measured (sessions 23-25)",
    },
    Lever { key: "query.distinct", what: "DISTINCT for lists over repeated rows: auto | off", measured: "auto" },
    Lever {
        key: "query.fanout",
        what: "aggregates over repeated rows: rewrite | error | warn",
        measured: "rewrite: no silently wrong numbers",
    },
    Lever {
        key: "query.name_hints",
        what: "list the question's phrases naming one view column",
        measured: "on (ACME, session 15)",
    },
    Lever {
        key: "query.count_names",
        what: "COUNT(*) over repeated rows counts the table the question counts",
        measured: "on",
    },
    Lever {
        key: "query.entity_literals",
        what: "drop a filter on an id/name to values the question lacks",
        measured: "on",
    },
    Lever { key: "query.by_groups", what: "group an all-rows aggregate by the column asked 'by'", measured: "on" },
    Lever {
        key: "query.value_literals",
        what: "respell a text literal to the value the database holds",
        measured: "on",
    },
    Lever {
        key: "query.shorten_prompt",
        what: "retry with short descriptions when the prompt does not fit",
        measured: "on",
    },
    Lever {
        key: "query.form",
        what: "QueryView answers free SQL (sql), a typed plan lucy compiles (plan), or the plan first (auto)",
        measured: "auto: sql/plan/auto ex DDO 16/18/20, ACME 21/16/24, Spider-100 64/47/64, held-out DDO 5/8/8, ACME 4/4/5 (benchmarks/results/query-plan.md)",
    },
    Lever { key: "query.plan_max_tokens", what: "cap on a plan answer, in tokens", measured: "400: bounded plans" },
    Lever { key: "limits.rows", what: "keep at most this many result rows", measured: "50 in lucy ask" },
    Lever { key: "limits.result_bytes", what: "stop reading rows past this many bytes", measured: "bounded memory" },
    Lever { key: "limits.exec_timeout_s", what: "time bound of the SQL's execution", measured: "30 s" },
    Lever { key: "limits.solver_time_limit_s", what: "time bound of one solver call", measured: "10 s" },
];

/// The lever named `key`, if any.
pub fn lever(key: &str) -> Option<&'static Lever> {
    LEVERS.iter().find(|l| l.key == key)
}

/// The known key closest to `key`, for "did you mean".
pub fn closest_lever(key: &str) -> Option<&'static str> {
    LEVERS
        .iter()
        .map(|l| (strsim::jaro_winkler(key, l.key), l.key))
        .filter(|(s, _)| *s > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of the phase settings is documented in [`LEVERS`], and
    /// [`LEVERS`] names no key the structs lack.
    #[test]
    fn levers_table_names_exactly_the_settings_keys() {
        let o = super::super::AskOptions::default();
        let phases = [
            ("link", serde_json::to_value(&o.link).unwrap()),
            ("view", serde_json::to_value(&o.view).unwrap()),
            ("query", serde_json::to_value(&o.query).unwrap()),
            ("limits", serde_json::to_value(&o.limits).unwrap()),
        ];
        let mut keys: Vec<String> = Vec::new();
        for (p, v) in &phases {
            for k in v.as_object().unwrap().keys().filter(|k| *k != "restrict_core_tables") {
                keys.push(format!("{p}.{k}"));
            }
        }
        // MatchOptions leaves its levers out while at their defaults.
        for k in crate::link::MatchOptions::SETTING_KEYS {
            let k = format!("link.{k}");
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        keys.sort();
        let mut table: Vec<String> = LEVERS.iter().map(|l| l.key.to_string()).collect();
        table.sort();
        assert_eq!(keys, table);
    }

    #[test]
    fn closest_lever_suggests_a_typo_fix() {
        assert_eq!(closest_lever("query.exec_vot"), Some("query.exec_vote"));
        assert_eq!(closest_lever("zzz"), None);
    }
}
