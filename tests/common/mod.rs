//! Fixtures shared by the integration tests.
#![allow(dead_code)] // each test binary uses a part

/// A small, fast run: the tiny model on K=3, 50 base strings (D=150), batch 32 (a short last batch
/// of 22), eval every 5 steps, parameter checkpoints every 10 (and powers of two).
pub const SMALL: &str = r#"
[model]
n_layers = 2
d_model = 16
n_heads = 2
d_head = 8
d_mlp = 32
n_ctx = 16
[data]
k = 3
n_b = 50
[train]
batch_size = 32
max_steps = 40
eval_every = 5
checkpoint_every = 10
lr = 3e-3
"#;

/// A path under the system's temporary directory, unique to this test process
/// (`wt-<pid>-<name>`), removed when dropped (a directory or a file, whichever the test made of
/// it), also when the test panics: `cargo test` leaves nothing behind in /tmp.
pub struct Scratch(std::path::PathBuf);

impl Scratch {
    /// A fresh path: anything an earlier process of the same pid left there is removed first.
    pub fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("wt-{}-{name}", std::process::id()));
        remove(&path);
        Scratch(path)
    }
}

fn remove(path: &std::path::Path) {
    if path.is_dir() {
        std::fs::remove_dir_all(path).ok();
    } else {
        std::fs::remove_file(path).ok();
    }
}

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        remove(&self.0);
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}
