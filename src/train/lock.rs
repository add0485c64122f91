//! `<run>.lock` beside a run directory: the one writer of a run. It names the holder as
//! `host pid start=<ticks> token=<nonce>` and the holder refreshes the file's modification time
//! every [`heartbeat`], so a lock is taken over only when its holder is provably gone: on this
//! host a pid that no longer exists or was reused (its start time differs), from another host
//! (whose /proc we cannot see) no heartbeat for [`stale`]. A foreign lock that has already missed
//! two heartbeats is waited for, as its host has probably died (a Slurm task requeued after a
//! node failure finds one); if its heartbeat moves meanwhile, the holder lives and is refused.
//!
//! Why it is race-free: the content is written to a private temp file and published by
//! `hard_link`, which fails if the lock exists, so no process ever sees a lock without its
//! holder; checking and taking over a dead holder's lock happens under an `flock` of the runs
//! directory, so two processes cannot both judge one lock stale and both replace it; and a
//! holder only refreshes or removes a lock that still carries its own token.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// How long a foreign holder may go without a heartbeat before its lock is taken over.
pub const STALE: Duration = Duration::from_secs(300);
const STALE_ENV: &str = "WINDTUNNEL_LOCK_STALE";
const STALE_RANGE: std::ops::RangeInclusive<u64> = 10..=86_400;

/// `WINDTUNNEL_LOCK_STALE` (seconds, 10–86400) when set: shorter for tests of dying hosts,
/// longer for filesystems whose modification times lag.
pub fn env_stale() -> Result<Option<Duration>> {
    match std::env::var(STALE_ENV) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Ok(s) => match s.trim().parse::<u64>() {
            Ok(n) if STALE_RANGE.contains(&n) => Ok(Some(Duration::from_secs(n))),
            _ => Err(Error::config(STALE_ENV, format!("{s:?} (allowed whole seconds, 10–86400)"))),
        },
        Err(_) => Err(Error::config(STALE_ENV, "not valid UTF-8 (allowed whole seconds, 10–86400)")),
    }
}

/// The staleness limit in force ([`STALE`] unless `WINDTUNNEL_LOCK_STALE` says otherwise).
pub fn stale() -> Duration {
    env_stale().ok().flatten().unwrap_or(STALE)
}

/// How often a holder refreshes its lock: a tenth of the staleness limit.
pub fn heartbeat() -> Duration {
    stale() / 10
}
/// How long `acquire` waits for the runs directory's guard before giving up.
const GUARD_WAIT: Duration = Duration::from_secs(10);

/// This machine's host name (as Slurm and `hostname` report it).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Start time of process `pid` in clock ticks since boot (`/proc/<pid>/stat` field 22): with
/// the pid it names one process for the life of the machine, so a reused pid is told apart.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Who holds a lock, as written in it.
#[derive(Clone, Debug, PartialEq)]
pub struct Holder {
    pub host: String,
    pub pid: u32,
    /// Time since the last heartbeat.
    pub age: Duration,
    /// The holder's process start time (absent in locks written before it was recorded).
    pub start: Option<u64>,
}

impl Holder {
    /// Whether the holder may still be writing the run.
    pub fn alive(&self) -> bool {
        if self.host != host_name() {
            return self.age < stale();
        }
        match self.start {
            Some(start) => process_start(self.pid) == Some(start),
            // An old-format lock: a live pid counts only while it keeps a heartbeat.
            None => Path::new("/proc").join(self.pid.to_string()).exists() && self.age < stale(),
        }
    }

    /// On another host and silent for two heartbeats: its host has probably died, and the
    /// lock lapses after [`Holder::lapses_in`].
    pub fn silent(&self) -> bool {
        silent_foreign(self, stale())
    }

    pub fn lapses_in(&self) -> Duration {
        stale().saturating_sub(self.age)
    }
}

/// The lock path of the run directory `dir`, beside the directory's real location, so a
/// symlinked alias of a run shares its lock.
pub fn lock_path(dir: &Path) -> PathBuf {
    super::layout::lock(&resolved(dir))
}

/// `dir` with symlinks resolved: the directory itself when it exists, else its parent.
fn resolved(dir: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(dir) {
        return p;
    }
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    match (abs.parent(), abs.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent).map(|p| p.join(name)).unwrap_or(abs),
        _ => abs,
    }
}

/// What a lock file holds.
#[derive(Clone, Debug, PartialEq)]
enum Content {
    Absent,
    Holder(Holder),
    /// A file that names no holder (corrupt, or half-written by a build before atomic locks).
    Unreadable {
        age: Duration,
    },
}

fn read_text(path: &Path) -> Option<(String, Duration)> {
    let text = std::fs::read_to_string(path).ok()?;
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Some((text, SystemTime::now().duration_since(modified).unwrap_or_default()))
}

/// `host pid [start=ticks] [token=…]`; a bare pid (the format before host names) is this host's.
fn parse(text: &str, age: Duration) -> Option<Holder> {
    let mut it = text.split_whitespace();
    let (host, pid) = match (it.next(), it.next()) {
        (Some(p), None) => (host_name(), p.parse().ok()?),
        (Some(h), Some(p)) => (h.to_string(), p.parse().ok()?),
        _ => return None,
    };
    let start = text.split_whitespace().find_map(|w| w.strip_prefix("start=")?.parse().ok());
    Some(Holder { host, pid, age, start })
}

fn content(path: &Path) -> Content {
    match read_text(path) {
        None if !path.exists() => Content::Absent,
        None => Content::Unreadable { age: Duration::ZERO },
        Some((text, age)) => parse(&text, age).map_or(Content::Unreadable { age }, Content::Holder),
    }
}

/// The current holder of `dir`'s lock, if the lock file exists and names one.
pub fn holder(dir: &Path) -> Option<Holder> {
    match content(&lock_path(dir)) {
        Content::Holder(h) => Some(h),
        _ => None,
    }
}

/// A held lock; released (file removed, if still ours) on drop, heartbeat stopped.
pub struct RunLock {
    path: PathBuf,
    text: String,
    stop: Arc<AtomicBool>,
}

impl RunLock {
    pub fn acquire(dir: &Path) -> Result<Self> {
        let path = lock_path(dir);
        env_stale()?;
        wait_for_silent_foreign_holder(dir, &path, stale())?;
        let parent = path.parent().expect("a lock path has a parent").to_path_buf();
        std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
        let _guard = Guard::take(&parent)?;
        let text = own_text();
        for _ in 0..3 {
            match publish(&path, &text) {
                Ok(()) if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) => {
                    return Ok(Self::with_heartbeat(path, text));
                }
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match content(&path) {
                    Content::Absent => continue,
                    Content::Holder(h) if h.alive() => return Err(held_by(dir, &path, &h)),
                    Content::Unreadable { age } if age < stale() => return Err(unreadable(&path, age)),
                    // Left by a process that died: take it over (under the guard, so only once).
                    _ => remove(&path)?,
                },
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        Err(Error::Locked(format!("could not lock {} (another process took it first)", path.display())))
    }

    fn with_heartbeat(path: PathBuf, text: String) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (p, t, s) = (path.clone(), text.clone(), stop.clone());
        std::thread::spawn(move || {
            let (tick, every) = (Duration::from_millis(500), heartbeat());
            let mut since = Duration::ZERO;
            while !s.load(Ordering::Relaxed) {
                std::thread::sleep(tick);
                since += tick;
                if since >= every {
                    since = Duration::ZERO;
                    if is_ours(&p, &t) {
                        let _ = std::fs::File::options()
                            .append(true)
                            .open(&p)
                            .and_then(|f| f.set_modified(SystemTime::now()));
                    }
                }
            }
        });
        RunLock { path, text, stop }
    }
}

/// `host pid start=… token=…` of this process; the token tells two locks of one process apart.
fn own_text() -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let pid = std::process::id();
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let start = process_start(pid).map(|s| format!(" start={s}")).unwrap_or_default();
    format!("{} {pid}{start} token={nanos:x}.{n}\n", host_name())
}

/// Make `path` appear with `text` in one step: a private temp file hard-linked into place
/// (fails with `AlreadyExists` if the lock exists). A filesystem without hard links falls back
/// to create-then-write, which the guard keeps safe among processes of one host.
fn publish(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_file_name(format!(
        "{}.{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy(),
        text.split_whitespace().last().unwrap_or("x").trim_start_matches("token=")
    ));
    std::fs::write(&tmp, text)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
            f.write_all(text.as_bytes())
        }
        other => other,
    }
}

fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}

fn is_ours(path: &Path, text: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t == text)
}

/// An exclusive `flock` of the runs directory for the few microseconds of checking and taking
/// a lock. A filesystem that cannot lock directories goes without (the hard link still keeps
/// two creators apart; only two take-overs of one dead lock could then meet).
struct Guard {
    _file: Option<std::fs::File>,
}

impl Guard {
    fn take(parent: &Path) -> Result<Guard> {
        let Ok(f) = std::fs::File::open(parent) else { return Ok(Guard { _file: None }) };
        let t0 = Instant::now();
        loop {
            match f.try_lock() {
                Ok(()) => return Ok(Guard { _file: Some(f) }),
                Err(std::fs::TryLockError::WouldBlock) if t0.elapsed() < GUARD_WAIT => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Error::Locked(format!(
                        "{} stayed locked by another windtunnel process for {} s while it took a run lock; \
                         is one stopped (Ctrl-Z)? Resume or end it and try again",
                        parent.display(),
                        GUARD_WAIT.as_secs()
                    )));
                }
                Err(std::fs::TryLockError::Error(_)) => return Ok(Guard { _file: None }),
            }
        }
    }
}

/// A lock held from another host that has missed two heartbeats (`stale / 5`): wait (without
/// the guard) until it is stale, then let `acquire` take it over. Refused by name as soon as the
/// heartbeat moves (the holder lives) or the lock changes hands.
fn wait_for_silent_foreign_holder(dir: &Path, path: &Path, stale: Duration) -> Result<()> {
    let Content::Holder(first) = content(path) else { return Ok(()) };
    if !silent_foreign(&first, stale) {
        return Ok(());
    }
    eprintln!(
        "{}: held by process {} on {}, whose heartbeat stopped {} s ago: waiting until {} s have passed without one \
         (then the lock is taken over)",
        dir.display(),
        first.pid,
        first.host,
        first.age.as_secs(),
        stale.as_secs()
    );
    let t0 = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        match content(path) {
            Content::Holder(h) if h.host == first.host && h.pid == first.pid => {
                // A heartbeat sets the age back to 0, far below what it would be by now.
                if h.age + stale / 20 < first.age + t0.elapsed() {
                    return Err(held_by(dir, path, &h));
                }
                if h.age >= stale {
                    return Ok(());
                }
            }
            Content::Holder(h) => return Err(held_by(dir, path, &h)),
            _ => return Ok(()),
        }
    }
}

/// Held from another host, two heartbeats missed (`stale / 5`), not yet stale.
fn silent_foreign(h: &Holder, stale: Duration) -> bool {
    h.host != host_name() && h.age >= stale / 5 && h.age < stale
}

fn held_by(dir: &Path, path: &Path, h: &Holder) -> Error {
    Error::Locked(format!(
        "{} is being trained by process {} on {} (heartbeat {} s ago, {}); wait for it or stop it. If that \
         host is gone, the lock is taken over {} s after its last heartbeat",
        dir.display(),
        h.pid,
        h.host,
        h.age.as_secs(),
        path.display(),
        stale().as_secs()
    ))
}

fn unreadable(path: &Path, age: Duration) -> Error {
    Error::Locked(format!(
        "{} names no holder (written {} s ago): another process may be taking it. If none is, it is taken \
         over {} s after it was written, or delete it",
        path.display(),
        age.as_secs(),
        stale().as_secs()
    ))
}

impl Drop for RunLock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if is_ours(&self.path, &self.text) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
#[path = "lock_tests.rs"]
mod tests;
