//! Where the suites' config files come from: built into the binary (the repository's
//! `configs/*.toml` at build time), so `replicate` works from any directory and on any node, or
//! a directory given with `--configs DIR` (for edited configs).

use crate::config::RunConfig;
use crate::error::{Error, Result};
use std::path::PathBuf;

include!(concat!(env!("OUT_DIR"), "/configs.rs"));

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Configs {
    #[default]
    Builtin,
    Dir(PathBuf),
}

impl Configs {
    /// `--configs DIR` when given, else the built-in files.
    pub fn from_arg(dir: Option<PathBuf>) -> Self {
        dir.map_or(Configs::Builtin, Configs::Dir)
    }

    /// The config file `name` resolved with `overrides`.
    pub fn resolve(&self, name: &str, overrides: &[String]) -> Result<RunConfig> {
        match self {
            Configs::Builtin => {
                let text = builtin(name).ok_or_else(|| {
                    let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
                    Error::config("config", format!("{name:?} is not built in (built in: {})", names.join(", ")))
                })?;
                RunConfig::from_toml_with(text, overrides, &format!("built-in configs/{name}"))
            }
            Configs::Dir(d) => RunConfig::load(Some(&d.join(name)), overrides),
        }
    }

    /// The argument that selects this source again on another command line (`--configs DIR`).
    pub fn arg(&self) -> Vec<String> {
        match self {
            Configs::Builtin => vec![],
            Configs::Dir(d) => vec!["--configs".into(), d.display().to_string()],
        }
    }
}

/// The built-in text of `configs/<name>`.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_repository_config_is_built_in_with_its_text() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let name = p.file_name().unwrap().to_str().unwrap();
                assert_eq!(builtin(name), Some(std::fs::read_to_string(&p).unwrap().as_str()), "{name}");
                n += 1;
            }
        }
        assert_eq!(n, BUILTIN.len());
        assert!(n >= 40);
    }

    #[test]
    fn an_unknown_builtin_config_is_an_error_naming_it() {
        let e = Configs::Builtin.resolve("nope.toml", &[]).unwrap_err().to_string();
        assert!(e.contains("nope.toml") && e.contains("canonical_k10.toml"), "{e}");
        assert!(Configs::Builtin.resolve("canonical_k10.toml", &[]).is_ok());
    }
}
