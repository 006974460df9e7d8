//! `lucy serve`: the library behind an HTTP API (axum on tokio), a web page
//! at `/`, and `/openapi.json`.
//!
//! Safe by default: loopback address unless told otherwise; a bearer token
//! (`LUCY_SERVE_TOKEN`) required on any other address and checked on every
//! `/v1` route when set; on a loopback address only loopback `Host` names
//! are answered (no DNS rebinding); bodies capped by `--max-body`; at most
//! `--max-concurrent` asks/views at once (429 beyond); every request bounded
//! by `--request-timeout`; every error a JSON body with the CLI's message;
//! the LLM's API key never leaves the client configuration.
//!
//! Blocking library work (solver, LLM, SQLite) runs on tokio's blocking
//! pool, one task per request, holding its concurrency permit until it ends.

pub mod api;
pub mod error;
pub mod examples;
pub mod openapi;
pub mod page;
pub mod progress;
pub mod state;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use crate::error::{Error, Result};
use crate::llm::ChatModel;
use error::ApiError;
use state::{AppState, Registry, TraceStore};

/// Environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "LUCY_SERVE_TOKEN";

/// Settings of one server.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub addr: SocketAddr,
    /// Model files or directories of model files.
    pub models: Vec<PathBuf>,
    /// Explicit databases per model name.
    pub dbs: Vec<(String, PathBuf)>,
    /// Bearer token every `/v1` request must carry (None: no check; only
    /// allowed on loopback).
    pub token: Option<String>,
    /// Asks and views running at once; more get 429.
    pub max_concurrent: usize,
    /// Seconds one request may take.
    pub request_timeout: f64,
    /// Largest request body, in bytes.
    pub max_body: usize,
    /// Traces kept for `GET /v1/traces/{id}`.
    pub trace_cap: usize,
}

impl ServeOptions {
    /// Refuse unsafe settings before anything listens.
    pub fn check(&self) -> Result<()> {
        if !self.addr.ip().is_loopback() && self.token.is_none() {
            return Err(Error::Input(format!(
                "refusing to listen on {} (not a loopback address) without a bearer token: set {TOKEN_ENV} (clients then send `Authorization: Bearer <token>`)",
                self.addr
            )));
        }
        if self.token.as_deref().is_some_and(|t| t.trim().len() < 16) {
            return Err(Error::Input(format!("{TOKEN_ENV} is shorter than 16 characters: use a long random token")));
        }
        if self.max_concurrent == 0 || self.max_body == 0 || self.trace_cap == 0 {
            return Err(Error::Input("--max-concurrent, --max-body and --trace-cap must be at least 1".into()));
        }
        if !(self.request_timeout > 0.0 && self.request_timeout <= 3600.0) {
            return Err(Error::Input(format!(
                "--request-timeout must be in (0, 3600] seconds, got {}",
                self.request_timeout
            )));
        }
        Ok(())
    }
}

/// Build the shared state: models loaded and validated (a bad model is an
/// error naming its file). Asks retrieve no verified examples; see
/// [`state_with_examples`].
pub fn state(opts: ServeOptions, llm: Option<Box<dyn ChatModel>>) -> Result<Arc<AppState>> {
    state_with_examples(opts, llm, examples::ExampleRetrieval::off())
}

/// [`state`] whose asks retrieve each model's verified queries
/// (`MODEL.examples.jsonl`) as `examples` says.
pub fn state_with_examples(
    opts: ServeOptions,
    llm: Option<Box<dyn ChatModel>>,
    examples: examples::ExampleRetrieval,
) -> Result<Arc<AppState>> {
    opts.check()?;
    let registry = Registry::load(&opts.models, &opts.dbs)?;
    Ok(Arc::new(AppState {
        slots: Arc::new(tokio::sync::Semaphore::new(opts.max_concurrent)),
        traces: Mutex::new(TraceStore::new(opts.trace_cap)),
        registry: RwLock::new(Arc::new(registry)),
        llm: llm.map(Arc::from),
        examples,
        opts,
    }))
}

/// The whole application.
pub fn router(st: Arc<AppState>) -> Router {
    let v1 = Router::new()
        .route("/models", get(api::models))
        .route("/models/reload", post(api::reload))
        .route("/models/{name}", get(api::model))
        .route("/models/{name}/examples", get(api::examples_list).post(api::examples_add))
        .route("/view", post(api::view))
        .route("/ask", post(api::ask))
        .route("/check", post(api::check))
        .route("/traces/svg", post(api::trace_svg_post))
        .route("/traces/{id}", get(api::trace))
        .route("/traces/{id}/svg", get(api::trace_svg))
        .route_layer(from_fn_with_state(st.clone(), require_token))
        .method_not_allowed_fallback(method_not_allowed);
    Router::new()
        .nest("/v1", v1)
        .route("/healthz", get(api::healthz))
        .route("/openapi.json", get(openapi_json))
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/style.css", get(page::style))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(st.opts.max_body))
        .layer(from_fn_with_state(st.clone(), check_host))
        .with_state(st)
}

async fn openapi_json() -> Response {
    static DOC: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    Json(DOC.get_or_init(openapi::document).clone()).into_response()
}

async fn not_found(req: Request) -> ApiError {
    ApiError::not_found(format!("no route {} {}: see /openapi.json", req.method(), req.uri().path()))
}

async fn method_not_allowed(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{} is not allowed on {}: see /openapi.json", req.method(), req.uri().path()),
    )
}

/// Compare without an early exit, so the time taken does not reveal how
/// much of a guessed token was right.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn require_token(State(st): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if let Some(token) = &st.opts.token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        if !given.is_some_and(|g| same(g.as_bytes(), token.as_bytes())) {
            return ApiError::new(
                StatusCode::UNAUTHORIZED,
                format!(
                    "missing or wrong bearer token: send `Authorization: Bearer <token>` with the server's {TOKEN_ENV}"
                ),
            )
            .into_response();
        }
    }
    next.run(req).await
}

/// On a loopback address, answer only loopback host names: a web page on
/// another site cannot reach the API through DNS rebinding.
async fn check_host(State(st): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if st.opts.addr.ip().is_loopback() {
        let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
        let name = host_name(host);
        if !(name.eq_ignore_ascii_case("localhost")
            || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()))
        {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                format!("host `{host}` is not a loopback name; this server listens on {} only", st.opts.addr),
            )
            .into_response();
        }
    }
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `127.0.0.1:8000` → `127.0.0.1`, `[::1]:8000` → `::1`, `localhost` → `localhost`.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

/// Run the server until SIGINT/SIGTERM; SIGHUP reloads the models.
/// Prints `listening on http://ADDR` on stdout once bound (port 0 picks a
/// free port; tests read this line).
pub fn run(st: Arc<AppState>) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(st.opts.max_concurrent + 16)
        .enable_all()
        .build()
        .map_err(|e| Error::Input(format!("cannot start the async runtime: {e}")))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(st.opts.addr)
            .await
            .map_err(|e| Error::Input(format!("cannot listen on {}: {e}", st.opts.addr)))?;
        let addr = listener.local_addr().map_err(|e| Error::Input(e.to_string()))?;
        let names: Vec<String> = st.registry().models.keys().cloned().collect();
        println!("listening on http://{addr}");
        eprintln!(
            "lucy serve: {} model(s) ({}), LLM {}, token {}, at most {} ask/view at once",
            names.len(),
            names.join(", "),
            if st.llm.is_some() { "configured" } else { "not configured (asks need --tables)" },
            if st.opts.token.is_some() { "required" } else { "off (loopback)" },
            st.opts.max_concurrent
        );
        use std::io::Write;
        let _ = std::io::stdout().flush();
        spawn_reload_on_hangup(st.clone());
        axum::serve(listener, router(st))
            .with_graceful_shutdown(shutdown())
            .await
            .map_err(|e| Error::Input(format!("server error: {e}")))
    })
}

#[cfg(unix)]
fn spawn_reload_on_hangup(st: Arc<AppState>) {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut hup) = signal(SignalKind::hangup()) else { return };
    tokio::spawn(async move {
        while hup.recv().await.is_some() {
            let st2 = st.clone();
            match tokio::task::spawn_blocking(move || st2.reload()).await {
                Ok(Ok(n)) => eprintln!("lucy serve: SIGHUP: reloaded {n} model(s)"),
                Ok(Err(e)) => eprintln!("lucy serve: SIGHUP: reload failed, the previous models stay loaded: {e}"),
                Err(e) => eprintln!("lucy serve: SIGHUP: reload failed: {e}"),
            }
        }
    });
}

#[cfg(not(unix))]
fn spawn_reload_on_hangup(_st: Arc<AppState>) {}

async fn shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests;
