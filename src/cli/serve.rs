//! `lucy serve`: the HTTP API, the web page and `/openapi.json`
//! (see `crate::serve` and docs/serve.md).

use std::net::SocketAddr;
use std::path::PathBuf;

use super::Ctx;
use lucy::error::{Error, Result};
use lucy::llm::build_chat_model;

use super::crush::{make_embedder, EmbedderKind};
use super::llm::LlmFlags;
use lucy::serve::examples::ExampleRetrieval;
use lucy::serve::{ServeOptions, TOKEN_ENV};

/// Serve the planner over HTTP: JSON API, web page at `/`, `/openapi.json`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub served: Served,
    /// Address to listen on. Anything but loopback requires the bearer
    /// token LUCY_SERVE_TOKEN.
    #[arg(long, default_value = "127.0.0.1:8000")]
    pub addr: SocketAddr,
    /// Asks and views run at once; more get 429 Too Many Requests.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub max_concurrent: usize,
    /// Seconds one request may take (also caps the solver's time limit).
    #[arg(long, default_value_t = 120.0, value_name = "SECS")]
    pub request_timeout: f64,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    pub max_body: usize,
    /// Traces of recent asks kept in memory for GET /v1/traces/{id}.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub trace_cap: usize,
    #[command(flatten)]
    pub llm: LlmFlags,
}

/// What `lucy serve` and `lucy mcp` serve: the models and their databases.
#[derive(Debug, clap::Args)]
pub struct Served {
    /// dbModel files, or directories whose *.json files are all dbModels;
    /// every one is validated at start. A FILE.sqlite beside a model is its
    /// database for `execute`.
    #[arg(long, required = true, num_args = 1.., value_name = "DIR|FILE")]
    pub models: Vec<PathBuf>,
    /// SQLite database of a model for `execute`, as NAME=PATH (repeatable).
    #[arg(long = "db", value_name = "NAME=PATH")]
    pub dbs: Vec<String>,
    /// Embedder that ranks a model's verified queries (MODEL.examples.jsonl)
    /// for each ask; loaded on the first ask whose model has some.
    #[arg(long, value_enum, default_value_t = EmbedderKind::Minilm)]
    pub examples_embedder: EmbedderKind,
    /// Verified queries per ask (a request's `examples_k` overrides it).
    #[arg(long, value_name = "K", default_value_t = lucy::examples::DEFAULT_K, value_parser = super::num::count)]
    pub examples_k: usize,
    /// Asks never use the models' verified queries.
    #[arg(long)]
    pub no_examples: bool,
}

impl Served {
    /// How asks retrieve verified queries (`--examples-embedder`,
    /// `--examples-k`, `--no-examples`).
    pub fn example_retrieval(&self) -> ExampleRetrieval {
        if self.no_examples {
            return ExampleRetrieval::off();
        }
        let kind = self.examples_embedder;
        ExampleRetrieval::new(self.examples_k, Box::new(move || make_embedder(kind)))
    }

    /// The model files and the `--db` pairs (model name, SQLite file).
    pub fn split(self) -> Result<(Vec<PathBuf>, Vec<(String, PathBuf)>)> {
        let mut dbs = Vec::new();
        for d in &self.dbs {
            let Some((name, path)) = d.split_once('=') else {
                return Err(Error::Input(format!("--db `{d}`: use NAME=PATH (the model's name, its SQLite file)")));
            };
            dbs.push((name.trim().to_string(), PathBuf::from(path.trim())));
        }
        Ok((self.models, dbs))
    }
}

pub fn run(args: ServeArgs, _ctx: Ctx) -> Result<i32> {
    let examples = args.served.example_retrieval();
    let (models, dbs) = args.served.split()?;
    let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.trim().is_empty());
    let opts = ServeOptions {
        addr: args.addr,
        models,
        dbs,
        token,
        max_concurrent: args.max_concurrent,
        request_timeout: args.request_timeout,
        max_body: args.max_body,
        trace_cap: args.trace_cap,
    };
    let llm = build_chat_model(&args.llm.to_args())?;
    let st = lucy::serve::state_with_examples(opts, llm, examples)?;
    lucy::serve::run(st)?;
    Ok(0)
}
