//! `lucy crush`: CRUSH schema retrieval for one question on a dbModel.

use std::path::PathBuf;

use super::values::SolverKind;
use super::{print_json, Ctx};
use lucy::crush::embed::{Embedder, HashEmbedder, MiniLm, OpenAiEmbedder};
use lucy::crush::{self, CrushConfig};
use lucy::error::{Error, Result};
use lucy::graph::SchemaGraph;

/// Which embedding backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EmbedderKind {
    /// all-MiniLM-L6-v2 in process (offline; scripts/fetch-minilm.sh).
    Minilm,
    /// OpenAI-compatible /v1/embeddings (LUCY_EMBED_URL or LUCY_LLM_URL, LUCY_EMBED_MODEL, LUCY_API_KEY).
    Openai,
    /// Character-trigram hashing: no model, for smoke tests only.
    Hash,
}

#[derive(Debug, clap::Args)]
pub struct CrushArgs {
    /// dbModel JSON file.
    #[arg(long)]
    pub model: PathBuf,
    /// The question (probes are its phrases unless --probes is given).
    #[arg(long, required_unless_present = "probes")]
    pub question: Option<String>,
    /// Hallucinated schema to use as probes, e.g. "Client(gender, birth_date); Loan(amount)".
    #[arg(long)]
    pub probes: Option<String>,
    /// Number of schema elements to retrieve (B = |R|).
    #[arg(long, value_parser = super::num::count)]
    pub budget: usize,
    #[arg(long, value_enum, default_value = "exact")]
    pub solver: SolverKind,
    /// Candidate set size |C(x)|.
    #[arg(long, default_value_t = 100, value_parser = super::num::count)]
    pub candidates: usize,
    /// Time limit of the exact solver, seconds.
    #[arg(long = "time-limit", default_value_t = 10.0, value_parser = super::num::seconds)]
    pub time_limit: f64,
    /// Connectivity score e(d,d') of same-table / foreign-key pairs.
    #[arg(long, default_value_t = 0.01, value_parser = super::num::gamma)]
    pub gamma: f64,
    /// Soft-max temperature τ (paper: 1; smaller rewards covering every probe).
    #[arg(long, default_value_t = 1.0, value_parser = super::num::tau)]
    pub temperature: f64,
    #[arg(long, value_enum, default_value = "minilm")]
    pub embedder: EmbedderKind,
    /// LLM that hallucinates the probes for --question (without one, the
    /// question's phrases are the probes).
    #[command(flatten)]
    pub llm: super::llm::LlmFlags,
}

/// Build the chosen embedder.
pub fn make_embedder(kind: EmbedderKind) -> Result<Box<dyn Embedder>> {
    Ok(match kind {
        EmbedderKind::Minilm => Box::new(MiniLm::load_default()?),
        EmbedderKind::Openai => Box::new(OpenAiEmbedder::from_env()?),
        EmbedderKind::Hash => Box::new(HashEmbedder::default()),
    })
}

pub fn run(args: CrushArgs, ctx: Ctx) -> Result<i32> {
    if args.budget == 0 {
        return Err(Error::Input("--budget must be at least 1".into()));
    }
    if args.candidates == 0 {
        return Err(Error::Input("--candidates must be at least 1".into()));
    }
    if args.time_limit.is_nan() || args.time_limit <= 0.0 {
        return Err(Error::Input("--time-limit must be a positive number of seconds".into()));
    }
    if !(args.temperature.is_finite() && args.temperature > 0.0) {
        return Err(Error::Input("--temperature must be a positive number".into()));
    }
    let model = lucy::model::load(&args.model)?;
    let graph = SchemaGraph::new(model)?;
    let question = args.question.clone().unwrap_or_default();
    let (probes, source) = match &args.probes {
        Some(p) => (crush::probes::parse_schema(p)?, "given".to_string()),
        None => match lucy::llm::build_chat_model(&args.llm.to_args())? {
            Some(llm) => {
                (crush::probes::hallucinate(llm.as_ref(), &question)?, format!("hallucinated by {}", llm.model_name()))
            }
            None => (
                crush::probes::question_phrases(&question),
                "question phrases (offline: no LLM configured)".to_string(),
            ),
        },
    };
    let embedder = make_embedder(args.embedder)?;
    let index = crush::model_index(&graph, embedder.as_ref())?;
    let cfg = CrushConfig {
        budget: args.budget,
        candidates: args.candidates,
        gamma: args.gamma,
        solver: args.solver.into(),
        time_limit_s: args.time_limit,
        temperature: args.temperature,
        ..Default::default()
    };
    let q = args.question.as_deref();
    let out = crush::crush(&index, embedder.as_ref(), q, &probes, &cfg)?;
    if ctx.json {
        print_json(&serde_json::json!({
            "model": graph.model().name,
            "embedder": embedder.id(),
            "probe_source": source,
            "result": out,
        }))?;
        return Ok(0);
    }
    let status = format!("{:?}", out.status).to_lowercase();
    let objective = out.objective.map(|v| format!("{v:.6}")).unwrap_or_else(|| "n/a".into());
    let bound = match (out.upper_bound, out.gap) {
        (Some(u), Some(g)) => format!(", bound {u:.6}, gap {g:.2e}"),
        _ => String::new(),
    };
    println!(
        "CRUSH {:?} on {}: {} of {} candidates, objective {objective}{bound} ({status}), {:.3} s",
        args.solver,
        graph.model().name,
        out.elements.len(),
        out.candidates,
        out.seconds
    );
    println!("probes ({source}): {}", out.probes.join(", "));
    for (i, e) in out.elements.iter().enumerate() {
        println!("{:>3}. {e}", i + 1);
    }
    println!("tables: {}", out.tables.join(", "));
    Ok(0)
}
