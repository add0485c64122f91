#!/usr/bin/env bash
# The paper-scale replication (issue 17) trained across sessions on machines that keep only the
# git repository: every run is trained by the one pinned revision in results/in-progress/REVISION.
#   scripts/paper-runs.sh start    build the pinned revision, restore the saved runs, train in the background
#   scripts/paper-runs.sh save     stop training; save every run under results/in-progress (to commit):
#                                  finished runs without checkpoints, unfinished ones with resume state
#   scripts/paper-runs.sh status   the state of every unit, from the saved runs
# Checkpoints are never saved: the probe-bearing runs (canonical_k10, canonical_k20) are trained
# and probed on one core, which then trains the seed runs and helps with the rest, while the other
# core trains everything else, the linear baselines, then helps with the seeds, across the sessions
# of one machine (the Hessian resumes point by point); on a new machine they train again, bit-identical.
set -euo pipefail
cd "$(dirname "$0")/.."
SAVED=results/in-progress
WORK=${PAPER_WORK:-runs/replicate}
PIN=$(cat "$SAVED/REVISION")
# The pinned revision's AVX-512 copies run ~18x slower than its AVX2 ones on Zen 4 (fixed later),
# but 1.29x faster on Zen 5 (docs/PERFORMANCE.md); every level gives the same bits, so train at
# AVX2 (a cap: a CPU without it stays lower) except on Zen 5 and later (AMD family >= 0x1a).
family=$(awk -F': ' '/^cpu family/ {print $2; exit}' /proc/cpuinfo)
if grep -q AuthenticAMD /proc/cpuinfo && [ "${family:-0}" -ge 26 ]; then
  export WINDTUNNEL_SIMD=${WINDTUNNEL_SIMD:-avx512}
else
  export WINDTUNNEL_SIMD=${WINDTUNNEL_SIMD:-avx2}
fi
SRC=target/pinned-src-$PIN
BIN=target/pinned-$PIN/release/windtunnel
PROBED=canonical_k10,canonical_k20
# Seeds 1 and 2 where a claim rests on a fit (the paper-scale default of `replicate`): the D sweep to K = 20 and fixed D = 10k.
SEEDED=canonical_k3,canonical_k5,canonical_k7,canonical_k10,canonical_k13,canonical_k15,canonical_k17,canonical_k20,fixed_d10k_k5,fixed_d10k_k10,fixed_d10k_k20,fixed_d10k_k36
seed_runs() { echo "$SEEDED" | sed 's/\([^,]*\)/\1_s1,\1_s2/g'; }
PROBES="snap ablation hessian displacement"
SMALL="config.toml manifest.json metrics.jsonl summary.json linear.json linear.seconds"

build() {
  [ -x "$BIN" ] && return
  [ -d "$SRC" ] || git worktree add --detach "$SRC" "$PIN"
  cargo build --release --manifest-path "$SRC/Cargo.toml" --target-dir "target/pinned-$PIN"
}

restore() {
  mkdir -p "$WORK/paper/runs"
  for run in "$SAVED"/paper/runs/*/; do
    [ -d "$run" ] || continue
    dst="$WORK/paper/runs/$(basename "$run")"
    [ -e "$dst" ] || cp -r "$run" "$dst"
  done
}

train() {
  local r="nice -n 19 $BIN replicate"
  local rest
  rest=$($BIN replicate all --scale paper --out "$WORK" --list | awk '$1 == "train" {print $2}' \
    | grep -vxF -e "${PROBED%,*}" -e "${PROBED#*,}" | paste -sd,)
  # Intel's FMA units take microcode assists on subnormal operands and results, which a run stuck
  # on the plateau at large η is full of (underflowing attention probabilities and gradient
  # terms): η = 5e-3 steps ran ~3-4x slower on an Intel Xeon than on AMD (docs/PERFORMANCE.md).
  # So on Intel it trains after everything else (PAPER_LAST overrides the list; same bits).
  local last=${PAPER_LAST-$(grep -q GenuineIntel /proc/cpuinfo && echo lr_k20_eta5e-3)}
  rest=$( { tr , '\n' <<< "$rest" | grep -vxF -f <(tr , '\n' <<< "$last") || true
            tr , '\n' <<< "$rest" | grep -xF -f <(tr , '\n' <<< "$last") || true; } | paste -sd,)
  # Both cores share the rest and the seeds as a work queue: a run one process trains is locked,
  # so the other skips it (an error it reports and ignores) and takes the next.
  rest_runs() { $r all --scale paper --out "$WORK" --only "$rest" --runs-only --jobs 1 --threads 1 || true; }
  seeds() { $r d-scaling fixed-d --scale paper --out "$WORK" --seeds 3 --runs-only --jobs 1 --threads 1 \
    --only "$(seed_runs)" || true; }
  # One core: the probe-bearing runs, each trained and probed in turn (their checkpoints are
  # never saved, so a run and its probes finish within a session or start again next time),
  # then the seeds, then whatever of the rest is left.
  ( for run in ${PROBED//,/ }; do
      $r all --scale paper --out "$WORK" --only "$run" --jobs 1 --threads 1
      restore_partial_probes "$run"
      $r snap ablation displacement --scale paper --out "$WORK" --probes-only --only "$run" --threads 1
      hessian_points "$WORK/paper/runs/$run"
    done
    seeds
    rest_runs ) &
  # The other core: every other run, the linear baselines (probes of no run), then the seeds left.
  rest_runs
  $r linear --scale paper --out "$WORK" --probes-only --threads 1 || true
  seeds
  wait
}

# The Hessian probe one checkpoint at a time (`probe hessian --steps S`: the same per-point
# computation as `replicate hessian`), each point kept in probes/hessian.points.json as it
# finishes, so a probe cut off at the end of a session resumes at its next point; when all points
# of the schedule are in, they become probes/hessian.json and hessian.seconds as replicate writes.
hessian_points() {
  local run=$1 acc=$1/probes/hessian.points.json
  [ -f "$run/probes/hessian.seconds" ] && return
  echo "[$(basename "$run")] hessian, one point at a time …"
  for s in $(hessian_schedule "$run"); do
    python3 -c 'import json,sys; sys.exit(0 if any(p["step"]==int(sys.argv[2]) for p in json.load(open(sys.argv[1]))["points"]) else 1)' \
      "$acc" "$s" 2>/dev/null && continue
    nice -n 19 $BIN probe hessian --run "$run" --steps "$s" --batch-size 512 --lanczos-steps 50 > /dev/null
    hessian_merge "$run/probes/hessian.json" "$acc"
    echo "[$(basename "$run")] hessian point at step $s done"
  done
  python3 - "$acc" "$run/probes" <<'PYEOF'
import json, sys
acc = json.load(open(sys.argv[1]))
acc["points"].sort(key=lambda p: p["step"])
json.dump(acc, open(sys.argv[2] + "/hessian.json", "w"), indent=2)
open(sys.argv[2] + "/hessian.seconds", "w").write("%.1f" % sum(p["seconds"] for p in acc["points"]))
PYEOF
  rm -f "$run/probes/hessian.svg"   # drawn from the last single point; the report draws the series
}

# Add the points of a hessian.json (one `probe hessian` call, or a partial one) to the accumulator.
hessian_merge() {
  python3 - "$1" "$2" <<'PYEOF'
import json, os, sys
new = json.load(open(sys.argv[1]))
acc = json.load(open(sys.argv[2])) if os.path.exists(sys.argv[2]) else dict(new, points=[])
have = {p["step"] for p in acc["points"]}
acc["points"] += [p for p in new["points"] if p["step"] not in have]
json.dump(acc, open(sys.argv[2] + ".tmp", "w"), indent=2)
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
PYEOF
  rm -f "$1"
}

# The pinned revision's Hessian schedule (src/probes/hessian.rs `schedule`, `RunView::snap`: the
# checkpoint nearest each target, ties to the lower step): 0.2–0.8·T1 in 5, 0.9, 1, 1.2, 2, 3·T1.
hessian_schedule() {
  python3 - "$1" <<'PYEOF'
import json, os, re, sys
run = sys.argv[1]
t = json.load(open(run + "/summary.json"))["taus"]["t1"]
steps = sorted(int(m.group(1)) for f in os.listdir(run + "/checkpoints") if (m := re.match(r"step_(\d+)\.safetensors$", f)))
def snap(x):
    best = steps[0]
    for s in steps:
        if abs(s - x) < abs(best - x):
            best = s
    return best
lo, hi = max(0.2 * t, 100.0), 0.8 * t
targets = [lo + (hi - lo) * i / 4.0 for i in range(5)] + [0.9 * t, t, 1.2 * t, 2.0 * t, min(3.0 * t, steps[-1])]
print(*sorted(set(snap(x) for x in targets)))
PYEOF
}

# A probe is done when its wall time is written, after its result: the Hessian probe saves its
# JSON after every checkpoint, so a killed one leaves a partial result without `.seconds`.
probed() {
  for p in $PROBES; do [ -f "$1/probes/$p.json" ] && [ -f "$1/probes/$p.seconds" ] || return 1; done
}

# Partial probe results (a result without its wall time) are removed, so they are computed again;
# a partial Hessian's finished points are kept (hessian_points goes on from them).
drop_partial_probes() {
  for f in "$WORK"/paper/runs/*/probes/hessian.json; do
    [ -f "$f" ] && [ ! -f "${f%.json}.seconds" ] && hessian_merge "$f" "${f%.json}.points.json" \
      && echo "kept the finished Hessian points of $f"
  done
  for f in "$WORK"/paper/runs/*/probes/*.json; do
    [[ "$f" == *hessian.points.json ]] && continue
    [ -f "$f" ] && [ ! -f "${f%.json}.seconds" ] && rm -f "$f" && echo "removed partial probe result $f"
  done
  return 0
}

# Finished probes and Hessian points of a probe-bearing run that is not done yet: saved under
# $SAVED/partial, put back once the run is trained again (bit-identical, so they still hold) and
# before its probes run, which then skip what is there.
save_partial_probes() {
  local run=$1 dst=$SAVED/partial/$(basename "$1")/probes
  rm -rf "$SAVED/partial/$(basename "$run")"
  [ -d "$run/probes" ] || return 0
  mkdir -p "$dst"
  for p in $PROBES; do
    if [ -f "$run/probes/$p.seconds" ]; then
      find "$run/probes" -maxdepth 1 \( -name "$p.*" -o -name "${p}_*" \) -exec cp {} "$dst/" \;
    fi
  done
  [ ! -f "$run/probes/hessian.points.json" ] || cp "$run/probes/hessian.points.json" "$dst/"
  if [ -f "$run/probes/hessian.json" ] && [ ! -f "$run/probes/hessian.seconds" ]; then
    cp "$run/probes/hessian.json" "$dst/partial.json"
    hessian_merge "$dst/partial.json" "$dst/hessian.points.json"
  fi
  echo "$(basename "$run"): saved its finished probes ($(ls "$dst" | paste -sd' '))"
}

restore_partial_probes() {
  local src=$SAVED/partial/$1/probes dst=$WORK/paper/runs/$1/probes
  [ -d "$src" ] || return 0
  mkdir -p "$dst"
  for f in "$src"/*; do [ -e "$dst/$(basename "$f")" ] || cp "$f" "$dst/"; done
  echo "[$1] restored its finished probes from $src"
}

save() {
  pkill -f "scripts/paper-runs.sh train" || true
  pkill -f "windtunnel.* replicate .*--scale paper" || true
  pkill -f "windtunnel probe hessian --run $WORK/paper/runs/" || true   # a Hessian point of hessian_points
  sleep 2
  for run in "$WORK"/paper/runs/*/; do
    name=$(basename "$run"); dst="$SAVED/paper/runs/$name"
    if [[ ",$PROBED," == *",$name,"* ]] && ! probed "$run"; then
      echo "$name: not saved (its probes are not all done, and checkpoints are never saved: it trains again)"
      save_partial_probes "$run"
      continue
    fi
    rm -rf "$SAVED/partial/$name"
    rm -rf "$dst"; mkdir -p "$dst"
    for f in $SMALL; do [ -f "$run/$f" ] && cp "$run/$f" "$dst/"; done
    [ -f "$run/summary.json" ] || { [ -f "$run/resume.safetensors" ] && cp "$run/resume.safetensors" "$dst/"; }
    if [ -d "$run/probes" ]; then
      mkdir -p "$dst/probes"
      find "$run/probes" -maxdepth 1 -type f -exec cp {} "$dst/probes/" \;
    fi
  done
  "$BIN" replicate all --scale paper --out "$SAVED" --list | tail -1
}

case "${1:-}" in
  start) build; restore; drop_partial_probes; nohup "$0" train >> "$WORK/paper-runs.log" 2>&1 &
         echo "training in the background; log: $WORK/paper-runs.log" ;;
  train) train ;;
  save) build; save ;;
  status) build; "$BIN" replicate all --scale paper --out "$SAVED" --list
          "$BIN" replicate d-scaling fixed-d --scale paper --out "$SAVED" --seeds 3 --list --only "$(seed_runs)" ;;
  *) sed -n '2,9p' "$0"; exit 2 ;;
esac
