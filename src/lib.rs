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
//! graph every phase shares (and the one place names become ids);
//! [`crush`] shrinks very large schemas; [`pipeline`] runs the phases end
//! to end; [`bench`] measures it all. `ARCHITECTURE.md` maps the modules and
//! their layers.
//!
//! The short way in is the re-exports below:
//!
//! ```no_run
//! let graph = lucy::SchemaGraph::new(lucy::load_model("dbmodels/ddo.json")?)?;
//! let view = lucy::generate_view(&graph, &lucy::ViewRequest::new(vec!["CLIENT".into(), "DATACENTER".into()]))?;
//! println!("{}", view.view_sql);
//! # Ok::<(), lucy::Error>(())
//! ```

pub mod bench;
pub mod check;
pub mod crush;
pub mod error;
pub mod examples;
pub mod graph;
pub mod link;
pub mod llm;
pub mod mcp;
pub mod model;
pub mod pipeline;
pub mod prompts;
pub mod query;
pub mod render;
pub mod serve;
pub mod solve;
pub mod sql;
pub mod types;
pub mod view;

pub use error::{Error, Result};
pub use graph::SchemaGraph;
pub use llm::{build_chat_model, ChatModel, LlmArgs};
pub use model::load as load_model;
pub use pipeline::{ask, direct_sql, AskOptions, AskOutcome, Linker, StopAfter};
pub use solve::{generate, generate_view};
pub use types::trace::Trace;
pub use types::{ColumnId, DbModel, Dialect, Relevance, TableId, ViewOptions, ViewRequest, ViewResult};
