#!/usr/bin/env bash
# The determinism contract across SIMD levels. windtunnel picks its kernels at run time (AVX-512,
# AVX2+FMA, or scalar with libm's software FMA; WINDTUNNEL_SIMD caps the choice), and the compiler
# may vectorise the rest for the -C target-cpu it is given. Build for the x86-64 baseline and for
# this machine (`native`), run the golden fixture (forward, backward, three training steps with an
# eval) in f32 and f64 at every kernel level the CPU has and require every hash to equal
# golden/canonical_*.txt: at 1 and 2 threads for the vector levels, at 2 for the (slow) scalar one.
#   scripts/simd-invariance.sh [CPU...]   the target CPUs to build for (default: x86-64 native)
# .ci/run passes `native` only: its `cargo test --release` already checks the x86-64 build at
# every level (tests/simd_levels.rs) and thread count (tests/golden.rs) against the same files.
set -euo pipefail
cd "$(dirname "$0")/.."

levels="scalar"
grep -q avx2 /proc/cpuinfo && grep -q ' fma' /proc/cpuinfo && levels="$levels avx2"
grep -q avx512f /proc/cpuinfo && levels="$levels avx512"

status=0
cpus=("$@"); [ ${#cpus[@]} -gt 0 ] || cpus=(x86-64 native)
for cpu in "${cpus[@]}"; do
  # x86-64 is rustc's default target CPU: without RUSTFLAGS, that build is the one `cargo test
  # --release` made (in .ci/run), so it is reused rather than built again from scratch.
  # (Cargo fingerprints RUSTFLAGS: spelling out the default would rebuild it.)
  echo "== building with -C target-cpu=$cpu"
  if [ "$cpu" = x86-64 ] && [ -z "${RUSTFLAGS-}" ]; then
    target=target
    cargo build --release --quiet --bin windtunnel
  else
    target="target/simd-$cpu"
    RUSTFLAGS="-C target-cpu=$cpu" cargo build --release --quiet --bin windtunnel --target-dir "$target"
  fi
  for dtype in f32 f64; do
    for level in $levels; do
      threads_list="1 2"; [ "$level" = scalar ] && threads_list="2"
      for threads in $threads_list; do
        golden="golden/canonical_$dtype.txt"
        if out=$(WINDTUNNEL_SIMD=$level RAYON_NUM_THREADS=$threads "$target/release/windtunnel" hashes --dtype "$dtype" --check "$golden"); then
          echo "   target-cpu=$cpu kernels=$level $dtype threads=$threads: identical ($out)"
        else
          echo "   target-cpu=$cpu kernels=$level $dtype threads=$threads: DIFFERS from $golden:"
          echo "$out" | head -10
          status=1
        fi
      done
    done
  done
done
if [ $status -eq 0 ]; then echo "SIMD invariance: OK"; else echo "SIMD invariance: FAILED"; fi
exit $status
