//! Data types shared across lucy: the dbModel, phase inputs/outputs, traces.

pub mod chat;
pub mod check;
pub mod grain;
pub mod ids;
pub mod limits;
pub mod model;
pub mod plan;
pub mod resolved;
pub mod trace;
pub mod value;

pub use grain::{
    CountNote, DistinctMode, DistinctNote, FanoutFinding, FanoutMode, FanoutReport, Grain, GroupNote, LiteralNote,
    ValueNote,
};
pub use ids::{ColumnId, RelId, TableId};
pub use model::*;
pub use plan::*;
pub use value::SqlValue;
