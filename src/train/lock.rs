//! `<run>.lock` beside a run directory: the one writer of a run. It names the holder as
//! `host pid` and the holder refreshes the file's modification time every [`HEARTBEAT`], so a
//! lock is taken over only when its holder is provably gone: a dead pid on this host, or no
//! heartbeat for [`STALE`] from another host (whose /proc we cannot see; a node that died keeps
//! no heartbeat). Two nodes sharing a results directory therefore never train the same run.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

pub const HEARTBEAT: Duration = Duration::from_secs(30);
pub const STALE: Duration = Duration::from_secs(300);

/// This machine's host name (as Slurm and `hostname` report it).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Who holds a lock, as written in it.
#[derive(Clone, Debug, PartialEq)]
pub struct Holder {
    pub host: String,
    pub pid: u32,
    /// Time since the last heartbeat.
    pub age: Duration,
}

impl Holder {
    /// Whether the holder may still be writing the run.
    pub fn alive(&self) -> bool {
        if self.host == host_name() { Path::new("/proc").join(self.pid.to_string()).exists() } else { self.age < STALE }
    }
}

/// The lock path of the run directory `dir`.
pub fn lock_path(dir: &Path) -> PathBuf {
    super::layout::lock(dir)
}

/// The current holder of `dir`'s lock, if the lock file exists and parses. A bare pid (the
/// format before host names) counts as this host's.
pub fn holder(dir: &Path) -> Option<Holder> {
    let path = lock_path(dir);
    let text = std::fs::read_to_string(&path).ok()?;
    let age = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
    let age = SystemTime::now().duration_since(age).unwrap_or_default();
    let mut it = text.split_whitespace();
    let (host, pid) = match (it.next(), it.next()) {
        (Some(h), Some(p)) => (h.to_string(), p.parse().ok()?),
        (Some(p), None) => (host_name(), p.parse().ok()?),
        _ => return None,
    };
    Some(Holder { host, pid, age })
}

/// A held lock; released (file removed) on drop, heartbeat stopped.
pub struct RunLock {
    path: PathBuf,
    stop: Arc<AtomicBool>,
}

impl RunLock {
    pub fn acquire(dir: &Path) -> Result<Self> {
        let path = lock_path(dir);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        for _ in 0..2 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    use std::io::Write;
                    write!(f, "{} {}", host_name(), std::process::id()).map_err(|e| Error::io(&path, e))?;
                    return Ok(Self::with_heartbeat(path));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match holder(dir) {
                    Some(h) if h.alive() => return Err(held_by(dir, &path, &h)),
                    // Left by a process that died (or an unreadable, half-written file): take it over.
                    _ => {
                        let _ = std::fs::remove_file(&path);
                    }
                },
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        Err(Error::other(format!("could not lock {} (another process took it first)", path.display())))
    }

    fn with_heartbeat(path: PathBuf) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (path.clone(), stop.clone());
        std::thread::spawn(move || {
            let tick = Duration::from_millis(500);
            let mut since = Duration::ZERO;
            while !s.load(Ordering::Relaxed) {
                std::thread::sleep(tick);
                since += tick;
                if since >= HEARTBEAT {
                    since = Duration::ZERO;
                    let _ =
                        std::fs::File::options().append(true).open(&p).and_then(|f| f.set_modified(SystemTime::now()));
                }
            }
        });
        RunLock { path, stop }
    }
}

fn held_by(dir: &Path, path: &Path, h: &Holder) -> Error {
    Error::other(format!(
        "{} is being trained by process {} on {} (heartbeat {} s ago, {}); wait for it or stop it. If that \
         host is gone, the lock is taken over {} s after its last heartbeat",
        dir.display(),
        h.pid,
        h.host,
        h.age.as_secs(),
        path.display(),
        STALE.as_secs()
    ))
}

impl Drop for RunLock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plant(dir: &Path, text: &str, age: Duration) {
        let p = lock_path(dir);
        std::fs::write(&p, text).unwrap();
        std::fs::File::options().append(true).open(&p).unwrap().set_modified(SystemTime::now() - age).unwrap();
    }

    fn run_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wt-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(lock_path(&d));
        d
    }

    #[test]
    fn a_live_foreign_holder_is_refused_by_name() {
        let d = run_dir("foreign");
        plant(&d, "node-17 4242", Duration::from_secs(10));
        let e = RunLock::acquire(&d).err().expect("must refuse").to_string();
        assert!(e.contains("node-17") && e.contains("4242"), "{e}");
        assert_eq!(std::fs::read_to_string(lock_path(&d)).unwrap(), "node-17 4242", "the holder's lock is kept");
        std::fs::remove_file(lock_path(&d)).unwrap();
    }

    #[test]
    fn a_foreign_holder_without_heartbeat_is_taken_over() {
        let d = run_dir("stale");
        plant(&d, "node-17 4242", STALE + Duration::from_secs(5));
        let lock = RunLock::acquire(&d).expect("stale lock taken over");
        let h = holder(&d).unwrap();
        assert_eq!((h.host, h.pid), (host_name(), std::process::id()));
        drop(lock);
        assert!(!lock_path(&d).exists());
    }

    #[test]
    fn a_dead_local_pid_is_taken_over_and_a_live_one_refused() {
        let d = run_dir("local");
        // pid_max is at most 2^22, so this pid cannot exist.
        plant(&d, &format!("{} 99999999", host_name()), Duration::ZERO);
        drop(RunLock::acquire(&d).expect("dead holder"));
        plant(&d, &std::process::id().to_string(), Duration::from_secs(3600));
        assert!(RunLock::acquire(&d).is_err(), "a bare live pid of this host is a holder");
        std::fs::remove_file(lock_path(&d)).unwrap();
    }
}
