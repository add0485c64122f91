#!/usr/bin/env bash
# Regenerate golden/tl/ (TransformerLens reference dumps) with the pinned harness environment:
#   python3 -m venv .venv && .venv/bin/pip install -r python/requirements.txt
#   PYTHON=.venv/bin/python python/make_golden.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
W=target/release/windtunnel
G=golden/tl
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cargo build --release --quiet --bin windtunnel
mkdir -p "$G"

# The author's step-0 weights: TL gpt2 init, seed 42, float32; and the same values widened to f64.
$PY python/tl_harness.py init --dtype f32 --out "$G/init_f32.safetensors"
$PY python/tl_harness.py init --dtype f64 --out "$G/init_f64.safetensors"

# A batch of 32 canonical examples (K=10 train set, windtunnel's sample with --batch-seed 0).
$W export --batch-size 32 --batch-seed 0 --out "$TMP/batch.safetensors"

# TL logits / loss / gradients on that batch from the author's init, f64 and f32, with the
# activations of the first 2 examples at every TL hook.
$PY python/tl_harness.py grads --weights "$G/init_f64.safetensors" --batch "$TMP/batch.safetensors" \
    --dtype f64 --hooks 2 --no-params --out "$G/grads_f64.safetensors"
$PY python/tl_harness.py grads --weights "$G/init_f32.safetensors" --batch "$TMP/batch.safetensors" \
    --dtype f32 --hooks 2 --no-params --out "$G/grads_f32.safetensors"

# Trajectories of the author's loop in f64 (12 steps each), from the author's init:
# (a) canonical: K=10 data, batch 128, AdamW lr 1e-3 wd 0.01, constant LR, no clipping;
$W data --k 10 --n-b 1000 --enforce-unique-first-char --out-tensors "$TMP/data_k10.safetensors"
$PY python/tl_harness.py train --init "$G/init_f64.safetensors" --data "$TMP/data_k10.safetensors" \
    --steps 12 --batch-size 128 --lr 1e-3 --schedule constant --perm-seed 42 --dtype f64 \
    --out "$G/traj_constant_f64.safetensors"
# (b) base.yaml-style: warmup + cosine (literal 3.14159, f32 cosine) with clip_grad_norm_(1.0), on a
#     small K=5, n_b=200 set (D=1000: 8 steps per epoch, short last batch of 104) so that 12 steps
#     cross an epoch boundary; warmup 4 and horizon 12 exercise both schedule branches.
$W data --k 5 --n-b 200 --enforce-unique-first-char --out-tensors "$TMP/data_k5.safetensors"
$PY python/tl_harness.py train --init "$G/init_f64.safetensors" --data "$TMP/data_k5.safetensors" \
    --steps 12 --batch-size 128 --lr 1e-3 --schedule cosine --warmup 4 --max-steps 12 --clip 1.0 \
    --perm-seed 7 --dtype f64 --out "$G/traj_cosine_f64.safetensors"

# (c) the canonical loop of (a) in f32 for 25 steps: calibrates verify's f32 trajectory rule
#     (src/check/compare.rs, TRAJ_F32_STEP) and its tests (tests/verify_presets.rs).
$PY python/tl_harness.py train --init "$G/init_f32.safetensors" --data "$TMP/data_k10.safetensors" \
    --steps 25 --batch-size 128 --lr 1e-3 --schedule constant --perm-seed 42 --dtype f32 \
    --out "$G/traj_constant_f32_25.safetensors"

$PY - <<'PYEOF' > "$G/VERSIONS.txt"
import platform, torch, transformer_lens, safetensors, numpy
from importlib.metadata import version
print(f"python {platform.python_version()}")
for p in ("torch", "transformer-lens", "safetensors", "numpy"):
    print(f"{p} {version(p)}")
PYEOF
du -ch "$G"/*.safetensors | tail -1
