//! The command line's spelling of library enums. clap stays in the binary:
//! each enum here mirrors a plain library enum variant for variant (the doc
//! comments are the `--help` text) and converts into it with `From`.

use lucy::bench::{Method as LibMethod, Oracle as LibOracle};
use lucy::crush::SolverKind as LibSolverKind;
use lucy::llm::ServerGrammar as LibServerGrammar;
use lucy::llm::StructuredMode as LibStructuredMode;
use lucy::pipeline::branches::InnerBranches as LibInnerBranches;
use lucy::pipeline::lookups::LookupFilters as LibLookupFilters;
use lucy::pipeline::narrow::NarrowView as LibNarrowView;
use lucy::pipeline::StopAfter as LibStopAfter;
use lucy::query::grammar::QueryNames as LibQueryNames;
use lucy::query::plan::QueryForm as LibQueryForm;
use lucy::types::Dialect as LibDialect;
use lucy::types::DistinctMode as LibDistinctMode;
use lucy::types::FanoutMode as LibFanoutMode;
use lucy::types::ViewColumns as LibViewColumns;

/// A clap `ValueEnum` mirroring a library enum, with `From` into it.
macro_rules! value_enum {
    ($(#[$m:meta])* $name:ident => $lib:ident { $($(#[$vm:meta])* $v:ident),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub enum $name {
            $($(#[$vm])* $v),*
        }

        impl From<$name> for $lib {
            fn from(v: $name) -> Self {
                match v {
                    $($name::$v => $lib::$v),*
                }
            }
        }
    };
}

value_enum! {
    /// SQL dialects lucy reads and writes.
    Dialect => LibDialect { Sqlite, Mysql, Postgres, Spark }
}

value_enum! {
    /// Whether to ask the server for schema-constrained (structured) output.
    StructuredMode => LibStructuredMode {
        /// Send the schema; if the server rejects it, retry without and stop
        /// sending it to that server.
        Auto,
        /// Send the schema; a rejection is an error.
        On,
        /// Never send the schema; answers are parsed from free text.
        Off,
    }
}

value_enum! {
    /// How a grammar-constrained request is sent to an LLM server.
    ServerGrammar => LibServerGrammar {
        /// Ask the server's GET /models who it is: llama.cpp's server and vLLM get
        /// the grammar in their form, other servers none.
        Auto,
        /// llama.cpp's server built with LLGuidance ("grammar": "%llguidance {}…").
        LlamaCpp,
        /// vLLM (structured_outputs.grammar, and guided_grammar for older releases).
        Vllm,
        /// Never send a grammar.
        Off,
    }
}

value_enum! {
    /// Where to stop.
    StopAfter => LibStopAfter {
        /// After MatchTables.
        Match,
        /// After GenerateView.
        View,
        /// After QueryView, without executing.
        Sql,
    }
}

value_enum! {
    /// Which solver picks R(x).
    SolverKind => LibSolverKind {
        /// MILP + outer approximation: proved optimal (or a certified gap).
        Exact,
        /// The paper's round-robin greedy.
        Greedy,
        /// Single dense retrieval: top-B documents by cosine to the question.
        Dense,
    }
}

value_enum! {
    /// What is measured.
    Oracle => LibOracle {
        /// Phase 1 replaced by the gold SQL's tables and columns; GenerateView
        /// alone (no LLM).
        Tables,
        /// Phases 1–2 replaced by the view over the gold tables and columns;
        /// QueryView alone (needs an LLM or a cassette).
        View,
    }
}

value_enum! {
    /// Which method answers the questions.
    Method => LibMethod {
        /// The three phases.
        Lucy,
        /// The PROMPTB baseline: the whole schema and the question, one SQL.
        Direct,
        /// PROMPTB, then `lucy check`'s findings on its SQL as the one repair message.
        #[value(name = "direct+check")]
        DirectCheck,
        /// Dynamic few-shot (DynVS): the --examples-k most similar pool examples, the schema, one SQL call.
        Fewshot,
        /// CRUSH4SQL end to end: hallucinated schema, greedy selection of --budget elements (default 10), SQL over their tables.
        Crush,
        /// RASL: keywords, keyword-level retrieval of tables and columns, a table-ranking call, SQL over the ranked tables (two follow-ups on an error or empty result).
        Rasl,
        /// TA-SQL: a dummy SQL over the whole schema names the linked schema, a pandas-like symbolic representation, then SQL over the linked tables.
        #[value(name = "ta-sql")]
        TaSql,
    }
}

value_enum! {
    /// What to do with aggregates that count rows the view repeats.
    FanoutMode => LibFanoutMode {
        /// Rewrite the query so each row of the aggregated table counts once.
        Rewrite,
        /// Refuse the query, naming the aggregate and the joins that repeat it.
        Error,
        /// Run the query as written, with a warning.
        Warn,
    }
}

value_enum! {
    /// What to do with a QueryView list of rows the view repeats.
    DistinctMode => LibDistinctMode {
        /// Run the query as written.
        Off,
        /// Add DISTINCT when a join of the view repeats the listed columns' rows.
        Auto,
    }
}

value_enum! {
    /// When to run the answer's SQL again over a view without the tables it reads nothing of.
    NarrowView => LibNarrowView {
        /// Never: the first answer stands.
        Off,
        /// Only when the first answer has no row.
        Empty,
        /// After every answer that ran.
        On,
        /// After every answer that ran, dropping only tables the question
        /// does not name.
        Unnamed,
    }
}

value_enum! {
    /// When to join the pattern branch the answer is about by INNER JOIN.
    InnerBranches => LibInnerBranches {
        /// Never: pattern branches stay LEFT JOINs.
        Off,
        /// The branch the question names and the SQL reads, unless either
        /// asks about missing rows.
        Named,
    }
}

impl InnerBranches {
    /// The library's default, in the command line's spelling.
    pub fn default_value() -> Self {
        match lucy::pipeline::branches::DEFAULT {
            LibInnerBranches::Off => InnerBranches::Off,
            LibInnerBranches::Named => InnerBranches::Named,
        }
    }
}

value_enum! {
    /// When a lookup row the question names filters the view.
    LookupFilters => LibLookupFilters {
        /// Never.
        Off,
        /// A code-table row the question names word for word ("agents":
        /// Party_Role 'AG'), unless the SQL reads the code or the question negates.
        Named,
    }
}

impl LookupFilters {
    /// The library's default, in the command line's spelling.
    pub fn default_value() -> Self {
        match lucy::pipeline::lookups::DEFAULT {
            LibLookupFilters::Off => LookupFilters::Off,
            LibLookupFilters::Named => LookupFilters::Named,
        }
    }
}

value_enum! {
    /// Which columns GenerateView puts in the view.
    ViewColumns => LibViewColumns {
        /// The requested attributes and the relevant tables' keys (the paper's view).
        Selected,
        /// Every column of every table the view joins, connecting tables included.
        All,
        /// As all, but one column for each set an INNER join makes equal (the referenced key).
        AllOnce,
    }
}

value_enum! {
    /// Which names QueryView's grammar admits where a column may be written.
    QueryNames => LibQueryNames {
        /// Any identifier that is not a keyword or a name of the model (the grammar the first cassettes were recorded with).
        Free,
        /// Without WITH, the select list, WHERE, ON and FROM name the view and its columns only (no derived table; a CTE instead); one-line strings of at most 200 characters.
        Strict,
        /// Strict, but FROM may hold a derived table and a qualified name may be any name (session 9's strict rule, which its recordings replay with).
        StrictDerived,
    }
}

value_enum! {
    /// The form of QueryView's answer (issue 46).
    QueryForm => LibQueryForm {
        /// A JSON query plan over the view (its columns, typed literals, bounded), which lucy compiles to SQL.
        Plan,
        /// Free SQL under QueryView's grammar (the form of the recordings before session 28).
        Sql,
        /// The plan first; free SQL when the model answers needs_sql or the plan does not compile or run.
        Auto,
    }
}

impl From<LibQueryNames> for QueryNames {
    fn from(v: LibQueryNames) -> Self {
        match v {
            LibQueryNames::Free => QueryNames::Free,
            LibQueryNames::Strict => QueryNames::Strict,
            LibQueryNames::StrictDerived => QueryNames::StrictDerived,
        }
    }
}

/// A switch: `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

impl OnOff {
    /// `on` for true.
    pub fn from_bool(b: bool) -> Self {
        if b {
            OnOff::On
        } else {
            OnOff::Off
        }
    }

    /// Whether it is on.
    pub fn is_on(self) -> bool {
        self == OnOff::On
    }
}

/// Pre-filters of the core tables before MatchTables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Prefilter {
    None,
    Crush,
}
