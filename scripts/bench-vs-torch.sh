#!/usr/bin/env bash
# windtunnel vs PyTorch + TransformerLens, the same canonical training step side by side on this
# machine (2 threads, medians): f32/f64 at batch 128 and 512. Not part of CI (needs Python).
#   scripts/bench-vs-torch.sh [python]        # default python: python/.venv/bin/python or python3
# Run it on an otherwise idle machine: both sides are timed in wall-clock.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-$( [ -x python/.venv/bin/python ] && echo python/.venv/bin/python || echo python3 )}
STEPS=${STEPS:-30}
cargo build --release --quiet
WT=target/release/windtunnel
printf "%-5s %6s %14s %14s %8s\n" dtype batch "windtunnel ms" "pytorch ms" ratio
for dtype in f32 f64; do
  for b in 128 512; do
    wt=$("$WT" bench --dtype "$dtype" --batch-size "$b" --steps "$STEPS" --json | sed -E 's/.*"median_ms":([0-9.]+).*/\1/')
    pt=$(RAYON_NUM_THREADS=2 "$PY" python/bench_torch.py --dtype "$dtype" --batch-size "$b" --steps "$STEPS" --threads 2 --json \
         | sed -E 's/.*"median_ms": ([0-9.]+).*/\1/')
    printf "%-5s %6s %14.1f %14.1f %7.2fx\n" "$dtype" "$b" "$wt" "$pt" "$(echo "$pt / $wt" | bc -l)"
  done
done
