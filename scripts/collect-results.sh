#!/usr/bin/env bash
# Copy the small artefacts of replication runs (config, manifest, metrics log, summary, probe
# results — no checkpoints) into a committed tree and rebuild the report from it, so the report
# can be regenerated and audited without the multi-GB run directories:
#   scripts/collect-results.sh [scale] [from] [to]     # defaults: paper runs/replicate results
# then `windtunnel replicate all --scale <scale> --report-only --out <to>` is what this runs.
# <to>/<scale> is rebuilt from scratch (runs, figures, report), so nothing of an older
# replication survives in it.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-paper}; FROM=${2:-runs/replicate}; TO=${3:-results}
src="$FROM/$SCALE/runs"; dst="$TO/$SCALE/runs"
[ -d "$src" ] || { echo "no runs in $src" >&2; exit 1; }
[ "$(realpath -m "$src")" != "$(realpath -m "$dst")" ] || { echo "from and to are the same directory" >&2; exit 1; }
rm -rf "$dst" "$TO/$SCALE/figures" "$TO/$SCALE/report.md" "$TO/$SCALE/report.json"
for run in "$src"/*/; do
  name=$(basename "$run"); mkdir -p "$dst/$name"
  for f in config.toml manifest.json metrics.jsonl summary.json; do
    [ -f "$run/$f" ] && cp "$run/$f" "$dst/$name/"
  done
  if [ -d "$run/probes" ]; then
    mkdir -p "$dst/$name/probes"
    find "$run/probes" -maxdepth 1 \( -name '*.json' -o -name '*.seconds' -o -name '*.csv' \) -exec cp {} "$dst/$name/probes/" \;
  fi
done
cargo run --release --quiet -- replicate all --scale "$SCALE" --report-only --out "$TO"
