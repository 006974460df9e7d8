//! `lucy model import --dbt`: import (or, with `--update`, re-import into a
//! curated model), then print the pattern suggester's proposals for review.
//! Nothing is written when anything fails.

use std::path::Path;

use super::super::Ctx;
use super::ImportArgs;
use lucy::error::{Error, Result};
use lucy::graph::{render, suggest};
use lucy::model::import::dbt::update;
use lucy::model::import::{self, DbtOptions};

/// Run the dbt import; exit code 0 even with warnings (they are reported).
pub fn run(args: &ImportArgs, ctx: Ctx) -> Result<i32> {
    let Some(path) = &args.dbt else { return Err(Error::Input("--dbt PATH is required".into())) };
    let opts = DbtOptions {
        path: path.clone(),
        catalog: args.catalog.clone(),
        select: args.select.clone(),
        name: args.name.clone(),
    };
    let imp = import::dbt_with_warnings(&opts)?;
    let mut model = imp.imported.model.clone();
    let warnings = &imp.imported.warnings;
    let (mut changes, mut notes) = (Vec::new(), Vec::new());
    if let Some(curated_path) = &args.update {
        let curated = lucy::model::load(curated_path)?;
        let merged = update::merge(&curated, &model, args.force)?;
        model = merged.model;
        changes = merged.changes;
        notes = merged.notes;
    }
    // The suggester's proposals, never applied: the team reviews them.
    let g = lucy::graph::SchemaGraph::new(model.clone())?;
    let proposals = suggest::suggest(&g);
    let roles = suggest::suggest_roles(&g);
    let out = args.out.as_ref().or(args.update.as_ref());
    if let Some(out) = out {
        write_atomically(out, &model)?;
    }
    if ctx.json {
        let mut v = serde_json::json!({
            "manifest": imp.manifest.display().to_string(),
            "catalog": imp.catalog.as_ref().map(|c| c.display().to_string()),
            "warnings": warnings,
            "relationships_by_origin": imp.relationships_by_origin,
            "proposals": proposals,
            "role_proposals": roles,
        });
        if let Some(o) = v.as_object_mut() {
            match out {
                Some(p) => o.insert("out".into(), p.display().to_string().into()),
                None => o.insert("model".into(), serde_json::to_value(&model).unwrap_or_default()),
            };
            if args.update.is_some() {
                o.insert("changes".into(), serde_json::to_value(&changes).unwrap_or_default());
                o.insert("notes".into(), notes.clone().into());
            }
        }
        super::super::print_json(&v)?;
        return Ok(0);
    }
    for w in warnings {
        eprintln!("warning: {w}");
    }
    let keyed = model.tables.iter().filter(|t| !t.primary_key.is_empty()).count();
    let c = &imp.relationships_by_origin;
    let read = match &imp.catalog {
        Some(cat) => format!("{} + {}", imp.manifest.display(), cat.display()),
        None => format!("{} (no catalog.json: only documented columns)", imp.manifest.display()),
    };
    eprintln!(
        "read {read}: {} tables ({keyed} with a primary key), {} relationships ({} from constraints, {} from tests, {} from entities{}), {} warnings",
        model.tables.len(),
        model.relationships.len(),
        c.constraint,
        c.test,
        c.entity,
        if args.update.is_some() { ", plus the curated model's own" } else { "" },
        warnings.len()
    );
    if let Some(curated_path) = &args.update {
        for n in &notes {
            eprintln!("note: {n}");
        }
        if changes.is_empty() {
            println!("{}: dbt changed no tables, columns, keys or relationships", curated_path.display());
        } else {
            println!("--- {}\n+++ dbt ({})", curated_path.display(), imp.manifest.display());
            for ch in &changes {
                println!("{ch}");
            }
        }
    }
    if proposals.is_empty() && roles.is_empty() {
        eprintln!("no pattern proposals from the keys");
    } else {
        eprintln!(
            "{} proposal(s) from `lucy model suggest` (not applied; review them with `lucy model suggest {}`):",
            proposals.len() + roles.len(),
            out.map_or_else(|| "MODEL.json".to_string(), |p| p.display().to_string())
        );
        for (i, p) in proposals.iter().enumerate() {
            eprintln!("  {}. {}: {}", i + 1, render::pattern_kind(&p.value), p.reason);
        }
        for (i, r) in roles.iter().enumerate() {
            eprintln!("  {}. role {} at {}: {}", proposals.len() + i + 1, r.value, r.path, r.reason);
        }
    }
    match out {
        Some(o) => eprintln!("wrote {}", o.display()),
        None if args.update.is_none() => super::super::print_json(&model)?,
        None => {}
    }
    Ok(0)
}

/// Write the model through a temporary file renamed over `path`, so a
/// failure never leaves a half-written model.
fn write_atomically(path: &Path, model: &lucy::types::DbModel) -> Result<()> {
    let text = serde_json::to_string_pretty(model).map_err(|e| Error::Input(e.to_string()))? + "\n";
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "model.json".into());
    let tmp = path.with_file_name(format!(".{name}.lucy-tmp"));
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}
