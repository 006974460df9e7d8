//! Data types shared across lucy: the dbModel, phase inputs/outputs, traces.

pub mod model;
pub mod plan;
pub mod trace;

pub use model::*;
pub use plan::*;
