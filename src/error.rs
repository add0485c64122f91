//! One error type for the crate. Every message says what was wrong and, for configuration
//! errors, which field and what range is allowed.

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub enum Error {
    /// A configuration value out of range or of the wrong kind.
    Config { field: String, message: String },
    /// A file that could not be read or written.
    Io { path: PathBuf, source: std::io::Error },
    /// A file whose contents are not what was expected (truncated, corrupt, wrong config …).
    Format { path: PathBuf, message: String },
    /// Anything else, with a complete sentence.
    Other(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn config(field: &str, message: impl Into<String>) -> Self {
        Error::Config { field: field.to_string(), message: message.into() }
    }
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io { path: path.to_path_buf(), source }
    }
    pub fn format(path: &Path, message: impl Into<String>) -> Self {
        Error::Format { path: path.to_path_buf(), message: message.into() }
    }
    pub fn other(message: impl Into<String>) -> Self {
        Error::Other(message.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config { field, message } => write!(f, "invalid `{field}`: {message}"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Format { path, message } => write!(f, "{}: {message}", path.display()),
            Error::Other(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
