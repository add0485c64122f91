//! Memory estimates made before allocating, so that a size inside the validated ranges but too
//! large for the machine is refused with the figure instead of aborting the process.

use super::ModelConfig;
use crate::error::{Error, Result};

/// Bytes of the parameters, their gradients and the two AdamW moments.
pub fn training_state_bytes(cfg: &ModelConfig, scalar_bytes: usize) -> u128 {
    4 * cfg.n_params() as u128 * scalar_bytes as u128
}

/// Bytes of the forward/backward workspace for `batch` sequences of `t` tokens (the activation
/// caches of `Workspace::new` and the same again for the backward pass's scratch).
pub fn workspace_bytes(cfg: &ModelConfig, batch: usize, t: usize, scalar_bytes: usize) -> u128 {
    let (n, b, t) = (batch as u128 * t as u128, batch as u128, t as u128);
    let (c, f, v, hd, h) =
        (cfg.d_model as u128, cfg.d_mlp as u128, cfg.d_vocab as u128, cfg.d_attn() as u128, cfg.n_heads as u128);
    let layer = 8 * n * c + 4 * n * hd + 2 * b * h * t * t + 3 * n * f;
    let rest = (cfg.n_layers as u128 + 3) * n * c + n * v + c * f.max(v).max(3 * hd);
    2 * (cfg.n_layers as u128 * layer + rest) * scalar_bytes as u128
}

/// Bytes of a training step at `batch`: parameters, gradients, moments and the workspace.
pub fn training_bytes(cfg: &ModelConfig, batch: usize, t: usize, scalar_bytes: usize) -> u128 {
    training_state_bytes(cfg, scalar_bytes) + workspace_bytes(cfg, batch, t, scalar_bytes)
}

/// The memory a job may use: `WINDTUNNEL_MAX_MEMORY` (bytes, or with a K/M/G suffix), else the
/// kernel's MemAvailable, else 16 GiB.
pub fn limit() -> u128 {
    if let Ok(Some(v)) = env_limit() {
        return v;
    }
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
            Some(line.split_whitespace().nth(1)?.parse::<u128>().ok()? * 1024)
        })
        .unwrap_or(16 << 30)
}

/// `WINDTUNNEL_MAX_MEMORY` when set: an error naming it when it is not a size of at least 1 byte.
pub fn env_limit() -> Result<Option<u128>> {
    match std::env::var("WINDTUNNEL_MAX_MEMORY") {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Ok(s) => match parse_size(&s) {
            Some(n) if n > 0 => Ok(Some(n)),
            _ => Err(Error::config(
                "WINDTUNNEL_MAX_MEMORY",
                format!("{s:?} (allowed a number of bytes ≥ 1, optionally with a K, M, G or T suffix: 8G, 512M)"),
            )),
        },
        Err(_) => Err(Error::config("WINDTUNNEL_MAX_MEMORY", "not valid UTF-8 (allowed e.g. 8G, 512M)")),
    }
}

/// "8G", "512M", "1000000" → bytes.
pub fn parse_size(s: &str) -> Option<u128> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()?.to_ascii_uppercase() {
        'K' => (&s[..s.len() - 1], 1u128 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.trim().parse::<u128>().ok().map(|n| n * mult)
}

/// Refuse `what` when its estimate exceeds the limit, with both figures.
pub fn check(what: &str, bytes: u128) -> Result<()> {
    let lim = limit();
    if bytes <= lim {
        return Ok(());
    }
    Err(Error::Memory { what: what.to_string(), needs: bytes, available: lim })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_run_fits_and_a_huge_model_does_not() {
        let cfg = ModelConfig::default();
        let canonical = training_state_bytes(&cfg, 4) + workspace_bytes(&cfg, 128, 17, 4);
        // 807,720 parameters × 4 copies × 4 bytes ≈ 12.9 MB plus activations (twice, for the
        // backward's scratch): an upper bound of the canonical run's measured peak RSS (< 200 MB).
        assert!(canonical > 12_000_000 && canonical < 500_000_000, "{canonical}");
        let huge = ModelConfig { d_model: 8192, n_heads: 256, d_head: 1024, d_mlp: 65_536, n_layers: 64, ..cfg };
        assert!(training_state_bytes(&huge, 4) > 1 << 40, "a 2-TB model is estimated as one");
        assert!(check("this", 1 << 50).unwrap_err().to_string().contains(" GB of memory"));
        let e = Error::Memory { what: "this".into(), needs: 2_500_000, available: 17_600_000_000 };
        assert!(e.to_string().starts_with("this needs about 2.5 MB of memory") && e.to_string().contains("17.6 GB is"));
        assert!(check("this", 1).is_ok());
    }

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("64G"), Some(64 << 30));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("lots"), None);
    }
}
