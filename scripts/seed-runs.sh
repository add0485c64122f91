#!/usr/bin/env bash
# Seeds 1 and 2 behind every claim that differs (verdicts issue, part 2), trained across
# sessions on machines that keep only the git repository, every run by the one pinned revision
# in results/in-progress/REVISION:
#   scripts/seed-runs.sh start    build the pinned revision, restore the saved runs, train in the background
#   scripts/seed-runs.sh save     stop training; save every run under results/in-progress (to commit):
#                                 finished runs without checkpoints, unfinished ones with their resume state
#                                 (not those short of MIN_SAVED = 500 steps: they train again)
#   scripts/seed-runs.sh status   the state of every run, from the saved runs
#   scripts/seed-runs.sh land     move the finished saved runs into results/paper, rebuild its report
#                                 and docs/REPLICATION.md's verdict block (scripts/paste-verdicts.sh)
#   scripts/seed-runs.sh displacement K   the displacement suite's 50,000-step run at K (10 or 20)
#                                 on both cores, then its probe (≈ 3 h on an idle 2-core machine)
# The canonical K = 10 and 20 runs of seeds 1-2 are trained again for their checkpoints and
# probed (snap, ablation, Hessian): probe_seed_run below.
# The displacement runs are queued too, one thread each, across sessions: their probe needs the
# checkpoint every 200 steps, which no session keeps for the next (250 of 3.2 MB), so `save`
# measures the displacements so far (the checked-out revision's probe) and keeps that report
# with the last two checkpoints, from which the next session's probe continues bit for bit.
# Two queues, one per core, each run one thread; a run one queue trains is locked, so the other
# skips it. η = 5e-3 trains beside the displacement seeds: it is the longest run left (≈ 5 h on
# one core of the Intel Xeon, whose FMA units take its plateau's subnormals 3-4x slower), so
# behind them it would leave the other core idle for its last hours.
# The pin moved twice (c9b247f → 488afaf, for the asymmetry runs' train.stop_after_lag; 488afaf
# → 38efa2a, whose step is 1.2x faster on the Intel Xeon, same bits: the perf commits between
# change no bit, checked on the batch K = 36 B64/B512 and asymmetry configs): a run begun by an
# old pin resumes under the new one with --allow-other-revision, and its manifest records that
# segment's revision (the training code's bits and arithmetic v2 are the same in all three).
set -euo pipefail
cd "$(dirname "$0")/.."
SAVED=results/in-progress
WORK=${SEED_WORK:-runs/seeds}
PIN=$(cat "$SAVED/REVISION")
SRC=target/pinned-src-$PIN
BIN=target/pinned-$PIN/release/windtunnel
PROBE=target/release/windtunnel   # the displacement probe (continues an earlier report)
seeded() { for r in "$@"; do echo "${r}_s1,${r}_s2"; done | paste -sd,; }
ASYM=$(for t in bz_to_a a_to_b az_to_b; do for k in 5 10 20; do echo "asym_${t}_k$k"; done; done)
ASYM_S0="asymmetry:$(echo $ASYM | tr ' ' ,)"
ASYM_SEEDS="asymmetry:$(seeded $ASYM)"
LR_SLOW="lr:$(seeded lr_k20_eta5e-3)"
# The displacement suite's seeds 1-2 (50,000 steps each) after the shorter runs.
DISP_SEEDS="displacement:10_s1 displacement:20_s1 displacement:10_s2 displacement:20_s2"
QUEUE_A="$ASYM_S0 displacement:10 probes:canonical_k10_s1 probes:canonical_k20_s1 lr:$(seeded lr_k20_eta3e-4 lr_k20_eta5e-4 lr_k20_eta2e-3)"
# The rows that differ or are not replicated first (probes, LR, batch, asymmetry), then the
# plateau suite's z-length seeds (its rows replicate at seed 0), then η = 5e-3 (≈ 5 h on one
# core) before the displacement seeds, so queue A trains those (≈ 5.5 h) beside it: ≈ 5.5 h in
# all, against ≈ 7.3 h with it last.
QUEUE_B="$ASYM_S0 displacement:20 probes:canonical_k10_s2 probes:canonical_k20_s2 batch:$(seeded batch_k20_b128 batch_k20_b256 batch_k20_b512 batch_k20_b64 batch_k20_b128_eta5e-4 batch_k36_b128 batch_k36_b256 batch_k36_b512 batch_k36_b64) $ASYM_SEEDS plateau:$(seeded zlen1_k10 zlen2_k10 zlen3_k10 zlen4_k10) $LR_SLOW $DISP_SEEDS"

build() {
  cargo build --release --quiet   # $PROBE
  [ -x "$BIN" ] && return
  [ -d "$SRC" ] || git worktree add --detach "$SRC" "$PIN"
  cargo build --release --manifest-path "$SRC/Cargo.toml" --target-dir "target/pinned-$PIN"
}

# Train (or continue) the displacement suite's run at K (10, 20; 10_s1 … for seeds 1-2) on THREADS
# threads at niceness NICE, then probe it once finished. A run the other queue holds is refused
# by its lock.
displacement_run() {
  local k=${1%%_*} run="$WORK/paper/runs/displacement_k$1"
  local train=(env RAYON_NUM_THREADS="${THREADS:-1}" nice -n "${NICE:-0}" "$BIN" train --quiet)
  if [ -f "$run/resume.safetensors" ] && [ ! -f "$run/summary.json" ]; then
    "${train[@]}" --resume "$run" --allow-other-revision || return 0
  elif [ ! -e "$run" ]; then
    # Seed s: the seed-0 run with init and order seeds 42 + s, as RunSpec::seeded sets them.
    local seed=() s=${1#"$k"}; s=${s#_s}
    [ -z "$s" ] || seed=(--set "train.init=\"seed:$((42 + s))\"" --set "train.order_seed=$((42 + s))")
    "${train[@]}" --config "$SRC/configs/canonical_k$k.toml" --out "$run" \
      --set train.max_steps=50000 --set train.checkpoint_every=200 "${seed[@]}" || return 0
  fi
  probe_finished_displacement "$run"
  return 0
}

# Probe a finished displacement run while its checkpoints are here: the probe continues a report
# an earlier session saved part of. One finished in an earlier session was saved without
# checkpoints, its probe result kept: nothing to do.
probe_finished_displacement() {
  local run=$1
  if [ -f "$run/summary.json" ] && [ -n "$(ls "$run/checkpoints" 2>/dev/null)" ]; then
    "$PROBE" probe displacement --quiet --run "$run" || true
  fi
}

# Keep an unfinished displacement run's points so far and its last two 200-step checkpoints
# (with fewer than three checkpoints there are no points: the run is not saved and trains again).
save_displacement() {
  local run=$1 dst=$2 last
  if ! "$PROBE" probe displacement --quiet --run "$run"; then
    echo "$(basename "$run"): not saved (no displacement points yet); it trains again from step 0"
    rm -rf "$dst"; return
  fi
  mkdir -p "$dst/probes" "$dst/checkpoints"
  cp "$run/probes/displacement.json" "$dst/probes/"
  last=$(ls "$run/checkpoints" | grep -E '^step_[0-9]+\.safetensors$' |
    awk -F'[_.]' '$2 % 200 == 0' | sort | tail -n 2)
  for f in $last; do cp "$run/checkpoints/$f" "$dst/checkpoints/"; done
}

# The last step a run recorded (0: none yet).
last_step() {
  local r
  r=$(tail -n1 "$1/metrics.jsonl" 2>/dev/null | sed -n 's/^{"step":\([0-9]*\).*/\1/p' || true)
  echo "${r:-0}"
}

# An unfinished run (not a displacement run: those keep their own points) that recorded fewer
# than MIN_SAVED steps is not saved: it trains again from step 0 next session, a few minutes lost
# against a 9.7 MB resume state in the repository.
MIN_SAVED=${MIN_SAVED:-500}
too_short_to_save() {
  local run=$1
  [ ! -f "$run/summary.json" ] && [ "$(last_step "$run")" -lt "$MIN_SAVED" ] &&
    case "$(basename "$run")" in displacement_k*|canonical_k*_s[12]) false ;; *) true ;; esac
}

# The saved runs, then the campaign's runs `land` moved into results/paper (finished: the queues
# skip them, and the probed canonical seed runs keep their probe results).
restore() {
  mkdir -p "$WORK/paper/runs"
  for run in "$SAVED"/paper/runs/*/ $(landed_runs); do
    [ -d "$run" ] || continue
    dst="$WORK/paper/runs/$(basename "$run")"
    [ -e "$dst" ] || cp -r "$run" "$dst"
  done
}

# This campaign's runs in results/paper: seeds 1-2, the displacement and the asymmetry runs.
landed_runs() {
  ls -d results/paper/runs/*_s[12]/ results/paper/runs/displacement_k*/ results/paper/runs/asym_*/ 2>/dev/null || true
}

# Move every finished saved run (and the probe results of the canonical seed runs) into
# results/paper/runs, rebuild its report (scripts/collect-results.sh, from a staging copy:
# it rebuilds results/paper from scratch) and the verdict block of docs/REPLICATION.md.
# Unfinished runs stay saved.
land() {
  local stage name dst landed=()
  stage=$(mktemp -d); mkdir -p "$stage/paper"
  cp -r results/paper/runs "$stage/paper/runs"
  for run in "$SAVED"/paper/runs/*/; do
    name=$(basename "$run"); dst="$stage/paper/runs/$name"
    if [ -f "$run/summary.json" ]; then
      rm -rf "$dst"; cp -r "$run" "$dst"
    elif [ ! -f "$run/config.toml" ] && [ -d "$dst" ]; then
      mkdir -p "$dst/probes"; cp "$run"/probes/* "$dst/probes/"
    else
      continue
    fi
    echo "landed: $name"; landed+=("$run")
  done
  scripts/collect-results.sh paper "$stage" results
  rm -rf "${landed[@]}" "$stage"
  scripts/paste-verdicts.sh
}

# Whether the run in the work tree is in results/paper already, with every probe result it has.
is_landed() {
  local run=$1 committed="results/paper/runs/$(basename "$1")" p
  [ -f "$run/summary.json" ] && [ -f "$committed/summary.json" ] || return 1
  for p in "$run"/probes/*.json; do [ -e "$p" ] || continue; [ -f "$committed/probes/$(basename "$p")" ] || return 1; done
}

# The snap, ablation and Hessian probes of a canonical seed run (canonical_k10_s1 …): committed
# without checkpoints, it is trained again by the pin (its metrics, timing aside, must equal the
# committed run's), then probed by the checked-out revision. Each probe's result is kept as it ends,
# so a session that stops part way trains it again next time and runs only the probes missing.
probe_seed_run() {
  local name=$1 run="$WORK/paper/runs/$1" committed="results/paper/runs/$1"
  local probes=(snap ablation hessian) missing=() p
  for p in "${probes[@]}"; do [ -f "$run/probes/$p.json" ] || missing+=("$p"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ ! -f "$run/summary.json" ] || [ -z "$(ls "$run/checkpoints" 2>/dev/null)" ]; then
    # The other queue may be training it: never delete a run whose lock is fresh (heartbeat < 2 min).
    if [ -n "$(find "$run.lock" -mmin -2 2>/dev/null)" ]; then echo "$name: trained by the other queue" >&2; return 0; fi
    mkdir -p "$run.probes"; [ -d "$run/probes" ] && cp "$run"/probes/* "$run.probes/"
    rm -rf "$run"
    nice -n 19 "$BIN" replicate d-scaling --scale paper --out "$WORK" --seeds 3 --only "$name" \
      --runs-only --jobs 1 --threads 1 || return 0
    # No earlier probe results is the usual case: an empty glob must not end the queue (set -e).
    mkdir -p "$run/probes"; cp "$run.probes"/* "$run/probes/" 2>/dev/null || true; rm -rf "$run.probes"
  fi
  # Every record but its wall-clock fields (the last ones of each line) must be the committed run's.
  local untimed='s/,"wall_time_s".*//'
  if ! cmp -s <(sed "$untimed" "$run/metrics.jsonl") <(sed "$untimed" "$committed/metrics.jsonl"); then
    echo "$name: trained again, its metrics differ from $committed: not probed" >&2
    return 0
  fi
  RAYON_NUM_THREADS=1 nice -n 19 "$PROBE" replicate "${missing[@]}" --scale paper --out "$WORK" \
    --probes-only --only "$name" || true
}

queue() {
  for item in "$@"; do
    case "${item%%:*}" in
      displacement) THREADS=1 NICE=19 displacement_run "${item#*:}"; continue ;;
      probes) probe_seed_run "${item#*:}"; continue ;;
    esac
    nice -n 19 "$BIN" replicate "${item%%:*}" --scale paper --out "$WORK" --seeds 3 --only "${item#*:}" \
      --runs-only --jobs 1 --threads 1 --allow-other-revision || true
  done
}

case "${1:-}" in
  start)
    build; restore
    ( queue $QUEUE_A; queue $QUEUE_B ) > "$WORK/queue-a.log" 2>&1 &
    ( queue $QUEUE_B; queue $QUEUE_A ) > "$WORK/queue-b.log" 2>&1 &
    echo "training in the background: $WORK/queue-{a,b}.log" ;;
  displacement)
    k=${2:?K: 10 or 20}; build; restore
    THREADS=2 displacement_run "$k" ;;
  save)
    # The queues first (else each would start its next run), then the runs they train.
    pkill -f "seed-runs.sh start" || true
    pkill -f "pinned-$PIN/release/windtunnel (replicate|train)" || true
    pkill -f "$PROBE (replicate|probe)" || true   # the seed runs' probes (the Hessian keeps its points)
    sleep 2
    mkdir -p "$SAVED/paper/runs"
    for run in "$WORK"/paper/runs/*/; do
      [ -f "$run/config.toml" ] || continue
      is_landed "$run" && continue
      dst="$SAVED/paper/runs/$(basename "$run")"; rm -rf "$dst"
      if too_short_to_save "$run"; then
        echo "$(basename "$run"): not saved (step $(last_step "$run") < $MIN_SAVED); it trains again from step 0"
        continue
      fi
      mkdir -p "$dst"
      for f in config.toml manifest.json metrics.jsonl summary.json; do
        [ -f "$run/$f" ] && cp "$run/$f" "$dst/"
      done
      [ -f "$run/summary.json" ] || { [ -f "$run/resume.safetensors" ] && cp "$run/resume.safetensors" "$dst/"; }
      case "$(basename "$run")" in
        displacement_k*) [ -f "$run/summary.json" ] || { save_displacement "$run" "$dst"; continue; }
          probe_finished_displacement "$run" ;;
        # A probed seed run: its probe results only (the committed run holds the rest).
        canonical_k*_s[12]) rm -rf "$dst"; mkdir -p "$dst/probes"
          cp "$run"/probes/*.json "$run"/probes/*.seconds "$dst/probes/" 2>/dev/null || rm -rf "$dst"
          continue ;;
      esac
      # Probe results (the displacement runs'), without their CSV/SVG renderings.
      if [ -d "$run/probes" ]; then mkdir -p "$dst/probes"; cp "$run"/probes/*.json "$run"/probes/*.seconds "$dst/probes/" 2>/dev/null || true; fi
    done ;;
  land) land ;;
  status)
    for run in "$SAVED"/paper/runs/*/; do
      [ -d "$run" ] || continue
      last=$(last_step "$run")
      if [ -f "$run/summary.json" ]; then s=finished
      elif [ ! -f "$run/config.toml" ]; then s="probed: $(cd "$run/probes" && ls *.json | sed 's/.json//' | paste -sd' ')"
      else s="at step ${last:-0}"; fi
      echo "$(basename "$run") $s"
    done
    echo "in results/paper/runs (landed, or seeds of earlier suites): $(landed_runs | wc -l) seed, displacement and asymmetry runs" ;;
  *) sed -n '2,10p' "$0"; exit 2 ;;
esac
