//! Pattern roles of a dbModel resolved to ids: what `model::validate`
//! computes and `graph::SchemaGraph` keeps.

use super::ids::{RelId, TableId};

/// Which kind of tree pattern a table belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeKind {
    Star,
    Snowflake,
}

/// An m:m pattern resolved to ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Junction {
    pub junction: TableId,
    pub sides: [TableId; 2],
    /// Relationship junction–sides[0] and junction–sides[1].
    pub rels: [RelId; 2],
}
