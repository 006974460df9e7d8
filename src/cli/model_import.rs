//! `lucy model import` (in progress).

use super::Ctx;
use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct ImportArgs {}

pub fn run(_args: ImportArgs, _ctx: Ctx) -> Result<i32> {
    Err(Error::Input("not implemented yet".into()))
}
