//! What a replication run is, typed: the scale, the family of runs it belongs to, K, η, the
//! batch size and the seed. A run's directory name is written from its key and only from it, and
//! analyses find runs by key (never by parsing names or comparing learning rates as floats).
//! `tests` checks every suite's keys against the configs they resolve to.

use crate::task::TaskKind;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Ci,
    Paper,
}

impl Scale {
    pub fn name(self) -> &'static str {
        match self {
            Scale::Ci => "ci",
            Scale::Paper => "paper",
        }
    }
}

/// A learning rate as the decimal the configs write, `mantissa`e`exponent` (3e-4): equal keys
/// are equal decimals, and [`Eta::value`] is what the config's TOML parses to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eta {
    pub mantissa: u32,
    pub exponent: i32,
}

impl Eta {
    pub const fn new(mantissa: u32, exponent: i32) -> Self {
        Eta { mantissa, exponent }
    }

    /// The canonical runs' η = 1e-3.
    pub const CANONICAL: Eta = Eta::new(1, -3);

    /// The f64 nearest the decimal (the same parse the config's `lr = 3e-4` gets).
    pub fn value(self) -> f64 {
        self.to_string().parse().expect("a decimal in e-notation parses")
    }
}

impl fmt::Display for Eta {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}e{}", self.mantissa, self.exponent)
    }
}

/// The experiment a run belongs to: what its name says beyond K, η, batch and seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Canonical,
    /// The plateau suite's selector length.
    ZLength(usize),
    /// Fixed dataset size D = n_b·K (examples, nominal: n_b is D / K rounded).
    FixedD(usize),
    Lr,
    Batch,
    /// The canonical config trained to the author's 50,000 steps.
    Displacement,
    Asymmetry(TaskKind),
    /// Selector sets shared by this many groups.
    ZSharing(usize),
}

/// One run: its directory is `<runs>/<key>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunKey {
    pub scale: Scale,
    pub family: Family,
    pub k: usize,
    pub eta: Eta,
    pub batch: usize,
    /// Init/order seed offset: 0 is the author's (42), s ≥ 1 trains with 42 + s.
    pub seed: u32,
}

impl RunKey {
    /// A seed-0 run at the paper's η = 1e-3 and batch 128 (ci: batch 64).
    pub fn new(scale: Scale, family: Family, k: usize) -> Self {
        let batch = match scale {
            Scale::Paper => 128,
            Scale::Ci => 64,
        };
        RunKey { scale, family, k, eta: Eta::CANONICAL, batch, seed: 0 }
    }

    pub fn canonical(scale: Scale, k: usize) -> Self {
        Self::new(scale, Family::Canonical, k)
    }

    pub fn with_eta(self, eta: Eta) -> Self {
        RunKey { eta, ..self }
    }

    pub fn with_batch(self, batch: usize) -> Self {
        RunKey { batch, ..self }
    }

    pub fn with_seed(self, seed: u32) -> Self {
        RunKey { seed, ..self }
    }

    /// The name without the seed suffix (the names of the author's runs where he has them).
    fn stem(&self) -> String {
        let k = self.k;
        let (paper, ci) = (self.scale == Scale::Paper, self.scale == Scale::Ci);
        match self.family {
            Family::Canonical => format!("canonical_k{k}"),
            Family::ZLength(z) => format!("zlen{z}_k{k}"),
            Family::FixedD(d) if paper => format!("fixed_d{}k_k{k}", d / 1000),
            Family::FixedD(d) => format!("fixed_d{d}_k{k}"),
            Family::Lr => format!("lr_k{k}_eta{}", self.eta),
            Family::Batch => {
                // η shows only where the batch sweep leaves 1e-3 (the matched-temperature run).
                let eta = if self.eta == Eta::CANONICAL { String::new() } else { format!("_eta{}", self.eta) };
                format!("batch_k{k}_b{}{eta}", self.batch)
            }
            Family::Displacement => format!("displacement_k{k}"),
            Family::Asymmetry(t) if ci => format!("{}_k{k}", t.name()),
            Family::Asymmetry(t) => format!("asym_{}_k{k}", t.name()),
            Family::ZSharing(g) => format!("zshare_g{g}_k{k}"),
        }
    }
}

/// The run's directory name: `canonical_k20`, `lr_k20_eta3e-4_s2`, `ci_zlen3_k10` …
impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let prefix = if self.scale == Scale::Ci { "ci_" } else { "" };
        let seed = if self.seed == 0 { String::new() } else { format!("_s{}", self.seed) };
        write!(f, "{prefix}{}{seed}", self.stem())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_prints_and_parses_as_the_configs_write_it() {
        assert_eq!(Eta::new(3, -4).to_string(), "3e-4");
        assert_eq!(Eta::new(3, -4).value().to_bits(), 3e-4f64.to_bits());
        assert_eq!(Eta::new(5, -3).value().to_bits(), 5e-3f64.to_bits());
        assert_ne!(Eta::new(5, -4), Eta::new(50, -5), "keys are decimals as written, not values");
    }

    #[test]
    fn names_follow_the_committed_run_directories() {
        let p = |f, k| RunKey::new(Scale::Paper, f, k);
        let c = |f, k| RunKey::new(Scale::Ci, f, k);
        assert_eq!(p(Family::Canonical, 20).with_seed(2).to_string(), "canonical_k20_s2");
        assert_eq!(p(Family::Lr, 20).with_eta(Eta::new(3, -4)).to_string(), "lr_k20_eta3e-4");
        assert_eq!(p(Family::Batch, 36).with_batch(512).to_string(), "batch_k36_b512");
        let matched = p(Family::Batch, 20).with_batch(128).with_eta(Eta::new(5, -4));
        assert_eq!(matched.with_seed(1).to_string(), "batch_k20_b128_eta5e-4_s1");
        assert_eq!(p(Family::FixedD(10_000), 5).to_string(), "fixed_d10k_k5");
        assert_eq!(c(Family::FixedD(2000), 5).to_string(), "ci_fixed_d2000_k5");
        assert_eq!(p(Family::Asymmetry(TaskKind::AToB), 10).to_string(), "asym_a_to_b_k10");
        assert_eq!(c(Family::Asymmetry(TaskKind::AzToB), 5).to_string(), "ci_az_to_b_k5");
        assert_eq!(c(Family::Batch, 10).with_batch(32).to_string(), "ci_batch_k10_b32");
        assert_eq!(c(Family::Lr, 10).with_eta(Eta::new(4, -3)).to_string(), "ci_lr_k10_eta4e-3");
        assert_eq!(p(Family::ZSharing(500), 20).to_string(), "zshare_g500_k20");
        assert_eq!(c(Family::ZLength(3), 10).to_string(), "ci_zlen3_k10");
        assert_eq!(p(Family::Displacement, 10).to_string(), "displacement_k10");
    }
}
