//! Typed indices into a dbModel. Names become ids once, in
//! `graph::SchemaGraph`; inside the pipeline tables and relationships are
//! these ids, and names come back only at the edges (prompts, SQL, JSON).

/// Index of a table in `DbModel::tables` (and of its node in the schema graph).
pub type TableId = usize;
/// Index of a relationship in `DbModel::relationships` (and of its edge).
pub type RelId = usize;

/// A column: its table, and its index in that table's `columns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColumnId {
    pub table: TableId,
    pub column: usize,
}
