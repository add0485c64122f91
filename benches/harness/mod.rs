//! The benches' timing loop: warm up, size a sample to ≥ 50 ms of iterations, take 20 samples,
//! print the median (and the range) per iteration. Wall-clock figures are for docs/PERFORMANCE.md;
//! noise-free counts come from `perf stat` or callgrind around `windtunnel bench`.

use std::time::{Duration, Instant};

const SAMPLES: usize = 20;
const SAMPLE_TIME: Duration = Duration::from_millis(50);

/// Runs the benches whose name contains the filter (the first argument not starting with `-`).
pub struct Harness {
    filter: Option<String>,
}

/// Handed to a bench body: `iter` times the closure.
pub struct Bencher {
    per_iter: Vec<Duration>,
}

impl Harness {
    pub fn from_args() -> Self {
        Harness { filter: std::env::args().skip(1).find(|a| !a.starts_with('-')) }
    }

    pub fn bench_function(&mut self, name: &str, mut body: impl FnMut(&mut Bencher)) {
        if self.filter.as_deref().is_some_and(|f| !name.contains(f)) {
            return;
        }
        let mut b = Bencher { per_iter: Vec::new() };
        body(&mut b);
        let mut t = b.per_iter;
        t.sort();
        let (lo, mid, hi) = (t[0], t[t.len() / 2], t[t.len() - 1]);
        println!("{name:<48} {:>12} per iteration  [{} … {}]", show(mid), show(lo), show(hi));
    }
}

impl Bencher {
    pub fn iter<R>(&mut self, mut f: impl FnMut() -> R) {
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < SAMPLE_TIME || n < 2 {
            std::hint::black_box(f());
            n += 1;
        }
        let per_sample = n.max(1);
        for _ in 0..SAMPLES {
            let t = Instant::now();
            for _ in 0..per_sample {
                std::hint::black_box(f());
            }
            self.per_iter.push(t.elapsed() / per_sample as u32);
        }
    }
}

fn show(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1e-3 { format!("{:.3} ms", s * 1e3) } else { format!("{:.2} µs", s * 1e6) }
}
