//! What the server holds: the loaded models (reloadable as a whole), the
//! LLM client, the recent traces and the cap on expensive requests.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use crate::error::{Error, Result};
use crate::graph::SchemaGraph;
use crate::llm::ChatModel;
use crate::types::trace::Trace;

use super::ServeOptions;

/// One loaded dbModel.
#[derive(Debug)]
pub struct LoadedModel {
    /// The file it came from.
    pub file: PathBuf,
    pub graph: Arc<SchemaGraph>,
    /// SQLite database asks may execute on (`FILE.sqlite` beside the model,
    /// or `--db NAME=PATH`).
    pub database: Option<PathBuf>,
}

/// Every model the server answers for, by `DbModel::name`.
#[derive(Debug, Default)]
pub struct Registry {
    pub models: BTreeMap<String, Arc<LoadedModel>>,
}

impl Registry {
    /// Load every model of `sources` (files, or directories whose `*.json`
    /// files are all dbModels). Any bad model fails the whole load with an
    /// error naming its file, so a server never runs on half its models.
    pub fn load(sources: &[PathBuf], dbs: &[(String, PathBuf)]) -> Result<Registry> {
        let mut files = Vec::new();
        for s in sources {
            if s.is_dir() {
                let mut v: Vec<PathBuf> = std::fs::read_dir(s)
                    .map_err(|e| Error::io(s, e))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
                    .collect();
                v.sort();
                if v.is_empty() {
                    return Err(Error::Input(format!("{}: no *.json dbModel files in this directory", s.display())));
                }
                files.extend(v);
            } else {
                files.push(s.clone());
            }
        }
        if files.is_empty() {
            return Err(Error::Input("no dbModel given: pass --models DIR|FILE".into()));
        }
        let mut reg = Registry::default();
        for f in files {
            let model = crate::model::load(&f)?;
            let graph = SchemaGraph::new(model).map_err(|e| Error::Input(format!("{}: {e}", f.display())))?;
            let name = graph.model().name.clone();
            if let Some(prev) = reg.models.get(&name) {
                return Err(Error::Input(format!(
                    "{} and {} both define the dbModel `{name}`; model names must be unique",
                    prev.file.display(),
                    f.display()
                )));
            }
            let sibling = f.with_extension("sqlite");
            let database = sibling.is_file().then_some(sibling);
            reg.models.insert(name, Arc::new(LoadedModel { file: f, graph: Arc::new(graph), database }));
        }
        for (name, path) in dbs {
            let Some(m) = reg.models.get_mut(name) else {
                let names: Vec<&str> = reg.models.keys().map(String::as_str).collect();
                return Err(Error::Input(format!(
                    "--db {name}=…: no model named `{name}` (loaded: {})",
                    names.join(", ")
                )));
            };
            if !path.is_file() {
                return Err(Error::Input(format!("--db {name}={}: no such file", path.display())));
            }
            *m = Arc::new(LoadedModel { file: m.file.clone(), graph: m.graph.clone(), database: Some(path.clone()) });
        }
        Ok(reg)
    }
}

/// The last traces, by id, oldest dropped first (bounded memory).
#[derive(Debug, Default)]
pub struct TraceStore {
    cap: usize,
    items: VecDeque<(String, Arc<Trace>)>,
}

impl TraceStore {
    pub fn new(cap: usize) -> Self {
        TraceStore { cap: cap.max(1), items: VecDeque::new() }
    }

    /// Keep `trace`; returns its id.
    pub fn put(&mut self, trace: Trace) -> String {
        let id = new_id();
        if self.items.len() >= self.cap {
            self.items.pop_front();
        }
        self.items.push_back((id.clone(), Arc::new(trace)));
        id
    }

    pub fn get(&self, id: &str) -> Option<Arc<Trace>> {
        self.items.iter().find(|(k, _)| k == id).map(|(_, t)| t.clone())
    }
}

/// 16 random hex digits.
fn new_id() -> String {
    use rand::Rng;
    let n: u64 = rand::rng().random();
    format!("{n:016x}")
}

/// Shared by every request.
pub struct AppState {
    pub opts: ServeOptions,
    pub registry: RwLock<Arc<Registry>>,
    pub llm: Option<Arc<dyn ChatModel>>,
    pub traces: Mutex<TraceStore>,
    /// Permits for expensive requests (asks and views).
    pub slots: Arc<tokio::sync::Semaphore>,
    /// How asks retrieve the models' verified queries.
    pub examples: super::examples::ExampleRetrieval,
}

impl AppState {
    /// The current registry (a snapshot: a reload does not disturb requests
    /// in flight).
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.read().map(|r| r.clone()).unwrap_or_default()
    }

    /// A model by name, or an error listing the loaded ones.
    pub fn model(&self, name: &str) -> Result<Arc<LoadedModel>> {
        let reg = self.registry();
        if let Some(m) = reg.models.get(name) {
            return Ok(m.clone());
        }
        if let Some((_, m)) = reg.models.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)) {
            return Ok(m.clone());
        }
        let names: Vec<&str> = reg.models.keys().map(String::as_str).collect();
        Err(Error::Input(format!("unknown model `{name}`; loaded models: {}", names.join(", "))))
    }

    /// Reload every model from the configured sources; on error keep the
    /// old set and return the error.
    pub fn reload(&self) -> Result<usize> {
        let reg = Registry::load(&self.opts.models, &self.opts.dbs)?;
        let n = reg.models.len();
        if let Ok(mut w) = self.registry.write() {
            *w = Arc::new(reg);
        }
        Ok(n)
    }

    /// Keep a trace, return its id.
    pub fn keep_trace(&self, trace: Trace) -> String {
        match self.traces.lock() {
            Ok(mut t) => t.put(trace),
            Err(p) => p.into_inner().put(trace),
        }
    }

    pub fn trace(&self, id: &str) -> Option<Arc<Trace>> {
        self.traces.lock().ok().and_then(|t| t.get(id))
    }
}
