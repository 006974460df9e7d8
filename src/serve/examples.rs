//! Verified queries in the server's asks: a model's `MODEL.examples.jsonl`
//! (the file `GET`/`POST /v1/models/{name}/examples` manage) is retrieved
//! from for every ask on that model, as `lucy ask` does, unless the request
//! says `"examples": false`.
//!
//! The embedder that ranks them is loaded once, on the first ask whose model
//! has examples (MiniLM costs about 90 MB and a second to load; a server
//! whose models have none never loads it). When it cannot be loaded (the
//! MiniLM files absent) the server says so once on stderr and answers
//! without examples, as `lucy ask` skips an auto-detected file.

use std::sync::{Arc, OnceLock};

use crate::crush::embed::Embedder;
use crate::error::Result;
use crate::examples::{ExampleTables, ExamplesUse};
use crate::graph::SchemaGraph;
use crate::types::Dialect;

/// Builds the embedder (`lucy serve --examples-embedder`).
pub type EmbedderFactory = Box<dyn Fn() -> Result<Box<dyn Embedder>> + Send + Sync>;

/// How the server's asks retrieve verified queries.
pub struct ExampleRetrieval {
    /// Examples per ask unless the request names another count.
    pub k: usize,
    factory: Option<EmbedderFactory>,
    loaded: OnceLock<Option<Arc<dyn Embedder>>>,
}

impl std::fmt::Debug for ExampleRetrieval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExampleRetrieval").field("k", &self.k).field("enabled", &self.factory.is_some()).finish()
    }
}

impl ExampleRetrieval {
    /// No retrieval: asks never see examples.
    pub fn off() -> Self {
        ExampleRetrieval { k: 0, factory: None, loaded: OnceLock::new() }
    }

    /// Retrieve `k` examples per ask, ranked by the embedder `factory` builds.
    pub fn new(k: usize, factory: EmbedderFactory) -> Self {
        ExampleRetrieval { k, factory: Some(factory), loaded: OnceLock::new() }
    }

    fn embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.loaded
            .get_or_init(|| {
                let f = self.factory.as_ref()?;
                match f() {
                    Ok(e) => Some(Arc::from(e)),
                    Err(e) => {
                        eprintln!("lucy serve: asks will not use verified examples: {e}");
                        None
                    }
                }
            })
            .clone()
    }

    /// The examples for one ask on the model loaded from `model_file` as
    /// `graph`: `None` when retrieval is off, `k` is 0, the model has no
    /// examples file, or the embedder could not be loaded. A stale example
    /// (one that no longer checks against the model) is an error naming the
    /// file by name and the line.
    pub fn for_ask(
        &self,
        model_file: &std::path::Path,
        graph: &SchemaGraph,
        question: &str,
        dialect: Dialect,
        k: Option<usize>,
    ) -> Result<Option<ExamplesUse>> {
        let k = k.unwrap_or(self.k);
        if self.factory.is_none() || k == 0 {
            return Ok(None);
        }
        let path = crate::examples::default_path(model_file);
        if !path.is_file() {
            return Ok(None);
        }
        let Some(embedder) = self.embedder() else { return Ok(None) };
        // Answers name the file, never the server's directories.
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        crate::examples::use_file(&path, file, graph, question, dialect, embedder.as_ref(), k, ExampleTables::Offer)
            .map(Some)
            .map_err(|e| {
                let dir = path.parent().map(|d| format!("{}/", d.display())).unwrap_or_default();
                crate::error::Error::Input(e.to_string().replace(&dir, ""))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crush::embed::HashEmbedder;

    struct Model {
        file: std::path::PathBuf,
        graph: SchemaGraph,
    }

    fn model(dir: &std::path::Path, examples: Option<&str>) -> Model {
        let file = dir.join("ddo.json");
        std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json"), &file).unwrap();
        if let Some(text) = examples {
            std::fs::write(dir.join("ddo.examples.jsonl"), text).unwrap();
        }
        let graph = SchemaGraph::new(crate::model::load(&file).unwrap()).unwrap();
        Model { file, graph }
    }

    const LINES: &str = "{\"question\": \"Which clients use the datacenter named prod1?\", \"sql\": \"SELECT CLIENT.name FROM CLIENT\"}\n";

    #[test]
    fn off_without_a_file_or_a_factory() {
        let dir = tempfile::tempdir().unwrap();
        let m = model(dir.path(), None);
        let r = ExampleRetrieval::new(3, Box::new(|| Ok(Box::new(HashEmbedder::default()) as Box<dyn Embedder>)));
        assert_eq!(r.for_ask(&m.file, &m.graph, "q", Dialect::Sqlite, None).unwrap(), None);
        let m = model(dir.path(), Some(LINES));
        assert_eq!(ExampleRetrieval::off().for_ask(&m.file, &m.graph, "q", Dialect::Sqlite, None).unwrap(), None);
        assert_eq!(r.for_ask(&m.file, &m.graph, "q", Dialect::Sqlite, Some(0)).unwrap(), None);
    }

    #[test]
    fn retrieves_from_the_model_s_file_and_names_it_without_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let m = model(dir.path(), Some(LINES));
        let r = ExampleRetrieval::new(3, Box::new(|| Ok(Box::new(HashEmbedder::default()) as Box<dyn Embedder>)));
        let u = r.for_ask(&m.file, &m.graph, "clients of prod1", Dialect::Sqlite, None).unwrap().expect("examples");
        assert_eq!((u.file.as_str(), u.k, u.retrieved.len()), ("ddo.examples.jsonl", 3, 1));
        std::fs::write(
            dir.path().join("ddo.examples.jsonl"),
            "{\"question\": \"x\", \"sql\": \"SELECT nope FROM CLIENT\"}\n",
        )
        .unwrap();
        let e = r.for_ask(&m.file, &m.graph, "q", Dialect::Sqlite, None).unwrap_err().to_string();
        assert!(e.contains("ddo.examples.jsonl:1") && !e.contains(dir.path().to_str().unwrap()), "{e}");
    }

    #[test]
    fn an_embedder_that_cannot_load_means_no_examples_not_a_failed_ask() {
        let dir = tempfile::tempdir().unwrap();
        let m = model(dir.path(), Some(LINES));
        let r = ExampleRetrieval::new(3, Box::new(|| Err(crate::error::Error::Input("MiniLM files absent".into()))));
        assert_eq!(r.for_ask(&m.file, &m.graph, "q", Dialect::Sqlite, None).unwrap(), None);
    }
}
