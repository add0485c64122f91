#!/usr/bin/env bash
# How many steps a per-step trajectory comparison of a real port holds (docs/interop.md §4):
# the author's PyTorch + TransformerLens loop and windtunnel, both from the author's init on the
# canonical K = 10 data in PyTorch's epoch order, N steps in f32 and f64; prints the first step
# at which their losses differ by more than 1e-12, 1e-6 and 1e-3, and verify's verdict.
#   PYTHON=.venv/bin/python scripts/port-horizon.sh [steps]      (python/requirements.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
N=${1:-1000}
W=target/release/windtunnel
G=golden/tl
T=${PORT_HORIZON_DIR:-$(mktemp -d)}
cargo build --release --quiet --bin windtunnel
"$W" data --k 10 --n-b 1000 --enforce-unique-first-char --out-tensors "$T/data_k10.safetensors" > /dev/null
for d in f32 f64; do
  "$PY" python/tl_harness.py train --init "$G/init_$d.safetensors" --data "$T/data_k10.safetensors" \
    --steps "$N" --batch-size 128 --lr 1e-3 --schedule constant --perm-seed 42 --dtype "$d" --out "$T/torch_$d.safetensors"
  "$W" export --steps "$N" --dtype "$d" --init "$G/init_$d.safetensors" \
    --set "train.data_order=\"$T/torch_$d.safetensors\"" --out "$T/wt_$d.safetensors"
  "$PY" - "$T/torch_$d.safetensors" "$T/wt_$d.safetensors" "$d" <<'PYEOF'
import sys
import numpy as np
from safetensors.numpy import load_file
a, b = (load_file(p)["losses"].astype(np.float64) for p in sys.argv[1:3])
diff = np.abs(a - b)
first = {t: next((i + 1 for i, x in enumerate(diff) if x > t), None) for t in (1e-12, 1e-6, 1e-3)}
print(f"{sys.argv[3]}: {len(a)} steps; loss differs by > 1e-12 from step {first[1e-12]}, > 1e-6 from "
      f"{first[1e-6]}, > 1e-3 from {first[1e-3]}; max {diff.max():.2e}")
PYEOF
  "$W" verify "$T/torch_$d.safetensors" "$T/wt_$d.safetensors" --exclude perm --quiet && echo "verify: passed" || echo "verify: failed"
done
