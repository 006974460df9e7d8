//! `lucy model …`: check, show, import, suggest, schema.

use std::path::PathBuf;

use super::Ctx;
use lucy::error::{Error, Result};
use lucy::graph::{render, suggest};

#[derive(Debug, clap::Subcommand)]
pub enum ModelCommand {
    /// Validate dbModels (native or split-file form) and print a summary of
    /// each, warnings on stderr; exit 2 with every validation error on stderr.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List tables, columns, keys, relationships and patterns; with --json,
    /// print the normalized model.
    Show { file: PathBuf },
    /// Import a dbModel from DDL, a SQLite file, BIRD/Spider tables.json, or
    /// the live catalog of a PostgreSQL or MySQL server.
    Import(super::model_import::ImportArgs),
    /// Propose m:m, lookup, star and snowflake patterns from the keys, as a
    /// JSON patch (RFC 6902) to review and apply.
    Suggest {
        file: PathBuf,
        /// Print the whole model with every proposal applied instead of the
        /// patch (review it with a diff).
        #[arg(long)]
        apply: bool,
    },
    /// What moved between two dbModels (e.g. a curated model and a fresh
    /// `model import` of the warehouse): tables, columns, primary keys and
    /// relationships added (+), removed (-) or changed (~). Exit 0 when
    /// they match, 1 when they differ.
    Diff {
        /// The reference model (e.g. the curated one).
        old: PathBuf,
        /// The model to compare with it (e.g. a fresh import).
        new: PathBuf,
    },
    /// Print the JSON Schema of the dbModel format
    /// (docs/dbmodel.schema.json is this output).
    Schema,
}

pub fn run(cmd: ModelCommand, ctx: Ctx) -> Result<i32> {
    match cmd {
        ModelCommand::Check { files } => {
            let mut summaries = Vec::new();
            let mut failed: Option<Error> = None;
            for file in &files {
                match check_one(file, ctx) {
                    Ok(v) => summaries.push(v),
                    // With one file the error is the command's error; with
                    // several, report each and carry on.
                    Err(e) if files.len() == 1 => return Err(e),
                    Err(e) => {
                        super::report_error(&e, ctx);
                        failed = Some(e);
                    }
                }
            }
            if ctx.json {
                match &summaries[..] {
                    [one] if files.len() == 1 => super::print_json(one)?,
                    _ => super::print_json(&summaries)?,
                }
            }
            Ok(failed.map_or(0, |e| e.exit_code()))
        }
        ModelCommand::Show { file } => {
            let g = lucy::graph::load(&file)?;
            if ctx.json {
                super::print_json(g.model())?;
            } else {
                print!("{}", render::show_text(&g));
            }
            Ok(0)
        }
        ModelCommand::Import(a) => super::model_import::run(a, ctx),
        ModelCommand::Diff { old, new } => {
            let (a, b) = (lucy::model::load(&old)?, lucy::model::load(&new)?);
            let changes = lucy::model::diff::diff(&a, &b);
            if ctx.json {
                super::print_json(&serde_json::json!({"old": old, "new": new, "changes": changes}))?;
            } else if changes.is_empty() {
                println!(
                    "{} and {}: no differences in tables, columns, keys or relationships",
                    old.display(),
                    new.display()
                );
            } else {
                println!("--- {}\n+++ {}", old.display(), new.display());
                for c in &changes {
                    println!("{c}");
                }
            }
            Ok(i32::from(!changes.is_empty()))
        }
        ModelCommand::Suggest { file, apply } => {
            let g = lucy::graph::load(&file)?;
            let proposals = suggest::suggest(&g);
            let roles = suggest::suggest_roles(&g);
            // One RFC 6902 patch: patterns, then relationship roles.
            let mut patch = serde_json::to_value(&proposals).map_err(|e| Error::Input(e.to_string()))?;
            if let (Some(list), Ok(serde_json::Value::Array(more))) =
                (patch.as_array_mut(), serde_json::to_value(&roles))
            {
                list.extend(more);
            }
            if apply {
                let mut m = g.model().clone();
                suggest::apply(&mut m, &proposals);
                suggest::apply_roles(&mut m, &roles);
                // Proposals are built to validate; check anyway before printing.
                lucy::model::validate::check(&m, Some(&file.display().to_string()))?;
                if !ctx.json {
                    eprintln!("{}: {} proposal(s) applied", file.display(), proposals.len() + roles.len());
                }
                super::print_json(&m)?;
            } else if ctx.json {
                super::print_json(&patch)?;
            } else {
                if proposals.is_empty() && roles.is_empty() {
                    eprintln!("{}: no new patterns to propose", file.display());
                } else {
                    eprintln!(
                        "{}: {} proposal(s); review, then add the chosen values to $.patterns (roles: to the relationships named by their path):",
                        file.display(),
                        proposals.len() + roles.len()
                    );
                    for (i, p) in proposals.iter().enumerate() {
                        eprintln!("  {}. {}: {}", i + 1, render::pattern_kind(&p.value), p.reason);
                    }
                    for (i, r) in roles.iter().enumerate() {
                        eprintln!("  {}. role {} at {}: {}", proposals.len() + i + 1, r.value, r.path, r.reason);
                    }
                }
                super::print_json(&patch)?;
            }
            Ok(0)
        }
        ModelCommand::Schema => {
            print!("{}", lucy::model::schema::json_schema_text());
            Ok(0)
        }
    }
}

/// Check one file: print its summary (text mode) and warnings; return the
/// JSON summary.
fn check_one(file: &std::path::Path, ctx: Ctx) -> Result<serde_json::Value> {
    let g = lucy::graph::load(file)?;
    let s = render::summary(&g);
    let shown = file.display().to_string();
    let warnings: Vec<_> = lucy::model::lint::warnings(g.model())
        .into_iter()
        .map(|mut w| {
            w.file = Some(shown.clone());
            w
        })
        .collect();
    let mut v = serde_json::to_value(&s).map_err(|e| Error::Input(e.to_string()))?;
    if let Some(o) = v.as_object_mut() {
        o.insert("file".into(), shown.clone().into());
        o.insert("valid".into(), true.into());
        o.insert("warnings".into(), serde_json::to_value(&warnings).unwrap_or_default());
    }
    if !ctx.json {
        print!("{}", render::summary_text(&s, &shown));
        for w in &warnings {
            eprintln!("warning: {w}");
        }
    }
    Ok(v)
}
