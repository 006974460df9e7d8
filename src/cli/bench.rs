//! `lucy bench` (in progress).

use super::Ctx;
use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct BenchArgs {}

pub fn run(_args: BenchArgs, _ctx: Ctx) -> Result<i32> {
    Err(Error::Input("not implemented yet".into()))
}
