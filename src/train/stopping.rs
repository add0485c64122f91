//! The stopping rules and waiting-time markers, as a pure function of the eval records: training
//! calls it after every eval, and a test can replay a committed run's records through it.

use super::checkpoint::TrainState;
use super::record::Record;
use super::tau::Thresholds;
use crate::config::RunConfig;

impl TrainState {
    /// Take one eval record: mark T1, T2, the T3 end, T4 and the lag when first crossed, and
    /// set `stopped` when a stopping rule is due.
    pub fn observe(&mut self, cfg: &RunConfig, r: &Record) {
        let (th, tc) = (Thresholds::new(cfg.data.k), &cfg.train);
        let ln_k = th.ln_k;
        let cand = r.candidate_loss.unwrap_or(f64::INFINITY);
        let first = r.first_target_loss;
        for (slot, value, frac) in [
            (&mut self.t1_step, cand, Thresholds::T1),
            (&mut self.t2_step, first, Thresholds::T2),
            (&mut self.t3_end_step, cand, Thresholds::T3_END),
            (&mut self.t4_step, first, Thresholds::T4),
        ] {
            if slot.is_none() && th.defined() && value < th.at(frac) {
                *slot = Some(r.step);
            }
        }
        let first = *self.first_target_at_first_eval.get_or_insert(first);
        if self.lag_step.is_none() && r.first_target_loss < 0.1 * first {
            self.lag_step = Some(r.step);
        }
        if tc.stop_not_before_t4 && self.t4_step.is_none() {
            return;
        }
        if let Some(frac) = tc.early_stop_frac {
            if cand < frac * ln_k {
                self.early_stop_count += 1;
                if self.early_stop_count >= tc.early_stop_patience {
                    self.stopped = Some(format!(
                        "early stop at step {}: candidate_loss < {frac}·ln K for {} consecutive evals",
                        r.step, tc.early_stop_patience
                    ));
                }
            } else {
                self.early_stop_count = 0;
            }
        }
        let rules = [
            tc.stop_after_t1.zip(self.t1_step).map(|(m, t1)| (t1 + m, format!("stopped {m} steps after T1 = {t1}"))),
            match (tc.stop_after_taus, self.t1_step, self.t2_step, self.t3_end_step) {
                (Some(m), Some(t1), Some(t2), Some(t3)) => Some((
                    t1.max(t2).max(t3) + m,
                    format!("stopped {m} steps after T1 = {t1}, T2 = {t2}, T3 end = {t3}"),
                )),
                _ => None,
            },
            tc.stop_at_t1_multiple
                .zip(self.t1_step)
                .map(|(m, t1)| ((m * t1 as f64).ceil() as u64, format!("stopped at {m}·T1 (T1 = {t1})"))),
            tc.stop_after_lag.zip(self.lag_step).map(|(m, lag)| {
                (
                    lag + m,
                    format!("stopped {m} steps after the lag (first-target loss < 0.1 × its first value) at {lag}"),
                )
            }),
        ];
        // The last rule due wins (as before); a rule due before T4 that waited for it says so.
        if let Some((due, why)) = rules.into_iter().flatten().rfind(|(due, _)| r.step >= *due) {
            self.stopped = Some(match self.t4_step {
                Some(t4) if tc.stop_not_before_t4 && due < t4 => {
                    format!("{why}, held until T4 = {t4} (train.stop_not_before_t4)")
                }
                _ => why,
            });
        }
    }
}

/// The step at which a run is expected to stop once T1 is known: the earliest stopping rule that
/// depends on T1 alone, else `max_steps` (the rules on T2, T3, T4 or the lag may stop it later or
/// sooner; this is for a progress bar, not for the run).
pub fn expected_stop(cfg: &RunConfig, t1: u64) -> u64 {
    let tc = &cfg.train;
    let by_t1 = [tc.stop_after_t1.map(|m| t1 + m), tc.stop_at_t1_multiple.map(|m| (m * t1 as f64).ceil() as u64)];
    by_t1.into_iter().flatten().min().unwrap_or(tc.max_steps).min(tc.max_steps)
}

/// Whether a stopping rule waits for T1 (before T1 the stop cannot be foreseen).
pub fn stops_after_t1(cfg: &RunConfig) -> bool {
    cfg.train.stop_after_t1.is_some() || cfg.train.stop_at_t1_multiple.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_stop_is_the_earliest_rule_on_t1_capped_by_max_steps() {
        let cfg = |ov: &[&str]| RunConfig::load(None, &ov.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        assert_eq!(expected_stop(&cfg(&["train.stop_after_t1=1000"]), 1850), 2850);
        let both = cfg(&["train.stop_after_t1=1000", "train.stop_at_t1_multiple=1.5"]);
        assert_eq!(expected_stop(&both, 1850), 2775);
        assert_eq!(expected_stop(&both, 100), 150);
        assert_eq!(expected_stop(&cfg(&["train.stop_after_t1=1000", "train.max_steps=2000"]), 1850), 2000);
        assert_eq!(expected_stop(&cfg(&[]), 1850), 50_000);
        assert!(!stops_after_t1(&cfg(&[])) && stops_after_t1(&both));
    }
}
