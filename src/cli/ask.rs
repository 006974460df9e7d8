//! `lucy ask` (in progress).

use super::Ctx;
use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct AskArgs {}

pub fn run(_args: AskArgs, _ctx: Ctx) -> Result<i32> {
    Err(Error::Input("not implemented yet".into()))
}
