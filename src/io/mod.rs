//! Files: safetensors tensors and TL-named weights, and the export format.

pub mod export;
pub mod tensors;
pub mod weights;

/// The most a text input (a config, a rename list, a golden file) may hold: far above any real
/// one, and a bound on what `--config /dev/zero` could make us read.
pub const MAX_TEXT_BYTES: u64 = 16 << 20;

/// Read a text input of at most [`MAX_TEXT_BYTES`]; a device or a huge file is refused by name
/// instead of read without end.
pub fn read_text(path: &std::path::Path) -> crate::error::Result<String> {
    use crate::error::Error;
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(MAX_TEXT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > MAX_TEXT_BYTES {
        return Err(Error::format(path, format!("longer than {} MiB: not a text input", MAX_TEXT_BYTES >> 20)));
    }
    String::from_utf8(bytes).map_err(|e| Error::format(path, format!("not UTF-8 text ({e})")))
}
