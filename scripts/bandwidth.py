#!/usr/bin/env python3
"""One core's memory bandwidth at the cache levels a training step's passes live in, for the
roofline in docs/PERFORMANCE.md: numpy's `a[:] = b + c` (two reads, one write, f32) over arrays
sized for L1, L2, L3 and DRAM, best of several repetitions, bytes counted as 3 × 4 × n.

    taskset -c 0 python/.venv/bin/python scripts/bandwidth.py [KIB_PER_ARRAY ...]

The default sizes suit the Intel Xeon's caches; give others for another CPU (Zen 3, L1d 32 KiB,
L2 512 KiB: 8 128 4096 262144).
"""
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402

SIZES_KIB = [24, 512, 8 * 1024, 256 * 1024]  # per array: three arrays fit L1 48K / L2 1M / L3 32M / not


def best_gbps(kib, budget_s=1.0):
    n = kib * 1024 // 4
    a, b, c = (np.ones(n, dtype=np.float32) for _ in range(3))
    reps = max(1, int(2e7 // n))
    best, t_end = float("inf"), time.perf_counter() + budget_s
    while time.perf_counter() < t_end:
        t0 = time.perf_counter()
        for _ in range(reps):
            np.add(b, c, out=a)
        best = min(best, (time.perf_counter() - t0) / reps)
    return 3 * 4 * n / best / 1e9


if __name__ == "__main__":
    import sys

    for kib in [int(a) for a in sys.argv[1:]] or SIZES_KIB:
        print(f"{3 * kib:>8} KiB in three arrays: {best_gbps(kib):7.1f} GB/s")
