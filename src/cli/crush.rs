//! `lucy crush` (in progress).

use super::Ctx;
use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct CrushArgs {}

pub fn run(_args: CrushArgs, _ctx: Ctx) -> Result<i32> {
    Err(Error::Input("not implemented yet".into()))
}
