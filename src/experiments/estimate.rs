//! How long a plan's training units will take, from what the runs measured: a seeded run is
//! expected to run as long as its seed-0 run did, any other run up to its `max_steps`; at its own
//! steps/s over its last steps once it has trained (this machine, this build), else at its
//! seed-0 run's, else at the median steps/s of the finished runs of its batch size.

use super::run_key::RunKey;
use crate::train::Record;
use crate::train::layout::read_summary;
use std::collections::BTreeMap;
use std::path::Path;

/// Hours for the steps from `done` to `expected` at `steps_per_s` (none left: 0).
pub fn hours_left(expected: u64, done: u64, steps_per_s: f64) -> Option<f64> {
    (steps_per_s > 0.0 && steps_per_s.is_finite()).then(|| expected.saturating_sub(done) as f64 / steps_per_s / 3600.0)
}

/// Steps over which [`recent_rate`] measures a run's speed now.
const RECENT_STEPS: u64 = 2000;

/// A run's speed now: its steps over its training seconds (`wall_time_s` counts training and
/// eval, not the gaps between sessions) across the records of its last [`RECENT_STEPS`] steps —
/// its average since step 0 would keep a fast start (a run whose plateau is slower, e.g. with
/// subnormals on Intel, was estimated at 4× its speed at step 2500). Its average when it has one record.
pub fn recent_rate(records: &[Record]) -> Option<f64> {
    let last = records.last()?;
    let first = records.iter().find(|r| r.step + RECENT_STEPS >= last.step && r.step < last.step);
    let rate = match first {
        Some(f) if last.wall_time_s > f.wall_time_s => (last.step - f.step) as f64 / (last.wall_time_s - f.wall_time_s),
        _ => last.steps_per_s,
    };
    (rate > 0.0 && rate.is_finite()).then_some(rate)
}

/// Median of the measured steps/s of finished runs, per batch size.
#[derive(Default)]
pub struct Rates(BTreeMap<usize, Vec<f64>>);

impl Rates {
    pub fn add(&mut self, batch: usize, steps_per_s: f64) {
        if steps_per_s > 0.0 && steps_per_s.is_finite() {
            self.0.entry(batch).or_default().push(steps_per_s);
        }
    }

    pub fn median(&self, batch: usize) -> Option<f64> {
        let mut v = self.0.get(&batch)?.clone();
        v.sort_by(f64::total_cmp);
        Some(if v.len() % 2 == 1 { v[v.len() / 2] } else { (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0 })
    }
}

/// Hours left for the unfinished run `key` at `step`, and what the estimate rests on. The
/// length: as long as its seed-0 run (a seeded run), else `max_steps`. The rate: the run's own
/// so far (`own_rate`, measured where and by what it trains now), else its seed-0 run's, else
/// the median of the finished runs of its batch size.
pub fn unit(
    runs: &Path,
    key: RunKey,
    (step, own_rate): (u64, Option<f64>),
    max_steps: u64,
    batch: usize,
    rates: &Rates,
) -> Option<(f64, String)> {
    let own = own_rate.filter(|r| *r > 0.0 && r.is_finite());
    let at_own = |h: f64, why: String| match own {
        Some(r) => (h, format!("{why}, at its own {r:.2} steps/s")),
        None => (h, why),
    };
    let base = key.with_seed(0).to_string();
    if key.seed != 0
        && let Ok(s) = read_summary(&runs.join(&base))
    {
        let why = format!("as {base}: {} steps", s.steps);
        return hours_left(s.steps, step, own.unwrap_or(s.steps_per_s)).map(|h| at_own(h, why));
    }
    let rate = own.or_else(|| rates.median(batch))?;
    hours_left(max_steps, step, rate).map(|h| at_own(h, format!("up to max_steps {max_steps}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::run_key::{Eta, Family, Scale};

    #[test]
    fn hours_are_the_steps_left_over_the_rate() {
        assert_eq!(hours_left(7200, 0, 2.0), Some(1.0));
        assert_eq!(hours_left(7200, 3600, 1.0), Some(1.0));
        assert_eq!(hours_left(100, 500, 1.0), Some(0.0), "past the expected length");
        assert_eq!(hours_left(100, 0, 0.0), None);
        assert_eq!(hours_left(100, 0, f64::NAN), None);
    }

    #[test]
    fn a_runs_own_rate_is_over_its_last_steps() {
        let rec = |step: u64, wall: f64| Record {
            step,
            wall_time_s: wall,
            steps_per_s: step as f64 / wall,
            ..Default::default()
        };
        // 10 steps/s up to step 3000, then 2 steps/s: its average (3.33) would overstate its speed now.
        let fast: Vec<Record> = (1..=6).map(|i| rec(500 * i, 50.0 * i as f64)).collect();
        let slow: Vec<Record> = (1..=6).map(|i| rec(3000 + 500 * i, 300.0 + 250.0 * i as f64)).collect();
        let all: Vec<Record> = fast.iter().chain(&slow).cloned().collect();
        assert_eq!(all.last().unwrap().steps_per_s, 6000.0 / 1800.0);
        assert_eq!(recent_rate(&all), Some(2.0), "the last 2000 steps");
        assert_eq!(recent_rate(&all[..7]), Some(2000.0 / 400.0), "from step 1500: fast and slow steps");
        assert_eq!(recent_rate(&all[..1]), Some(10.0), "one record: its average");
        assert_eq!(recent_rate(&[]), None);
        assert_eq!(recent_rate(&[rec(0, 0.0)]), None, "no time yet");
    }

    #[test]
    fn the_rate_is_the_median_per_batch_size() {
        let mut r = Rates::default();
        for x in [3.0, 1.0, 2.0] {
            r.add(128, x);
        }
        r.add(256, 1.0);
        r.add(256, 2.0);
        r.add(512, 0.0);
        assert_eq!((r.median(128), r.median(256), r.median(512), r.median(64)), (Some(2.0), Some(1.5), None, None));
    }

    #[test]
    fn a_seeded_run_is_estimated_from_its_seed_0_summary() {
        let runs = std::env::temp_dir().join(format!("wt-estimate-{}", std::process::id()));
        let lr = |e| RunKey::new(Scale::Paper, Family::Lr, 20).with_eta(e);
        let (a, b) = (lr(Eta::new(3, -4)), lr(Eta::new(5, -4)));
        let base = runs.join(a.to_string());
        std::fs::create_dir_all(&base).unwrap();
        let taus = serde_json::to_value(crate::train::tau::Taus::default()).unwrap();
        let summary = serde_json::json!({"steps": 7200, "stopped": null, "k": 20, "d": 20000, "ln_k": 3.0,
            "taus": taus, "plateau": null, "final_record": null, "train_seconds": 3600.0,
            "eval_seconds": 0.0, "eval_overhead": 0.0, "steps_per_s": 2.0});
        std::fs::write(base.join("summary.json"), summary.to_string()).unwrap();
        let rates = Rates::default();
        let (h, why) = unit(&runs, a.with_seed(1), (3600, None), 50_000, 128, &rates).expect("from seed 0");
        assert_eq!((h, why.as_str()), (0.5, "as lr_k20_eta3e-4: 7200 steps"));
        // A run that has trained says how fast it goes here: its own rate, seed 0's length.
        let (h, why) = unit(&runs, a.with_seed(1), (3600, Some(0.5)), 50_000, 128, &rates).unwrap();
        assert_eq!((h, why.as_str()), (2.0, "as lr_k20_eta3e-4: 7200 steps, at its own 0.50 steps/s"));
        assert_eq!(unit(&runs, a.with_seed(1), (3600, Some(0.0)), 50_000, 128, &rates).unwrap().0, 0.5, "no rate yet");
        assert_eq!(unit(&runs, b.with_seed(1), (0, None), 50_000, 128, &rates), None, "no sibling, no measured rate");
        assert_eq!(unit(&runs, a, (0, None), 50_000, 128, &rates), None, "seed 0 is not its own sibling");
        let (h, why) = unit(&runs, a, (10_000, Some(4.0)), 46_000, 128, &rates).unwrap();
        assert_eq!((h, why.as_str()), (2.5, "up to max_steps 46000, at its own 4.00 steps/s"));
        let mut rates = Rates::default();
        rates.add(128, 10.0);
        let (h, _) = unit(&runs, b.with_seed(1), (0, None), 36_000, 128, &rates).unwrap();
        assert_eq!(h, 1.0);
        std::fs::remove_dir_all(&runs).ok();
    }
}
