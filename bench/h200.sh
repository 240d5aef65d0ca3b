#!/usr/bin/env bash
# Runs Laya's benchmarks on an NVIDIA machine through the device tool (see bench/README.md):
# the laya binary built here links libmlx.so dynamically, so on that machine it runs on the
# mlx-cuda-13 wheel's libmlx (same MLX version, 0.32.2) found through LD_LIBRARY_PATH.
# Files arrive in pieces (64 MiB per call): `stash` keeps them in /root/stash between calls.
#   bench/h200.sh stash FILE...     keep files for a later call
#   bench/h200.sh install           reassemble and install the MLX CUDA wheel, warm up its kernels
#   bench/h200.sh run               reassemble the model, run doctor/complete/bench, random Qwen3 shapes
set -euo pipefail
S=/root/stash
SITE=/root/site
mkdir -p "$S"
nvlibs=$(ls -d /opt/torch/.venv/lib/python3.12/site-packages/nvidia/*/lib 2>/dev/null | tr '\n' ':')
env_setup() {
  export PYTHONPATH=$SITE
  local mlxlib
  mlxlib=$(dirname "$(find $SITE -name 'libmlx.so' | head -1)")
  export LD_LIBRARY_PATH="$mlxlib:$nvlibs${LD_LIBRARY_PATH:-}"
}
case "$1" in
  stash) shift; cp "$@" "$S/"; ls -la "$S" ;;
  install)
    cat "$S"/cuda.part00 .whl/cuda.part01 >"$S/mlx_cuda_13-0.32.2-py3-none-manylinux_2_35_x86_64.whl"
    echo "335094ccd1c0c6dc3e09c8caba207c8180602bacc0c38ba20c1d81e9456ab394  $S/mlx_cuda_13-0.32.2-py3-none-manylinux_2_35_x86_64.whl" | sha256sum -c -
    python3 -m pip install -q --no-index --no-deps --no-compile --target $SITE "$S"/mlx-0.32.2-*.whl "$S"/mlx_cuda_13-*.whl
    env_setup
    time python3 -c 'import mlx.core as mx; print(mx.default_device()); a = mx.random.normal((64, 576)); w = mx.random.normal((1536, 576)); q = mx.quantize(w, 32, 4); print(mx.quantized_matmul(a, *q, True, 32, 4).sum().item())'
    ;;
  run)
    env_setup
    M=$S/SmolLM2-135M-Instruct.Q4_1.gguf
    cat "$S"/model.part00 .whl/model.part01 >"$M"
    echo "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53  $M" | sha256sum -c -
    L="$S/laya"; chmod +x "$L"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    "$L" --version
    "$L" doctor --model "$M"
    "$L" complete --model "$M" "The capital of France is"
    "$L" rank --model "$M" --context "I would like to thank you for your" help banana
    "$L" bench --model "$M" --peers none --reps 30 --out "$OUT/h200-smollm2.json" | tee "$OUT/h200-smollm2.txt"
    for shape in qwen3-0.6b qwen3-8b; do
      python3 bench/random_checkpoint.py --shape $shape --tokenizer "$S/tokenizer.json" --out "/root/$shape"
      "$L" bench --model "/root/$shape" --peers none --reps 20 --only prefill_64,decode_64,decode_512,score_8,append_2 \
        --out "$OUT/h200-$shape.json" | tee "$OUT/h200-$shape.txt"
    done
    ;;
esac
