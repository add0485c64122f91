//! The claims report (placeholder until the analysis lands).

use super::suites::Scale;
use crate::error::Result;
use std::path::Path;

pub fn write_report(_suites: &[&str], _scale: Scale, _out: &Path) -> Result<()> {
    eprintln!("(the report is not implemented yet; runs are complete)");
    Ok(())
}
