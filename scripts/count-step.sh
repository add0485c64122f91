#!/usr/bin/env bash
# Noise-free cost of one training step: instructions counted by valgrind's callgrind, which are
# the same for the same binary and input whatever else the machine runs (the VMs here do not
# expose `perf stat` cycles). Two runs of `windtunnel bench` at one thread, 1+1 and 1+3 steps
# (eval off); their difference over 2 steps is the step alone, without start-up and init.
# Valgrind does not run AVX-512 code, so the count is of the AVX2+FMA level's kernels.
#   scripts/count-step.sh [BINARY] [BENCH ARGS…]   → one JSON line: the bench's fields plus
#   instructions_per_step, the share outside the matrix products, and the costliest files outside
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/windtunnel}
shift || true
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for steps in 1 3; do
  RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$steps" \
    "$BIN" bench --steps "$steps" --warmup 1 --eval-every 1000000 --json "$@" > "$TMP/bench.$steps" 2> "$TMP/log.$steps"
done
python3 scripts/callgrind_step.py "$TMP/cg.1" "$TMP/cg.3" "$TMP/bench.3"
