//! The author's data generator (`generate_mappings`, spec §2), bit for bit.
//!
//! All randomness comes from one `random.Random(seed)` (see [`crate::rng::PyRandom`]), consumed
//! in exactly the author's order: the z selector sets first, then per group the B string, then
//! its K targets.

use super::tokenizer::{ALPHABET, TaskKind};
use crate::error::{Error, Result};
use crate::rng::PyRandom;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// How z selectors are shared between B groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZSharing {
    /// One global set of K selectors.
    Shared,
    /// Every group has its own K selectors (all globally unique).
    Private,
    /// Group `g` uses the set of supergroup `g % n_supergroups`.
    Supergroup,
}

impl ZSharing {
    pub fn name(self) -> &'static str {
        match self {
            ZSharing::Shared => "shared",
            ZSharing::Private => "private",
            ZSharing::Supergroup => "supergroup",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        [ZSharing::Shared, ZSharing::Private, ZSharing::Supergroup].into_iter().find(|z| z.name() == s)
    }
}

/// Parameters of `generate_mappings` (TOML table `[data]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DataConfig {
    pub task: TaskKind,
    /// K: targets per base string.
    pub k: usize,
    /// Number of base strings (`n_unique_b`); D = n_b · K.
    pub n_b: usize,
    /// `experiment.seed`: the data seed.
    pub seed: i64,
    pub b_length: usize,
    pub a_length: usize,
    pub z_length: usize,
    /// Lengthen z while `36^len < 2·K·n_sets`, as the author's generator does; when false such a
    /// configuration is an error instead.
    pub auto_z_length: bool,
    /// `enforce_unique_a_first_char_per_b` (only honoured for `bz_to_a`/`b_to_a`, as upstream).
    pub enforce_unique_first_char: bool,
    /// `disambiguation_prefix_length` (1 or 2) when unique prefixes are enforced.
    pub prefix_length: usize,
    pub z_sharing: ZSharing,
    /// Number of supergroups G for `z_sharing = "supergroup"`.
    pub n_supergroups: usize,
    /// Probability of replacing a training target by a wrong candidate of the same group.
    pub label_noise_prob: f64,
    /// Fraction of base groups held out as the probe split (`split_by_base = true`).
    pub probe_fraction: f64,
}

impl Default for DataConfig {
    /// The canonical configuration (spec §1) at K = 10.
    fn default() -> Self {
        DataConfig {
            task: TaskKind::BzToA,
            k: 10,
            n_b: 1000,
            seed: 42,
            b_length: 6,
            a_length: 4,
            z_length: 2,
            auto_z_length: false,
            enforce_unique_first_char: true,
            prefix_length: 1,
            z_sharing: ZSharing::Shared,
            n_supergroups: 1,
            label_noise_prob: 0.0,
            probe_fraction: 0.0,
        }
    }
}

/// Largest number of base groups we accept (memory and time, not the alphabet).
pub const MAX_N_B: usize = 1_000_000;

impl DataConfig {
    fn unique_prefixes(&self) -> bool {
        self.enforce_unique_first_char && self.task.b_first()
    }

    fn n_z_sets(&self) -> usize {
        match self.z_sharing {
            ZSharing::Shared => 1,
            ZSharing::Private => self.n_b,
            ZSharing::Supergroup => self.n_supergroups,
        }
    }

    /// The z length actually used: the author lengthens z while `36^len < 2·K·n_sets`.
    pub fn effective_z_length(&self) -> usize {
        let need = 2 * self.k as u128 * self.n_z_sets() as u128;
        let mut len = self.z_length;
        // saturating: 36^len overflows u128 from len = 25 on, and a wrapped power never ends the loop.
        while 36u128.saturating_pow(len as u32) < need {
            len += 1;
        }
        len
    }

    /// Sequence length of every example.
    pub fn seq_len(&self) -> usize {
        let z = if self.task.has_z() { self.effective_z_length() + 1 } else { 0 };
        1 + self.b_length + 1 + z + self.a_length + 1
    }

    /// Check every parameter; errors name the field and the allowed range.
    pub fn validate(&self) -> Result<()> {
        self.validate_lengths()?;
        self.validate_k()?;
        self.validate_n_b()?;
        self.validate_selectors()?;
        if !(0.0..=1.0).contains(&self.label_noise_prob) {
            return Err(Error::config("data.label_noise_prob", format!("{} (allowed 0..=1)", self.label_noise_prob)));
        }
        if !(0.0..1.0).contains(&self.probe_fraction) {
            return Err(Error::config("data.probe_fraction", format!("{} (allowed 0 ≤ p < 1)", self.probe_fraction)));
        }
        Ok(())
    }

    fn validate_lengths(&self) -> Result<()> {
        if !(1..=8).contains(&self.b_length) {
            return Err(Error::config("data.b_length", format!("{} (allowed 1..=8)", self.b_length)));
        }
        if !(1..=8).contains(&self.a_length) {
            return Err(Error::config("data.a_length", format!("{} (allowed 1..=8)", self.a_length)));
        }
        // Checked for every task (a task without z ignores it, but a huge one used to hang).
        if !(1..=4).contains(&self.z_length) {
            return Err(Error::config("data.z_length", format!("{} (allowed 1..=4)", self.z_length)));
        }
        Ok(())
    }

    fn validate_k(&self) -> Result<()> {
        let max_k = if self.unique_prefixes() { 36usize.pow(self.prefix_length as u32) } else { 1000 };
        if self.k == 0 || self.k > max_k {
            let why = if self.unique_prefixes() {
                format!(
                    "{} (allowed 1..={max_k}: with unique first characters each group needs K distinct \
                     {}-character prefixes)",
                    self.k, self.prefix_length
                )
            } else {
                format!("{} (allowed 1..={max_k})", self.k)
            };
            return Err(Error::config("data.k", why));
        }
        if self.unique_prefixes() && !(1..=2).contains(&self.prefix_length) {
            return Err(Error::config("data.prefix_length", format!("{} (allowed 1..=2)", self.prefix_length)));
        }
        Ok(())
    }

    /// n_b B strings of their length, and K·n_b globally unique targets.
    fn validate_n_b(&self) -> Result<()> {
        let cap = |len: usize| 36u128.saturating_pow(len as u32);
        let b_cap = cap(self.b_length).min(MAX_N_B as u128) as usize;
        if self.n_b == 0 || self.n_b > b_cap {
            return Err(Error::config(
                "data.n_b",
                format!(
                    "{} (allowed 1..={b_cap}: at most 36^{} distinct B strings, capped at {MAX_N_B})",
                    self.n_b, self.b_length
                ),
            ));
        }
        // Every target string is globally unique: K·n_b of them must fit in the alphabet, and
        // with unique prefixes each prefix is reused once per group.
        let a_total = self.k as u128 * self.n_b as u128;
        if a_total * 2 > cap(self.a_length) {
            return Err(Error::config(
                "data.n_b",
                format!(
                    "{} with K={} needs {a_total} distinct A strings of length {}, more than half of the \
                     36^{} possible (allowed n_b ≤ {})",
                    self.n_b,
                    self.k,
                    self.a_length,
                    self.a_length,
                    cap(self.a_length) / 2 / self.k as u128
                ),
            ));
        }
        if self.unique_prefixes() && self.a_length > self.prefix_length {
            let per_prefix = cap(self.a_length - self.prefix_length);
            if self.n_b as u128 * 2 > per_prefix {
                return Err(Error::config(
                    "data.n_b",
                    format!(
                        "{} (allowed 1..={} with unique first characters: each prefix has only 36^{} suffixes)",
                        self.n_b,
                        per_prefix / 2,
                        self.a_length - self.prefix_length
                    ),
                ));
            }
        }
        Ok(())
    }

    fn validate_selectors(&self) -> Result<()> {
        if self.z_sharing == ZSharing::Supergroup && !(1..=self.n_b).contains(&self.n_supergroups) {
            return Err(Error::config(
                "data.n_supergroups",
                format!("{} (allowed 1..={} = n_b)", self.n_supergroups, self.n_b),
            ));
        }
        if self.task.has_z() && !self.auto_z_length && self.effective_z_length() != self.z_length {
            return Err(Error::config(
                "data.z_length",
                format!(
                    "{} is too short: K={} × {} selector set(s) need 36^len ≥ {} (the author's 2× \
                     headroom) but 36^{} = {}; allowed z_length ≥ {}, or set auto_z_length \
                     (--auto-z-length) to lengthen it as the author's generator does",
                    self.z_length,
                    self.k,
                    self.n_z_sets(),
                    2 * self.k * self.n_z_sets(),
                    self.z_length,
                    36u128.saturating_pow(self.z_length as u32),
                    self.effective_z_length()
                ),
            ));
        }
        Ok(())
    }
}

/// One `(B, z, A)` example.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    pub b: String,
    pub z: String,
    pub a: String,
}

/// One base group: its B string and the K `(z, A)` pairs in generation order.
#[derive(Clone, Debug)]
pub struct Group {
    pub b: String,
    pub pairs: Vec<(String, String)>,
}

/// Output of [`generate`]: the groups in generation (dict insertion) order and the flat,
/// group-major example list.
#[derive(Clone, Debug)]
pub struct Mapping {
    pub config: DataConfig,
    pub groups: Vec<Group>,
    pub examples: Vec<Example>,
}

const MAX_ATTEMPTS: usize = 1000;

fn random_string(rng: &mut PyRandom, len: usize) -> String {
    let chars = rng.choices(ALPHABET.as_bytes(), len);
    String::from_utf8(chars).expect("ASCII alphabet")
}

/// Draw a string not yet in `used` (the author's `while s in used: redraw`).
fn fresh(rng: &mut PyRandom, used: &BTreeSet<String>, draw: impl Fn(&mut PyRandom) -> String) -> String {
    let mut s = draw(rng);
    while used.contains(&s) {
        s = draw(rng);
    }
    s
}

/// `_generate_z_selectors`: `n_sets` lists of K globally unique selectors.
fn z_sets(cfg: &DataConfig, rng: &mut PyRandom) -> Vec<Vec<String>> {
    let len = cfg.effective_z_length();
    let mut used = BTreeSet::new();
    let mut sets = Vec::with_capacity(cfg.n_z_sets());
    for _ in 0..cfg.n_z_sets() {
        let mut zs = Vec::with_capacity(cfg.k);
        for _ in 0..cfg.k {
            let z = fresh(rng, &used, |r| random_string(r, len));
            used.insert(z.clone());
            zs.push(z);
        }
        sets.push(zs);
    }
    sets
}

/// Targets of one group with unique prefixes: sample K distinct prefixes, then a suffix for each,
/// redrawing the suffix (at most 1000 times, as upstream) until the target is globally unique.
fn unique_prefix_targets(cfg: &DataConfig, rng: &mut PyRandom, used_a: &mut BTreeSet<String>) -> Result<Vec<String>> {
    let plen = cfg.prefix_length;
    let prefixes: Vec<String> = if plen == 1 {
        let chars: Vec<u8> = ALPHABET.bytes().collect();
        rng.sample(&chars, cfg.k).into_iter().map(|c| (c as char).to_string()).collect()
    } else {
        let all: Vec<String> =
            ALPHABET.chars().flat_map(|c1| ALPHABET.chars().map(move |c2| format!("{c1}{c2}"))).collect();
        rng.sample(&all, cfg.k)
    };
    let mut out = Vec::with_capacity(cfg.k);
    for prefix in prefixes {
        let draw = |r: &mut PyRandom| {
            if cfg.a_length <= plen {
                prefix[..cfg.a_length].to_string()
            } else {
                format!("{prefix}{}", random_string(r, cfg.a_length - plen))
            }
        };
        let mut a = draw(rng);
        let mut attempts = 0;
        while used_a.contains(&a) {
            attempts += 1;
            if attempts > MAX_ATTEMPTS {
                return Err(Error::config(
                    "data.n_b",
                    "failed to generate unique A strings after 1000 attempts (as the author's generator); \
                     use fewer groups, a smaller K or a longer a_length"
                        .to_string(),
                ));
            }
            a = draw(rng);
        }
        used_a.insert(a.clone());
        out.push(a);
    }
    Ok(out)
}

/// Memory of a dataset of `d` examples (strings, token and label rows, index sets): 780 bytes per
/// example measured at D = 800,000, with a margin.
pub fn dataset_bytes(d: usize) -> u128 {
    1024 * d as u128
}

/// `generate_mappings` for any task, z-sharing mode and prefix setting.
pub fn generate(cfg: &DataConfig) -> Result<Mapping> {
    cfg.validate()?;
    let d = cfg.n_b * cfg.k;
    crate::memory::check(&format!("a dataset of D = {d} examples"), dataset_bytes(d))?;
    let mut rng = PyRandom::new(cfg.seed);
    let sets = z_sets(cfg, &mut rng);
    let mut used_b = BTreeSet::new();
    let mut used_a = BTreeSet::new();
    let mut groups = Vec::with_capacity(cfg.n_b);
    let mut examples = Vec::with_capacity(cfg.n_b * cfg.k);
    for g in 0..cfg.n_b {
        let b = fresh(&mut rng, &used_b, |r| random_string(r, cfg.b_length));
        used_b.insert(b.clone());
        let zs = match cfg.z_sharing {
            ZSharing::Shared => &sets[0],
            ZSharing::Private => &sets[g],
            ZSharing::Supergroup => &sets[g % cfg.n_supergroups],
        };
        let targets = if cfg.unique_prefixes() {
            unique_prefix_targets(cfg, &mut rng, &mut used_a)?
        } else {
            let mut v = Vec::with_capacity(cfg.k);
            for _ in 0..cfg.k {
                let a = fresh(&mut rng, &used_a, |r| random_string(r, cfg.a_length));
                used_a.insert(a.clone());
                v.push(a);
            }
            v
        };
        let pairs: Vec<(String, String)> = zs.iter().cloned().zip(targets).collect();
        for (z, a) in &pairs {
            examples.push(Example { b: b.clone(), z: z.clone(), a: a.clone() });
        }
        groups.push(Group { b, pairs });
    }
    Ok(Mapping { config: cfg.clone(), groups, examples })
}
