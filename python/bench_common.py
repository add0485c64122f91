"""What the step benchmarks (bench_torch.py, bench_jax.py) share: their command line and the
timing summary they print, in the fields of `windtunnel bench --json`."""

import argparse
import statistics

N_PARAMS = 807_720


def step_parser(doc):
    """The arguments every step benchmark takes; callers add their own."""
    p = argparse.ArgumentParser(description=doc)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--dtype", choices=["f32", "f64"], default="f32")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    return p


def step_summary(times, batch_size, seq_len):
    """Median, mean and the reference 6·params·tokens FLOP rate of the timed steps (seconds)."""
    med = statistics.median(times)
    flops = 6.0 * N_PARAMS * batch_size * seq_len
    return {"median_ms": med * 1e3, "mean_ms": statistics.mean(times) * 1e3, "gflop_per_step": flops / 1e9,
            "gflops": flops / med / 1e9, "steps_per_s": 1.0 / med}
