//! Grain of a view and fan-out reports: which table instance each view
//! column comes from, whether the view repeats that instance's rows (a join
//! on the path away from it reaches a "many" side), and what the fan-out
//! analysis of a query over the view found and did. Serialized into
//! `lucy view --json`, traces and `lucy ask --json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::model::Cardinality;

/// How the view's rows relate to the rows of its table instances.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Grain {
    /// Every table instance of the view, in join order.
    pub instances: Vec<InstanceGrain>,
    /// One link per view join, in the order of `ViewResult::joins`.
    pub links: Vec<GrainLink>,
    /// The instance each view column comes from, in column order.
    pub columns: Vec<ColumnGrain>,
}

/// One table instance of the view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstanceGrain {
    /// Instance name in the view SQL: the table name, or `TABLE_2`, … for a
    /// second instance of the same table.
    pub instance: String,
    /// The model table.
    pub table: String,
    /// View columns (aliases) holding the instance's primary key; empty when
    /// the table has no key or the view exposes none of the instance's columns.
    pub key: Vec<String>,
    /// Instances whose joins repeat each row of this one: for every one, the
    /// join that reaches it goes to a "many" side, read away from this
    /// instance. Empty: the view holds each row of this instance at most once.
    pub multiplied_by: Vec<String>,
    /// The table is the junction of an m:m pattern: a row is identified by
    /// the two rows it links.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub junction: bool,
    /// The instance is reached through a LEFT JOIN: a view row may hold
    /// NULLs for it (no matching row), so the view's rows are not all rows
    /// of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outer: bool,
}

/// A join of the view, with its cardinality read from `left` to `right`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GrainLink {
    pub left: String,
    pub right: String,
    pub cardinality: Cardinality,
}

/// A view column and the instance it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ColumnGrain {
    pub alias: String,
    pub instance: String,
}

impl Grain {
    /// The grain entry of an instance.
    pub fn instance(&self, name: &str) -> Option<&InstanceGrain> {
        self.instances.iter().find(|i| i.instance.eq_ignore_ascii_case(name))
    }

    /// The instance a view column comes from (alias compared without case).
    pub fn instance_of(&self, alias: &str) -> Option<&InstanceGrain> {
        let c = self.columns.iter().find(|c| c.alias.eq_ignore_ascii_case(alias))?;
        self.instance(&c.instance)
    }

    /// Whether the view repeats any instance's rows.
    pub fn fans_out(&self) -> bool {
        self.instances.iter().any(|i| !i.multiplied_by.is_empty())
    }

    /// Instances whose rows the view holds at most once each (the view's
    /// grain); empty when every instance is repeated by some join.
    pub fn grain_instances(&self) -> Vec<&str> {
        self.instances.iter().filter(|i| i.multiplied_by.is_empty()).map(|i| i.instance.as_str()).collect()
    }

    /// Instances whose joins repeat the rows of the instances in `set` taken
    /// together (a row of their join); see [`multipliers`]. Pass the
    /// instances a GROUP BY fixes (their keys are grouped on) in `set` too:
    /// within one group their rows do not vary.
    pub fn multipliers_of(&self, set: &[&str]) -> Vec<String> {
        let names: Vec<&str> = self.instances.iter().map(|i| i.instance.as_str()).collect();
        let idx = |n: &str| names.iter().position(|x| x.eq_ignore_ascii_case(n));
        let start: Vec<usize> = set.iter().filter_map(|s| idx(s)).collect();
        let edges: Vec<(usize, usize, Cardinality)> =
            self.links.iter().filter_map(|l| Some((idx(&l.left)?, idx(&l.right)?, l.cardinality))).collect();
        let junction: Vec<bool> = self.instances.iter().map(|i| i.junction).collect();
        multipliers(names.len(), &edges, &junction, &start).into_iter().map(|i| names[i].to_string()).collect()
    }
}

/// Nodes whose joins repeat the rows of the node set `start` (a row of
/// their join, taken together) over `edges` (`(a, b, cardinality read
/// a → b)`), in ascending order.
///
/// First the nodes `start` determines: across an M:1 or 1:1 join a row has
/// at most one partner, and a junction node (`junction[i]`: its rows are
/// identified by the pair of rows it links) is determined once all its
/// neighbours are. Every other node is reached from those across a join to
/// a "many" side and repeats their rows; the walk lists each node entered
/// that way (breadth first, so in a graph with cycles, possible in
/// hand-written SQL but never in a view, a node is judged by the first join
/// that reaches it).
pub fn multipliers(n: usize, edges: &[(usize, usize, Cardinality)], junction: &[bool], start: &[usize]) -> Vec<usize> {
    let mut fixed = vec![false; n];
    for &s in start.iter().filter(|&&s| s < n) {
        fixed[s] = true;
    }
    let valid = |&&(a, b, _): &&(usize, usize, Cardinality)| a < n && b < n;
    loop {
        let mut changed = false;
        for &(a, b, c) in edges.iter().filter(valid) {
            if fixed[a] && !fixed[b] && c != Cardinality::OneToMany {
                fixed[b] = true;
                changed = true;
            }
            if fixed[b] && !fixed[a] && c.reversed() != Cardinality::OneToMany {
                fixed[a] = true;
                changed = true;
            }
        }
        for j in 0..n {
            if fixed[j] || !junction.get(j).copied().unwrap_or(false) {
                continue;
            }
            let nb: Vec<usize> = edges
                .iter()
                .filter(valid)
                .filter_map(|&(a, b, _)| {
                    if a == j {
                        Some(b)
                    } else if b == j {
                        Some(a)
                    } else {
                        None
                    }
                })
                .collect();
            if nb.len() >= 2 && nb.iter().all(|&x| fixed[x]) {
                fixed[j] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut seen = fixed.clone();
    let mut queue: std::collections::VecDeque<usize> = (0..n).filter(|&i| fixed[i]).collect();
    let mut out = Vec::new();
    while let Some(u) = queue.pop_front() {
        for &(a, b, card) in edges.iter().filter(valid) {
            let (v, c) = if a == u {
                (b, card)
            } else if b == u {
                (a, card.reversed())
            } else {
                continue;
            };
            if seen[v] {
                continue;
            }
            seen[v] = true;
            if c == Cardinality::OneToMany {
                out.push(v);
            }
            queue.push_back(v);
        }
    }
    out.sort_unstable();
    out
}

/// What `--fanout` does with an aggregate that counts repeated rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FanoutMode {
    /// Rewrite the query so each row of the aggregated instance counts once.
    #[default]
    Rewrite,
    /// Refuse the query, naming the aggregate and the joins that repeat it.
    Error,
    /// Run the query as written, with a warning.
    Warn,
}

impl FanoutMode {
    pub fn as_str(self) -> &'static str {
        match self {
            FanoutMode::Rewrite => "rewrite",
            FanoutMode::Error => "error",
            FanoutMode::Warn => "warn",
        }
    }
}

/// One aggregate whose argument comes from rows the joins repeat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FanoutFinding {
    /// The aggregate as written, e.g. `SUM(PAYAMOUNT_amount)`.
    pub aggregate: String,
    /// Clause it occurs in: `SELECT`, `HAVING` or `ORDER BY`.
    pub clause: String,
    /// Instances (or tables) whose rows the aggregate reads; empty for
    /// `COUNT(*)`, which counts rows of the whole join.
    pub instances: Vec<String>,
    /// Instances (or tables) whose joins repeat those rows.
    pub multiplied_by: Vec<String>,
    /// Whether the rewrite can count each row once.
    pub rewritable: bool,
    /// What is wrong and what to do, in one sentence.
    pub message: String,
}

/// What the fan-out analysis found in one query and what it did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FanoutReport {
    /// The `--fanout` mode applied.
    pub mode: FanoutMode,
    pub findings: Vec<FanoutFinding>,
    /// The query as written.
    pub original: String,
    /// The rewritten query that ran instead (mode `rewrite`, when needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewritten: Option<String>,
    /// Parts of the query the analysis could not read (they ran unchanged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

impl FanoutReport {
    /// One line per finding, for warnings and error messages.
    pub fn describe(&self) -> String {
        self.findings.iter().map(|f| f.message.clone()).collect::<Vec<_>>().join("; ")
    }
}

/// What `--distinct` does with a plain list over rows the view repeats
/// (`check::distinct`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DistinctMode {
    /// Run the query as written.
    Off,
    /// Keep one row per listed entity when the listed columns' rows are
    /// repeated by a join of the view (the default since issue 23).
    #[default]
    Auto,
}

impl DistinctMode {
    /// The flag's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DistinctMode::Off => "off",
            DistinctMode::Auto => "auto",
        }
    }
}

/// One row per listed entity: the rewrite of a query that listed rows the
/// view repeats (`--distinct auto`, `check::distinct`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DistinctNote {
    /// Instances the select list reads.
    pub instances: Vec<String>,
    /// Instances whose joins repeat those rows.
    pub repeated_by: Vec<String>,
    /// The view columns (keys of `instances`) one row is kept per value of;
    /// empty when a listed instance has no key in the view and `SELECT
    /// DISTINCT` was added instead.
    #[serde(default)]
    pub by: Vec<String>,
    /// The query as written.
    pub original: String,
    /// The query that ran.
    pub rewritten: String,
}

impl DistinctNote {
    /// One line for traces and `lucy explain`.
    pub fn describe(&self) -> String {
        let what = if self.by.is_empty() {
            "added DISTINCT".to_string()
        } else {
            format!("kept one row per {}", self.by.join(", "))
        };
        format!(
            "{what}: the view repeats the rows of {} once per row of {}",
            self.instances.join(", "),
            self.repeated_by.join(", ")
        )
    }
}

/// `COUNT(*)` read as a count of the table the question counts
/// (`--count-names on`, `check::counted`): over a view whose joins repeat
/// that table's rows, `COUNT(*)` counts rows of the view, so it became
/// `COUNT(DISTINCT <key>)`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CountNote {
    /// The instance the question counts ("how many players" → `players`).
    pub instance: String,
    /// Its key column in the view, counted once per value.
    pub key: String,
    /// Instances whose joins repeat its rows (within a group).
    pub repeated_by: Vec<String>,
    /// The query as written.
    pub original: String,
    /// The query that ran.
    pub rewritten: String,
}

impl CountNote {
    /// One line for traces and `lucy explain`.
    pub fn describe(&self) -> String {
        format!(
            "COUNT(*) counts {} rows (the table the question counts): COUNT(DISTINCT {}), as the view repeats them once per row of {}",
            self.instance,
            self.key,
            self.repeated_by.join(", ")
        )
    }
}

/// Filters on an entity the question never names, dropped from a query
/// over the view (`--entity-literals on`, `check::literals`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LiteralNote {
    /// The dropped conjuncts, as written (`Policy_Policy_Number = '12312701'`).
    pub dropped: Vec<String>,
    /// The query as written.
    pub original: String,
    /// The query that ran.
    pub rewritten: String,
}

impl LiteralNote {
    /// One line for traces and `lucy explain`.
    pub fn describe(&self) -> String {
        format!("dropped {}: the question names no such value of an identifying column", self.dropped.join(", "))
    }
}

/// Filters mended by the database's values: a text literal the column
/// does not hold, respelled to the one value it folds to or moved to the
/// one other view column holding it (`--value-literals on`,
/// `check::values`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ValueNote {
    /// Each mended conjunct, before → after
    /// (`countries_Continent = 'France' → countries_CountryName = 'france'`).
    pub changes: Vec<String>,
    /// The query as written.
    pub original: String,
    /// The query that ran.
    pub rewritten: String,
}

impl ValueNote {
    /// One line for traces and `lucy explain`.
    pub fn describe(&self) -> String {
        format!(
            "filter mended by the database's values: {} (the literal is no value of the column as written)",
            self.changes.join("; ")
        )
    }
}

/// A grouping the question asks for ("by policy number") added to an
/// aggregate query over the view that had none (`--by-groups on`,
/// `check::grouping`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GroupNote {
    /// The phrases the question asks "by", as written.
    pub phrases: Vec<String>,
    /// The view columns added to the select list and the GROUP BY.
    pub columns: Vec<String>,
    /// The query as written.
    pub original: String,
    /// The query that ran.
    pub rewritten: String,
}

impl GroupNote {
    /// One line for traces and `lucy explain`.
    pub fn describe(&self) -> String {
        let by: Vec<String> = self.phrases.iter().map(|p| format!("\"{p}\"")).collect();
        format!(
            "grouped by {}: the question asks by {} and the query aggregated every row into one",
            self.columns.join(", "),
            by.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Cardinality::*;

    #[test]
    fn chasm_multiplies_both_branches() {
        // 0 CLIENT, 1 PAYMENT, 2 PAYAMOUNT, 3 RETENTION.
        let e = [(0, 1, OneToMany), (1, 2, OneToMany), (0, 3, OneToMany)];
        let j = [false; 4];
        assert_eq!(multipliers(4, &e, &j, &[2]), vec![3]);
        assert_eq!(multipliers(4, &e, &j, &[3]), vec![1, 2]);
        assert_eq!(multipliers(4, &e, &j, &[0]), vec![1, 2, 3]);
        assert_eq!(multipliers(4, &e, &j, &[1, 2]), vec![3]);
        // CLIENT and PAYAMOUNT fixed: PAYMENT is determined by PAYAMOUNT.
        assert_eq!(multipliers(4, &e, &j, &[0, 2]), vec![3]);
        assert!(multipliers(4, &e, &j, &[2, 3]).is_empty());
    }

    #[test]
    fn many_to_one_chains_do_not_multiply() {
        // PAYAMOUNT -> PAYMENT -> CLIENT -> LOCATION, all M:1.
        let e = [(0, 1, ManyToOne), (1, 2, ManyToOne), (2, 3, ManyToOne)];
        let j = [false; 4];
        assert!(multipliers(4, &e, &j, &[0]).is_empty());
        assert_eq!(multipliers(4, &e, &j, &[3]), vec![0, 1, 2]);
        let one = [(0, 1, OneToOne)];
        assert!(multipliers(2, &one, &j, &[0]).is_empty() && multipliers(2, &one, &j, &[1]).is_empty());
    }

    #[test]
    fn a_junction_between_fixed_sides_does_not_repeat() {
        // 0 CLIENT, 1 RSPOOL2CLIENT (junction), 2 RESOURCEPOOL, 3 RUNTIME, 4 RMEMORY.
        let e = [(0, 1, OneToMany), (1, 2, ManyToOne), (2, 3, OneToMany), (3, 4, OneToMany)];
        let j = [false, true, false, false, false];
        // Average memory per client: fixing the client (grouped by its key)
        // and the memory row fixes the pool, and then the junction row.
        assert!(multipliers(5, &e, &j, &[0, 4]).is_empty());
        // Without the group, every client using the pool repeats the row.
        assert_eq!(multipliers(5, &e, &j, &[4]), vec![1]);
        // Not a junction: the same shape repeats.
        assert_eq!(multipliers(5, &e, &[false; 5], &[0, 4]), vec![1]);
    }
}
