//! `manifest.json`: what built and ran a run — the build and machine that started it, and one
//! segment per start or resume (revision, arithmetic, CPU, host, first step), so a run trained
//! over several sessions or machines says which build trained which steps.

use crate::error::{Error, Result};
use crate::io::tensors::write_atomic;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Provenance of a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub windtunnel_version: String,
    pub git_revision: String,
    /// [`crate::numerics::ARITHMETIC`] of the build that trained the run (absent before v2: 1).
    #[serde(default = "arithmetic_v1")]
    pub arithmetic: u32,
    pub threads: usize,
    /// Widest SIMD extension of this CPU, and the level the binary was compiled for.
    pub simd_cpu: String,
    pub simd_compiled: String,
    /// CPU brand string and the kernels chosen for it (speed only; never the bits).
    #[serde(default)]
    pub cpu: String,
    #[serde(default)]
    pub kernels: String,
    pub dtype: String,
    pub command: Vec<String>,
    pub started_unix_s: u64,
    /// The resolved config the run started with, and the sha256 of each input file by config
    /// key (absent in runs started before they were recorded): `--resume` checks both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_toml: Option<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub inputs: std::collections::BTreeMap<String, String>,
    /// Every training segment, in order (absent in runs started before they were recorded: one
    /// segment, described by the fields above).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<Segment>,
}

/// One stretch of a run's training by one process: from `from_step` to the next segment's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub from_step: u64,
    pub windtunnel_version: String,
    pub git_revision: String,
    pub arithmetic: u32,
    pub cpu: String,
    pub simd_cpu: String,
    pub kernels: String,
    pub threads: usize,
    pub host: String,
    pub started_unix_s: u64,
}

fn arithmetic_v1() -> u32 {
    1
}

/// The widest SIMD level of this CPU (`scalar`, `avx2+fma`, `avx512`).
pub fn simd_cpu() -> String {
    crate::numerics::simd::detected().name().into()
}

pub fn simd_compiled() -> String {
    if cfg!(target_feature = "avx512f") {
        "avx512f"
    } else if cfg!(target_feature = "avx2") {
        "avx2"
    } else if cfg!(target_feature = "sse2") {
        "sse2"
    } else {
        "baseline"
    }
    .into()
}

fn now_unix_s() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// This build's revision (`-dirty` when built from uncommitted changes).
pub fn revision() -> &'static str {
    env!("WINDTUNNEL_GIT_REV")
}

impl Segment {
    /// This process, training from `from_step`.
    pub fn current(from_step: u64) -> Self {
        Segment {
            from_step,
            windtunnel_version: env!("CARGO_PKG_VERSION").into(),
            git_revision: revision().into(),
            arithmetic: crate::numerics::ARITHMETIC,
            cpu: crate::numerics::simd::cpu_model(),
            simd_cpu: simd_cpu(),
            kernels: crate::numerics::kernel_summary(),
            threads: rayon::current_num_threads(),
            host: super::lock::host_name(),
            started_unix_s: now_unix_s(),
        }
    }
}

impl Manifest {
    pub fn current(dtype: &str) -> Self {
        let seg = Segment::current(0);
        Manifest {
            windtunnel_version: seg.windtunnel_version.clone(),
            git_revision: seg.git_revision.clone(),
            arithmetic: seg.arithmetic,
            threads: seg.threads,
            simd_cpu: seg.simd_cpu.clone(),
            simd_compiled: simd_compiled(),
            cpu: seg.cpu.clone(),
            kernels: seg.kernels.clone(),
            dtype: dtype.into(),
            command: std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect(),
            started_unix_s: seg.started_unix_s,
            config_toml: None,
            inputs: Default::default(),
            segments: vec![seg],
        }
    }

    /// `manifest.json` of the run directory `dir`.
    pub fn read(dir: &Path) -> Result<Self> {
        let mp = super::layout::manifest(dir);
        let text = std::fs::read_to_string(&mp).map_err(|e| Error::io(&mp, e))?;
        serde_json::from_str(&text).map_err(|e| Error::format(&mp, e.to_string()))
    }

    pub fn write(&self, dir: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).expect("a manifest serialises");
        write_atomic(&super::layout::manifest(dir), text.as_bytes())
    }

    /// The training segments; a manifest from before they were recorded has one, its own.
    pub fn segments(&self) -> Vec<Segment> {
        if !self.segments.is_empty() {
            return self.segments.clone();
        }
        vec![Segment {
            from_step: 0,
            windtunnel_version: self.windtunnel_version.clone(),
            git_revision: self.git_revision.clone(),
            arithmetic: self.arithmetic,
            cpu: self.cpu.clone(),
            simd_cpu: self.simd_cpu.clone(),
            kernels: self.kernels.clone(),
            threads: self.threads,
            host: String::new(),
            started_unix_s: self.started_unix_s,
        }]
    }

    /// Record that this process resumes the run at `step`. Segments that started at or after
    /// `step` are dropped: their steps were lost to the interruption and are trained again.
    pub fn resumed(&mut self, step: u64) {
        let mut segs = self.segments();
        segs.retain(|s| s.from_step < step);
        segs.push(Segment::current(step));
        self.segments = segs;
    }

    /// Refuse to continue a run trained under another arithmetic (its trajectory would mix
    /// two), or by another revision unless `other_revision` (the code that trains may differ).
    pub fn check_resumable(&self, dir: &Path, other_revision: bool) -> Result<()> {
        let last = self.segments().pop().expect("one segment at least");
        let now = crate::numerics::ARITHMETIC;
        if last.arithmetic != now {
            return Err(Error::refused(format!(
                "{} was trained under arithmetic v{} (windtunnel {} at {}); this build computes arithmetic v{now}, so \
                 resuming would mix two arithmetics in one trajectory. Start the run over (--force), or finish it with \
                 a v{} build (git checkout {})",
                dir.display(),
                last.arithmetic,
                last.windtunnel_version,
                last.git_revision,
                last.arithmetic,
                last.git_revision.trim_end_matches("-dirty")
            )));
        }
        if last.git_revision != revision() && !other_revision {
            return Err(Error::refused(format!(
                "{} was trained by revision {} (from step {}); this build is {}. Resuming under another revision can \
                 change what the remaining steps compute; finish it with a build of {} (git worktree add <dir> {}), or \
                 pass --allow-other-revision to continue with this one (the manifest records the new segment)",
                dir.display(),
                last.git_revision,
                last.from_step,
                revision(),
                last.git_revision,
                last.git_revision.trim_end_matches("-dirty")
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn old_manifest(rev: &str, arithmetic: u32) -> Manifest {
        let mut m = Manifest::current("f32");
        (m.git_revision, m.arithmetic, m.segments) = (rev.into(), arithmetic, vec![]);
        m
    }

    #[test]
    fn a_manifest_without_segments_has_one_its_own() {
        let m = old_manifest("abc123", 2);
        let s = m.segments();
        assert_eq!((s.len(), s[0].from_step, s[0].git_revision.as_str()), (1, 0, "abc123"));
        let json = serde_json::to_string(&m).unwrap();
        assert!(!json.contains("segments"), "an old manifest round-trips without the field");
    }

    #[test]
    fn each_resume_adds_a_segment_and_drops_the_lost_ones() {
        let mut m = old_manifest("abc123", 2);
        m.resumed(6000);
        m.resumed(8000);
        assert_eq!(m.segments.iter().map(|s| s.from_step).collect::<Vec<_>>(), [0, 6000, 8000]);
        assert_eq!(m.segments[2].git_revision, revision());
        // Killed before its next resume state: it resumes at 8000 again, and once more at 0.
        m.resumed(8000);
        assert_eq!(m.segments.iter().map(|s| s.from_step).collect::<Vec<_>>(), [0, 6000, 8000]);
        m.resumed(0);
        assert_eq!(m.segments.iter().map(|s| s.from_step).collect::<Vec<_>>(), [0]);
        assert_eq!(m.segments[0].git_revision, revision(), "the new segment, not abc123's");
    }

    #[test]
    fn resume_refuses_another_revision_unless_told_and_another_arithmetic_always() {
        let dir = Path::new("runs/x");
        let same = Manifest::current("f32");
        assert!(same.check_resumable(dir, false).is_ok());
        let other = old_manifest("0123456789ab", crate::numerics::ARITHMETIC);
        let e = other.check_resumable(dir, false).unwrap_err().to_string();
        assert!(e.contains("0123456789ab") && e.contains("--allow-other-revision"), "{e}");
        assert!(other.check_resumable(dir, true).is_ok());
        let v1 = old_manifest(revision(), 1);
        let e = v1.check_resumable(dir, true).unwrap_err().to_string();
        assert!(e.contains("arithmetic v1"), "{e}");
        // The last segment decides: a run resumed once under this revision resumes again.
        let mut resumed = other.clone();
        resumed.resumed(400);
        assert!(resumed.check_resumable(dir, false).is_ok());
    }
}
