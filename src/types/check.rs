//! Findings of `lucy check` (SQL over the base tables checked against the
//! model): data only, produced by `check::base`, kept in traces (the
//! `direct+check` baseline's repair round) and printed by the CLI.

use serde::{Deserialize, Serialize};

/// What kind of problem a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A table the model does not have.
    UnknownTable,
    /// A column its table does not have (or no table in scope has).
    UnknownColumn,
    /// A join no relationship of the model declares.
    UndeclaredJoin,
    /// A join on only some column pairs of a composite relationship.
    PartialJoin,
    /// A direct join between the two sides of an m:m pattern, or a junction
    /// used to link one side to itself (C3).
    JunctionBypass,
    /// Two tables related only through a lookup table (C4).
    LookupBridge,
    /// A table `constraints.forbid_tables` forbids.
    ForbiddenTable,
    /// A relationship `constraints.forbid_relationships` forbids.
    ForbiddenRelationship,
    /// Relations with no join between them (a cartesian product).
    CrossJoin,
    /// A counting aggregate over rows the joins repeat.
    Fanout,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::UnknownTable => "unknown_table",
            FindingKind::UnknownColumn => "unknown_column",
            FindingKind::UndeclaredJoin => "undeclared_join",
            FindingKind::PartialJoin => "partial_join",
            FindingKind::JunctionBypass => "junction_bypass",
            FindingKind::LookupBridge => "lookup_bridge",
            FindingKind::ForbiddenTable => "forbidden_table",
            FindingKind::ForbiddenRelationship => "forbidden_relationship",
            FindingKind::CrossJoin => "cross_join",
            FindingKind::Fanout => "fanout",
        }
    }
}

/// One problem, located by clause, with what to do.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    pub kind: FindingKind,
    /// Where: `FROM`, `JOIN X ON`, `WHERE`, `SELECT`, `GROUP BY`, `HAVING`,
    /// `ORDER BY`.
    pub clause: String,
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}: {}", self.kind.as_str(), self.clause, self.message)?;
        if !self.hint.is_empty() {
            write!(f, " — {}", self.hint)?;
        }
        Ok(())
    }
}

/// The result of checking one query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckReport {
    /// The model checked against.
    pub model: String,
    /// Base tables the query reads.
    pub tables: Vec<String>,
    pub findings: Vec<Finding>,
}

impl CheckReport {
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// The findings as one message (for a repair prompt): one line each.
    pub fn message(&self) -> String {
        self.findings.iter().map(|f| format!("- {f}")).collect::<Vec<_>>().join("\n")
    }
}
