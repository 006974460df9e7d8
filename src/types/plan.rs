//! Values passed between phases: what MatchTables hands to GenerateView and
//! what GenerateView hands to QueryView. Serialized as-is into traces and
//! `--json` output, so field names are part of the public contract.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ids::{ColumnId, RelId, TableId};
use super::model::Dialect;

/// A `TABLE.column` reference, with the model's spelling.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct ColumnRef {
    pub table: String,
    pub column: String,
}

impl ColumnRef {
    pub fn new(table: impl Into<String>, column: impl Into<String>) -> Self {
        ColumnRef { table: table.into(), column: column.into() }
    }
}

impl std::fmt::Display for ColumnRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.table, self.column)
    }
}

/// A table instance that joins the view through one relationship: the
/// table's *role* there (`ADDRESS@ship_address`, `EMPLOYEE@manager`). The
/// other end of `rel` is the instance's anchor; for a self-relationship the
/// instance is its `to` end and the anchor the table's plain instance.
/// Written `TABLE@role` at the edges (`Names::instance`).
///
/// `copy` tells apart several instances through the same relationship —
/// the same role twice, told apart only by a filter value (ACME's policy
/// holder and agent: two `Agreement_Party_Role` rows of one policy). The
/// first is copy 0 (`TABLE@role`), the next `TABLE@role#2`, and so on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RoleInstance {
    pub table: TableId,
    pub rel: RelId,
    pub copy: u8,
}

/// What MatchTables finds and GenerateView solves for: relevant tables and
/// columns as ids, in the order they were found. A column's table is
/// relevant too (see [`Relevance::all_tables`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Relevance {
    /// Relevant tables, each as its plain instance.
    pub tables: Vec<TableId>,
    pub columns: Vec<ColumnId>,
    /// Relevant role instances (besides the plain instances of `tables`).
    /// A requested column of a table belongs to all its relevant instances.
    pub roles: Vec<RoleInstance>,
}

impl Relevance {
    /// Add a table once.
    pub fn add_table(&mut self, t: TableId) {
        if !self.tables.contains(&t) {
            self.tables.push(t);
        }
    }

    /// Add a column once.
    pub fn add_column(&mut self, c: ColumnId) {
        if !self.columns.contains(&c) {
            self.columns.push(c);
        }
    }

    /// Add a role instance once.
    pub fn add_role(&mut self, r: RoleInstance) {
        if !self.roles.contains(&r) {
            self.roles.push(r);
        }
    }

    /// Nothing relevant.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.columns.is_empty() && self.roles.is_empty()
    }

    /// Tables whose plain instance is relevant: the given tables, then the
    /// tables of columns not given, in order. A column of a table that is
    /// requested only in roles (`LOCATION@client` and `LOCATION.city`)
    /// belongs to those instances and does not make the plain one relevant.
    pub fn all_tables(&self) -> Vec<TableId> {
        let mut v = self.tables.clone();
        for c in &self.columns {
            if !v.contains(&c.table) && !self.roles.iter().any(|r| r.table == c.table) {
                v.push(c.table);
            }
        }
        v
    }
}

/// Input of GenerateView, as names (the form of `lucy view`, traces and
/// `--json`): the relevant tables and attributes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ViewRequest {
    /// Relevant table instances: a table name (inner pattern tables
    /// allowed), or `TABLE@role` for a role instance, where role is the
    /// relationship's declared role, its name or id, `OTHER.fk_column`, or
    /// the other table's name (see `docs/cli.md`).
    pub tables: Vec<String>,
    /// Requested attributes. Keys of relevant tables are always added.
    #[serde(default)]
    pub attributes: Vec<ColumnRef>,
    /// Dialect of the emitted `CREATE VIEW`.
    #[serde(default)]
    pub dialect: Dialect,
    /// Name of the view.
    #[serde(default = "default_view_name")]
    pub view_name: String,
    /// Time limit for each solver call, in seconds.
    #[serde(default = "default_time_limit")]
    pub time_limit_s: f64,
    /// Keep every row of this table: the view starts from it and reaches
    /// every other table by LEFT JOIN ("for each client, …").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<String>,
    /// Pattern branches to join by INNER JOIN instead of LEFT JOIN (with
    /// the branches on the way to them): the view holds only the rows that
    /// have one ("the income sources of payments"). Ignored with `keep`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inner_branches: Vec<String>,
    /// Row filters: the view holds only the rows where each column (of its
    /// table's first plain instance) equals the value ("the agents":
    /// `Agreement_Party_Role.Party_Role_Code = 'AG'`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<ViewFilter>,
    /// Which columns the view exposes (`--view-columns`): the requested
    /// attributes plus keys (the paper's view), or every column of every
    /// table instance it joins.
    #[serde(default, skip_serializing_if = "ViewColumns::is_default")]
    pub columns: ViewColumns,
}

/// One row filter of a view: `column` equals one of `values`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ViewFilter {
    /// The column, `TABLE.column`.
    pub column: ColumnRef,
    /// The values, strings or numbers: `column = v` for one, `column IN
    /// (…)` for several.
    pub values: Vec<serde_json::Value>,
}

impl ViewFilter {
    /// The condition on `column_sql` (the column as the view's SQL names
    /// it): `= v` or `IN (v, …)`, strings quoted with `'` doubled, numbers
    /// as written; `None` when there is no value or one is neither a
    /// string nor a number.
    pub fn condition(&self, column_sql: &str) -> Option<String> {
        let lits = self
            .values
            .iter()
            .map(|v| match v {
                serde_json::Value::String(s) => Some(format!("'{}'", s.replace('\'', "''"))),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect::<Option<Vec<String>>>()?;
        match lits.as_slice() {
            [] => None,
            [one] => Some(format!("{column_sql} = {one}")),
            many => Some(format!("{column_sql} IN ({})", many.join(", "))),
        }
    }
}

/// Which columns GenerateView puts in the view (`--view-columns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ViewColumns {
    /// The requested attributes and the keys of the relevant tables; every
    /// column of a relevant table when no attribute is requested (Lucy
    /// §3.3, Appendix D.3.1).
    #[default]
    Selected,
    /// Every column of every table instance the view joins, the tables the
    /// solver added to connect the relevant ones included: an attribute
    /// MatchTables did not name is still there for QueryView.
    All,
    /// As `all`, but of the columns an INNER join makes equal on every row
    /// (a foreign key and the key it points to, a subtype's key and its
    /// supertype's) only one, the referenced key: a key is not shown twice
    /// under two names (`view::merge`).
    #[serde(rename = "all-once")]
    AllOnce,
}

impl ViewColumns {
    /// The flag's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ViewColumns::Selected => "selected",
            ViewColumns::All => "all",
            ViewColumns::AllOnce => "all-once",
        }
    }

    fn is_default(&self) -> bool {
        *self == ViewColumns::default()
    }

    /// Whether the view holds every column of every instance it joins
    /// (`all` and `all-once`).
    pub fn every_table(self) -> bool {
        matches!(self, ViewColumns::All | ViewColumns::AllOnce)
    }
}

pub fn default_view_name() -> String {
    "lucy_view".to_string()
}

fn default_time_limit() -> f64 {
    10.0
}

/// How GenerateView writes the view (the non-relevance half of a
/// [`ViewRequest`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ViewOptions {
    pub dialect: Dialect,
    pub view_name: String,
    /// Time limit for each solver call, in seconds.
    pub time_limit_s: f64,
    /// Table whose rows the view keeps all of (see [`ViewRequest::keep`]).
    pub keep: Option<String>,
    /// Branches joined by INNER JOIN (see [`ViewRequest::inner_branches`]).
    pub inner_branches: Vec<String>,
    /// Row filters (see [`ViewRequest::filters`]).
    pub filters: Vec<ViewFilter>,
    /// Which columns the view exposes (see [`ViewRequest::columns`]).
    pub columns: ViewColumns,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            dialect: Dialect::Sqlite,
            view_name: default_view_name(),
            time_limit_s: default_time_limit(),
            keep: None,
            inner_branches: Vec::new(),
            filters: Vec::new(),
            columns: ViewColumns::default(),
        }
    }
}

impl ViewRequest {
    /// The request's options.
    pub fn options(&self) -> ViewOptions {
        ViewOptions {
            dialect: self.dialect,
            view_name: self.view_name.clone(),
            time_limit_s: self.time_limit_s,
            keep: self.keep.clone(),
            inner_branches: self.inner_branches.clone(),
            filters: self.filters.clone(),
            columns: self.columns,
        }
    }

    /// A request for `tables` (no attributes) with the defaults a
    /// deserialized request without them gets: SQLite, `lucy_view`, a 10 s
    /// limit, every other option off.
    pub fn new(tables: Vec<String>) -> Self {
        ViewRequest {
            tables,
            attributes: Vec::new(),
            dialect: Dialect::Sqlite,
            view_name: default_view_name(),
            time_limit_s: default_time_limit(),
            keep: None,
            inner_branches: Vec::new(),
            filters: Vec::new(),
            columns: ViewColumns::default(),
        }
    }
}

/// How a solve ended: GenerateView's join walk, or a CRUSH selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SolveStatus {
    /// Proved optimal (CRUSH: certified gap ≤ tolerance).
    Optimal,
    /// A valid answer without a proof of optimality. GenerateView: the time
    /// limit stopped the proof. CRUSH: stopped for another reason (HiGHS
    /// tolerance); its gap is still valid.
    Feasible,
    /// CRUSH: the time limit stopped the proof; the gap is still a valid bound.
    TimeLimit,
    /// CRUSH: a heuristic (greedy, dense), no bound.
    Heuristic,
    /// GenerateView: no walk satisfies the constraints.
    Infeasible,
}

impl SolveStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SolveStatus::Optimal => "optimal",
            SolveStatus::Feasible => "feasible",
            SolveStatus::TimeLimit => "time_limit",
            SolveStatus::Heuristic => "heuristic",
            SolveStatus::Infeasible => "infeasible",
        }
    }
}

/// Join kind in the view: inner on the core path, left on pattern branches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JoinKind {
    Inner,
    Left,
}

/// One table instance of the view (a table may appear twice, e.g. a lookup
/// reached from two different tables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub table: TableId,
    /// The relationship a role instance joins through (`None` for a plain
    /// instance or a revisit).
    pub role: Option<RelId>,
    /// Which copy of the role (`RoleInstance::copy`; 0 otherwise).
    pub copy: u8,
    /// `TABLE` for the first plain instance, `TABLE_2`, `TABLE_3` … after;
    /// `TABLE_<role>` for a role instance (`ADDRESS_ship`).
    pub alias: String,
}

/// A column of one instance of the view: `instance` indexes
/// [`ViewResult::instances`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstanceColumn {
    pub instance: usize,
    pub column: ColumnId,
}

/// One join of the view. `left` is already in the view when `right` joins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Join {
    pub left: String,
    pub right: String,
    pub kind: JoinKind,
    /// Column pairs as `["LEFT.col", "RIGHT.col"]`.
    pub on: Vec<[String; 2]>,
    /// Id of the dbModel relationship used (see `Relationship::id`).
    pub relationship: String,
    /// `on` as ids: (left instance's column, right instance's column).
    /// Built by GenerateView; not serialized (empty when read from JSON).
    #[serde(skip)]
    pub pairs: Vec<[InstanceColumn; 2]>,
    /// The relationship used, as an id (not serialized).
    #[serde(skip)]
    pub rel: Option<RelId>,
}

/// Two tables joined by more than one relationship: which one was used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ambiguity {
    pub left: String,
    pub right: String,
    pub candidates: Vec<String>,
    pub chosen: String,
    pub reason: String,
}

/// One output column of the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ViewColumn {
    pub alias: String,
    pub table: String,
    pub column: String,
    /// The column's description, after its instance's [`note`](Self::note)
    /// when it has one (`NOTE — DESCRIPTION`): what QueryView's SQL prompt shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What the column's table instance is when it is a role or subtype
    /// instance (`Claim_Amount that is a Loss_Payment: …`, `ADDRESS as
    /// ship_address: …`); the plan prompt shows it once per instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A column `--view-columns all-once` left out of the view: an INNER join
/// makes it equal to the view column `same_as` on every row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MergedColumn {
    /// The instance it belongs to (`tables` names it).
    pub instance: String,
    pub table: String,
    pub column: String,
    /// The view column (alias) that holds the same value.
    pub same_as: String,
}

/// Size of the solved optimisation model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelSize {
    pub variables: usize,
    pub constraints: usize,
}

/// Output of GenerateView. Serializes to the shape documented for
/// `lucy view --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ViewResult {
    pub status: SolveStatus,
    /// Tables in the view, in join order (core path first, then branches).
    pub tables: Vec<String>,
    pub joins: Vec<Join>,
    /// Number of occurrences of tables outside the relevant set (C5).
    pub objective: f64,
    /// Length of the core walk, in tables.
    pub path_length: usize,
    /// Total solver time in milliseconds.
    pub solve_ms: f64,
    pub view_name: String,
    pub view_sql: String,
    #[serde(default)]
    pub columns: Vec<ViewColumn>,
    /// Columns left out because an INNER join makes them equal to a view
    /// column (`--view-columns all-once`); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<MergedColumn>,
    /// The core walk as solved (tables may repeat, e.g. around a lookup).
    #[serde(default)]
    pub walk: Vec<String>,
    #[serde(default)]
    pub ambiguities: Vec<Ambiguity>,
    /// Why the result is infeasible (or other notes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// How the path-length bound n was settled, e.g. "n=5: deepened from
    /// lower bound 3" or "n=9: proven upper bound".
    #[serde(default)]
    pub n_bound: String,
    #[serde(default)]
    pub model_size: ModelSize,
    /// Relevant set actually solved for (after pulling in pattern roots and
    /// required tables).
    #[serde(default)]
    pub relevant: Vec<String>,
    /// Which instance each column comes from and which joins repeat its
    /// rows (see `types::grain`); empty for an infeasible result.
    #[serde(default)]
    pub grain: super::grain::Grain,
    /// The view's table instances, in join order (`tables` holds their
    /// aliases). Not serialized: empty when read from JSON.
    #[serde(skip)]
    pub instances: Vec<Instance>,
    /// The view's definition apart from the `CREATE VIEW` wrapper of
    /// `view_sql`. Not serialized: `None` when read from JSON or infeasible.
    #[serde(skip)]
    pub body: Option<ViewBody>,
}

/// A view definition in two parts: `view_sql` is `CREATE VIEW {name} AS\n{select};`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewBody {
    /// The view's name as the SQL writes it (quoted for the dialect when needed).
    pub name: String,
    /// The `SELECT …` that defines the view, without a trailing `;`.
    pub select: String,
}

impl ViewBody {
    /// The `CREATE VIEW` statement.
    pub fn create_sql(&self) -> String {
        format!("CREATE VIEW {} AS\n{};", self.name, self.select)
    }
}
