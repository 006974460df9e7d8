//! `lucy model …`: check, show, import, suggest.

use std::path::PathBuf;

use super::Ctx;
use crate::error::Result;

#[derive(Debug, clap::Subcommand)]
pub enum ModelCommand {
    /// Validate a dbModel and print a summary.
    Check { file: PathBuf },
    /// Import a dbModel from DDL, a SQLite file or BIRD/Spider tables.json.
    Import(super::model_import::ImportArgs),
}

pub fn run(cmd: ModelCommand, ctx: Ctx) -> Result<i32> {
    match cmd {
        ModelCommand::Check { file } => {
            let m = crate::model::load(&file)?;
            println!("{}: {} tables, {} relationships, {} patterns", file.display(), m.tables.len(), m.relationships.len(), m.patterns.len());
            Ok(0)
        }
        ModelCommand::Import(a) => super::model_import::run(a, ctx),
    }
}
