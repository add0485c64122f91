//! The memory a job may use, and refusing work whose estimate exceeds it (the estimates of a
//! model's state are `model::memory`): a size inside the validated ranges but too large for the
//! machine is refused with the figure instead of aborting the process.

use crate::error::{Error, Result};

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
    fn an_estimate_above_the_limit_is_refused_with_both_figures() {
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
