//! lucy: a text-to-SQL query planner. An LLM understands the question; a
//! constraint solver owns the joins.
//!
//! The pipeline (Lucy paper, §3) has three phases, each usable on its own:
//! - [`link`] — MatchTables: relevant tables and attributes (LLM);
//! - [`solve`] + [`view`] — GenerateView: a MILP picks the join path, the
//!   view module writes `CREATE VIEW`;
//! - [`query`] — QueryView: SQL over that one view (LLM), checked by [`sql`].
//!
//! [`model`] loads, validates and imports dbModels; [`graph`] is the schema
//! graph every phase shares; [`crush`] shrinks very large schemas;
//! [`bench`] measures it all.

pub mod bench;
pub mod cli;
pub mod crush;
pub mod error;
pub mod graph;
pub mod link;
pub mod llm;
pub mod model;
pub mod pipeline;
pub mod prompts;
pub mod query;
pub mod solve;
pub mod sql;
pub mod types;
pub mod view;

pub use error::{Error, Result};
pub use graph::SchemaGraph;
pub use types::{DbModel, ViewRequest, ViewResult};
