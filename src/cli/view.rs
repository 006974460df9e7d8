//! `lucy view` (in progress).

use super::Ctx;
use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct ViewArgs {}

pub fn run(_args: ViewArgs, _ctx: Ctx) -> Result<i32> {
    Err(Error::Input("not implemented yet".into()))
}
