//! The author's `LambdaLR` schedules (spec §6.2). The multiplier for the update that follows
//! `s` completed steps is `lambda(s)`, so with warmup the first update has lr 0.

use crate::config::Schedule;
use crate::numerics::math;

/// `lambda(step)` in f64, exactly as the author's `get_lr_scheduler`: `step/warmup` during
/// warmup, then `0.5·(1 + cos_f32(f32(progress·3.14159)))` — the literal 3.14159, not π, and a
/// float32 cosine, because `torch.tensor(python_float)` is float32.
#[allow(clippy::approx_constant)] // the author's literal 3.14159, deliberately not π
pub fn lr_multiplier(schedule: Schedule, step: u64, warmup: u64, max_steps: u64) -> f64 {
    match schedule {
        Schedule::Constant => 1.0,
        Schedule::Cosine => {
            if step < warmup {
                step as f64 / warmup as f64
            } else {
                let progress = (step - warmup) as f64 / (max_steps - warmup) as f64;
                let c = math::cosf((progress * 3.14159) as f32) as f64;
                0.5 * (1.0 + c)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_then_cosine_with_the_literal_pi() {
        assert_eq!(lr_multiplier(Schedule::Cosine, 0, 500, 10_000), 0.0);
        assert_eq!(lr_multiplier(Schedule::Cosine, 250, 500, 10_000), 0.5);
        assert_eq!(lr_multiplier(Schedule::Cosine, 500, 500, 10_000), 1.0);
        // At the horizon f32(3.14159) = 3.1415901, whose cosine (−1 + 3e-12) rounds to −1.0 in f32.
        assert_eq!(lr_multiplier(Schedule::Cosine, 10_000, 500, 10_000), 0.0);
        let mid = lr_multiplier(Schedule::Cosine, 5_250, 500, 10_000);
        assert!((mid - 0.5).abs() < 1e-5, "{mid}");
        assert_eq!(lr_multiplier(Schedule::Constant, 123, 0, 1000), 1.0);
    }
}
