#!/usr/bin/env bash
# windtunnel vs PyTorch + TransformerLens on this machine, side by side in one run (2 threads,
# medians): the canonical training step (f32/f64 at batch 128 and 512) and the matrix products
# at the model's shapes (windtunnel's kernel vs torch.matmul). Not part of CI (needs Python).
#   scripts/bench-vs-torch.sh [python]        # default python: python/.venv/bin/python or python3
# Beside PyTorch eager: torch.compile (python/bench_torch.py --compile) and JAX jit
# (python/bench_jax.py). STEPS_ONLY=1 skips the matrix products.
# Run it on an otherwise idle machine: both sides are timed in wall-clock.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-$( [ -x python/.venv/bin/python ] && echo python/.venv/bin/python || echo python3 )}
STEPS=${STEPS:-30}
if [ -z "${WT:-}" ]; then   # WT=path/to/windtunnel times that binary instead of building one
  cargo build --release --quiet
  WT=target/release/windtunnel
fi
json() { "$PY" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
"$WT" bench --kernels --steps 1 --warmup 0 --json | json '"cpu: %s | kernels: %s | arithmetic v%s" % (d["cpu"], d["kernels"], d["arithmetic"])'
echo
echo "== training step (forward, backward, AdamW; windtunnel amortises an eval every 50), median ms"
echo "   1 thread: every implementation pinned to core 0 (taskset), so XLA's pool has one core too"
printf "%-5s %6s %3s %11s %9s %9s %9s %8s %8s %8s %8s\n" dtype batch thr windtunnel pytorch compile jax "vs pt" "vs comp" "vs jax" "GFLOP/s"
ms() { json 'd["median_ms"]'; }
for dtype in f32 f64; do
  for b in 128 512; do
    for thr in 1 2; do
      pin=(); [ "$thr" = 1 ] && pin=(taskset -c 0)
      w=$(RAYON_NUM_THREADS=$thr "${pin[@]}" "$WT" bench --dtype "$dtype" --batch-size "$b" --steps "$STEPS" --json)
      wt=$(echo "$w" | ms)
      useful=$(echo "$w" | json '"%.1f" % d["useful_gflops"]')
      pt=$("${pin[@]}" "$PY" python/bench_torch.py --dtype "$dtype" --batch-size "$b" --steps "$STEPS" --threads "$thr" --json | ms)
      tc=$("${pin[@]}" "$PY" python/bench_torch.py --compile --warmup 8 --dtype "$dtype" --batch-size "$b" --steps "$STEPS" \
           --threads "$thr" --json 2>/dev/null | ms)
      jx=$("${pin[@]}" "$PY" python/bench_jax.py --dtype "$dtype" --batch-size "$b" --steps "$STEPS" --json 2>/dev/null | ms)
      printf "%-5s %6s %3s %11.1f %9.1f %9.1f %9.1f %7.2fx %7.2fx %7.2fx %8s\n" "$dtype" "$b" "$thr" "$wt" "$pt" "$tc" "$jx" \
        "$(echo "$pt / $wt" | bc -l)" "$(echo "$tc / $wt" | bc -l)" "$(echo "$jx / $wt" | bc -l)" "$useful"
    done
  done
done
[ -n "${STEPS_ONLY:-}" ] && exit 0
echo
echo "== matrix products at the model's shapes, batch 128 (GFLOP/s; ratio = windtunnel / torch.matmul)"
printf "%-5s %-22s %18s %12s %12s %7s\n" dtype product "m×k×n" windtunnel torch ratio
for dtype in f32 f64; do
  w=$("$WT" bench --kernels --dtype "$dtype" --steps "$STEPS" --json)
  t=$("$PY" python/bench_torch.py --kernels --dtype "$dtype" --steps "$STEPS" --threads 2 --json)
  for i in 0 1 2 3 4 5; do
    name=$(echo "$w" | json "d['kernels_at_model_shapes'][$i]['name']")
    shape=$(echo "$w" | json "'%d×%d×%d' % tuple(d['kernels_at_model_shapes'][$i][x] for x in 'mkn')")
    wg=$(echo "$w" | json "d['kernels_at_model_shapes'][$i]['gflops']")
    tg=$(echo "$t" | json "d['kernels_at_model_shapes'][$i]['gflops']")
    printf "%-5s %-22s %18s %12.1f %12.1f %6.2fx\n" "$dtype" "$name" "$shape" "$wg" "$tg" "$(echo "$wg / $tg" | bc -l)"
  done
done
