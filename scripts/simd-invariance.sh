#!/usr/bin/env bash
# The determinism contract across SIMD levels: build windtunnel for the x86-64 baseline (SSE2)
# and for this machine (`native`: AVX2/AVX-512 where present), run the golden fixture in f32 and
# f64 at 1 and 2 threads, and require every tensor hash to equal golden/canonical_*.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
for cpu in x86-64 native; do
  target="target/simd-$cpu"
  echo "== building with -C target-cpu=$cpu"
  RUSTFLAGS="-C target-cpu=$cpu" cargo build --release --quiet --bin windtunnel --target-dir "$target"
  for dtype in f32 f64; do
    for threads in 1 2; do
      out=$(RAYON_NUM_THREADS=$threads "$target/release/windtunnel" hashes --dtype "$dtype")
      if diff <(echo "$out") "golden/canonical_$dtype.txt" > /dev/null; then
        echo "   $cpu $dtype threads=$threads: identical to golden/canonical_$dtype.txt ($(echo "$out" | wc -l) tensors)"
      else
        echo "   $cpu $dtype threads=$threads: DIFFERS from golden/canonical_$dtype.txt:"
        diff <(echo "$out") "golden/canonical_$dtype.txt" | head -10
        status=1
      fi
    done
  done
done
if [ $status -eq 0 ]; then echo "SIMD invariance: OK"; else echo "SIMD invariance: FAILED"; fi
exit $status
