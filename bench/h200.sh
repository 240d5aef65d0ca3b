#!/usr/bin/env bash
# Runs Laya's checks and benchmarks on an NVIDIA machine through the device tool (docs/benchmarks.md):
# the laya binary built here links libmlx.so dynamically, so on that machine it runs on the
# mlx-cuda-13 wheel's libmlx (same MLX version, 0.32.2) found through LD_LIBRARY_PATH.
# Calls carry at most 64 MiB and a machine stays warm 30 s, so everything travels as one bundle
# cut in four parts: three calls stash a part each in /root/stash, the fourth carries the last.
#   bench/h200.sh pack              (here) bundle laya, the wheels, tokenizer and model; split it
#   bench/h200.sh stash FILE...     (there) keep files for a later call
#   bench/h200.sh all               (there) reassemble, install, check GPU against CPU, benchmark
#   bench/h200.sh more              (there) reassemble, install, the typing replay, stacked projections
#   bench/h200.sh variants          (there) reassemble once, install; bench/cuda_step_variants.py
#   bench/h200.sh settings          (there) reassemble once, install; laya bench and the replay under
#                                   each MLX CUDA-graph setting and bf16 activations
#   bench/h200.sh qmv               (there) reassemble once, install; bench/cuda_qmv_kernel.py, then
#                                   laya bench (default model, Qwen3-8B shape) and the replay as they are
# variants and settings can follow each other on one warm machine (the second finds the bundle
# unpacked); they leave their files in $OUT/results.tar (a call brings back at most 8 files).
set -euo pipefail
S=/root/stash
SITE=/root/site
mkdir -p "$S"
nvlibs=$(ls -d /opt/torch/.venv/lib/python3.12/site-packages/nvidia/*/lib 2>/dev/null | tr '\n' ':' || true)
env_setup() {
  export PYTHONPATH=$SITE
  local mlxlib
  mlxlib=$(dirname "$(find $SITE -name 'libmlx.so' | head -1)")
  export LD_LIBRARY_PATH="$mlxlib:$nvlibs${LD_LIBRARY_PATH:-}"
}
case "$1" in
  pack)
    # The wheels come from PyPI (pinned by sha256 on the device); the model is the one make bootstrap
    # unpacked; the tokenizer is a 384-token byte-level BPE for the random checkpoints' files.
    W=.whl; mkdir -p "$W"
    CUDA_WHL=mlx_cuda_13-0.32.2-py3-none-manylinux_2_35_x86_64.whl
    test -f "$W/$CUDA_WHL" || python3 -m pip download -q --no-deps --only-binary=:all: \
      --platform manylinux_2_35_x86_64 -d "$W" mlx-cuda-13==0.32.2
    test -f "$W/mlx-0.32.2-cp312-cp312-manylinux_2_35_x86_64.whl" || python3 -m pip download -q --no-deps \
      --only-binary=:all: --platform manylinux_2_35_x86_64 --python-version 3.12 -d "$W" mlx==0.32.2
    cp "${XDG_CACHE_HOME:-$HOME/.cache}/laya/models/SmolLM2-135M-Instruct.Q4_1.gguf" "$W/"
    cp bench/tokenizer-bytes-384.json "$W/tokenizer.json"
    cp .deps/lexicon/en.tsv "$W/en.tsv"
    strip -o "$W/laya" "${CARGO_TARGET_DIR:-target}/release/laya"
    tar -C "$W" -cf "$W/bundle.tar" laya mlx-0.32.2-cp312-cp312-manylinux_2_35_x86_64.whl \
      "$CUDA_WHL" tokenizer.json SmolLM2-135M-Instruct.Q4_1.gguf en.tsv
    (cd "$W" && sha256sum bundle.tar >bundle.sha256 && rm -f bundle.part* && split -d -n 4 bundle.tar bundle.part && rm bundle.tar)
    ls -la "$W"/bundle.*
    ;;
  stash) shift; cp "$@" "$S/"; ls -la "$S" ;;
  variants|settings|qmv)
    if [ ! -x "$S/laya" ]; then
      cat "$S"/bundle.part00 "$S"/bundle.part01 "$S"/bundle.part02 .whl/bundle.part03 >"$S/bundle.tar"
      (cd "$S" && sha256sum -c bundle.sha256 && tar -xf bundle.tar && rm bundle.tar bundle.part0*)
      echo "335094ccd1c0c6dc3e09c8caba207c8180602bacc0c38ba20c1d81e9456ab394  $S/mlx_cuda_13-0.32.2-py3-none-manylinux_2_35_x86_64.whl" | sha256sum -c -
      python3 -m pip install -q --no-index --no-deps --no-compile --target $SITE "$S"/mlx-0.32.2-*.whl "$S"/mlx_cuda_13-*.whl
      chmod +x "$S/laya"
    fi
    env_setup
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader
    W=/root/work; mkdir -p "$W"
    snap() { tar -C "$W" -cf "$OUT/results.tar" . || true; }
    here=$(dirname "$0")
    if [ "$1" = qmv ]; then
      M=$S/SmolLM2-135M-Instruct.Q4_1.gguf; L=$S/laya
      PYTHONUNBUFFERED=1 timeout 200 python3 "$here/cuda_qmv_kernel.py" 2>&1 | tee "$W/qmv.txt" || echo "qmv: exit $?"
      snap
      LAYA_LOG=debug "$L" doctor --model "$M" >"$W/doctor.txt" 2>&1 || true
      grep -E 'GPU check  |activations' "$W/doctor.txt" || true
      timeout 60 "$L" bench --model "$M" --peers none --reps 30 --out "$W/smollm2.json" >"$W/smollm2.txt" 2>&1 || echo "bench: exit $?"
      tail -9 "$W/smollm2.txt"; snap
      timeout 100 python3 bench/random_checkpoint.py --shape qwen3-8b --tokenizer "$S/tokenizer.json" --out /root/qwen3-8b || echo "checkpoint: exit $?"
      timeout 100 "$L" bench --model /root/qwen3-8b --peers none --reps 20 --only decode_64,decode_512,score_8 \
        --out "$W/qwen3-8b.json" >"$W/qwen3-8b.txt" 2>&1 || echo "bench: exit $?"
      tail -9 "$W/qwen3-8b.txt"; snap
      for r in 1 2; do
        LAYA_MODEL="$M" LAYA_LEXICON="$S/en.tsv" timeout 75 "$L" bench --replay --chars 500 --out "$W/replay-$r.json" \
          >"$W/replay-$r.txt" 2>&1 || echo "replay: exit $?"
        grep -E 'ghost text, per|engine jobs|forwards per ghost|suggestions shown' "$W/replay-$r.txt" || true; snap
      done
      exit 0
    fi
    if [ "$1" = variants ]; then
      PYTHONUNBUFFERED=1 timeout 500 python3 "$here/cuda_step_variants.py" "$W/variants.jsonl" | tee "$W/variants.txt" || echo "variants: exit $?"
      snap; exit 0
    fi
    M=$S/SmolLM2-135M-Instruct.Q4_1.gguf; L=$S/laya
    # bench NAME VARS: laya bench on the default model under VARS (MLX reads its variables once
    # per process), with the load-time GPU check's verdict from laya doctor.
    bench() {
      echo "== $1 ($2)"
      env $2 LAYA_LOG=debug "$L" doctor --model "$M" >"$W/doctor-$1.txt" 2>&1 || true
      grep -E 'activations|gpu check|GPU' "$W/doctor-$1.txt" | grep -v 'GPU check: layer' | head -6 || true
      env $2 timeout 100 "$L" bench --model "$M" --peers none --reps 30 --out "$W/smollm2-$1.json" >"$W/smollm2-$1.txt" 2>&1 || echo "bench: exit $?"
      show "$W/smollm2-$1.json"
      snap
    }
    show() {
      python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["engines"]["laya"]["workloads"]; print("  "+"  ".join("%s %.2f" % (k, v["median_ms"]) for k,v in sorted(w.items())))' "$1" || true
    }
    # fastest NAME...: the one whose decode_64 + score_8 medians sum lowest.
    fastest() {
      python3 -c 'import json,sys
t={n: sum(json.load(open(f"{sys.argv[1]}/smollm2-{n}.json"))["engines"]["laya"]["workloads"][k]["median_ms"] for k in ("decode_64","score_8")) for n in sys.argv[2:]}
print(min(t, key=t.get))' "$W" "$@"
    }
    declare -A V=([default]="" [graphs-off]="MLX_USE_CUDA_GRAPHS=0"
      [ops-100]="MLX_MAX_OPS_PER_BUFFER=100 MLX_MAX_MB_PER_BUFFER=1000000"
      [ops-1000]="MLX_MAX_OPS_PER_BUFFER=1000 MLX_MAX_MB_PER_BUFFER=1000000")
    for n in default graphs-off ops-100 ops-1000; do bench $n "${V[$n]}"; done
    best=$(fastest default graphs-off ops-100 ops-1000); echo "fastest MLX setting: $best"
    B=${V[$best]}
    # bf16 activations under that setting: used only if the load-time check agrees (doctor says).
    # (The recorded run, at f180d98, also tried LAYA_GPU_STACK=1, since removed: MLX aborted.)
    V[bf16]="$B LAYA_GPU_DTYPE=bf16"
    bench bf16 "${V[bf16]}"
    timeout 150 python3 bench/random_checkpoint.py --shape qwen3-8b --tokenizer "$S/tokenizer.json" --out /root/qwen3-8b
    names=(default); [ "$best" != default ] && names+=("$best")
    for n in "${names[@]}"; do
      echo "== qwen3-8b, $n (${V[$n]})"
      env ${V[$n]} timeout 100 "$L" bench --model /root/qwen3-8b --peers none --reps 20 --only decode_64,decode_512,score_8 \
        --out "$W/qwen3-8b-$n.json" >"$W/qwen3-8b-$n.txt" 2>&1 || echo "bench: exit $?"
      show "$W/qwen3-8b-$n.json"
      snap
    done
    # The replay (500 characters at 100 ms a key): the fastest setting first (a fresh shape's
    # kernels compile on their first use), then the default, then the fastest again.
    i=0
    for n in "$best" default "$best"; do
      i=$((i + 1))
      echo "== replay $i, $n (${V[$n]})"
      env ${V[$n]} LAYA_MODEL="$M" LAYA_LEXICON="$S/en.tsv" timeout 100 "$L" bench --replay --chars 500 --out "$W/replay-$i-$n.json" \
        >"$W/replay-$i-$n.txt" 2>&1 || echo "replay: exit $?"
      grep -E 'ghost text, per|engine jobs|suggestions shown' "$W/replay-$i-$n.txt"
      snap
    done
    ;;
  all|more)
    cat "$S"/bundle.part00 "$S"/bundle.part01 "$S"/bundle.part02 .whl/bundle.part03 >"$S/bundle.tar"
    (cd "$S" && sha256sum -c bundle.sha256 && tar -xf bundle.tar && rm bundle.tar bundle.part0*)
    echo "335094ccd1c0c6dc3e09c8caba207c8180602bacc0c38ba20c1d81e9456ab394  $S/mlx_cuda_13-0.32.2-py3-none-manylinux_2_35_x86_64.whl" | sha256sum -c -
    python3 -m pip install -q --no-index --no-deps --no-compile --target $SITE "$S"/mlx-0.32.2-*.whl "$S"/mlx_cuda_13-*.whl
    env_setup
    time python3 -c 'import mlx.core as mx; print(mx.default_device()); a = mx.random.normal((64, 576)); w = mx.random.normal((1536, 576)); q = mx.quantize(w, 32, 4); print(mx.quantized_matmul(a, *q, True, 32, 4).sum().item())'
    M=$S/SmolLM2-135M-Instruct.Q4_1.gguf
    echo "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53  $M" | sha256sum -c -
    L="$S/laya"; chmod +x "$L"
    if [ "$1" = more ]; then
      # The language server's typing replay (needs .deps/lexicon/en.tsv carried), twice: the
      # first run also pays for MLX CUDA compiling each new shape's kernels; the second is the
      # measurement. Then where a decode step's time goes (plain MLX-Python, eager and compiled).
      "$L" doctor --model "$M" | grep -E 'device|GPU check'
      for run in 1 2 3; do
        echo "== replay, run $run"
        LAYA_MODEL="$M" LAYA_LEXICON="$PWD/.deps/lexicon/en.tsv" timeout 150 "$L" bench --replay --chars 500 --out "$OUT/h200-replay-$run.json" \
          | tee "$OUT/h200-replay-$run.txt" || echo "replay: exit $?"
      done
      timeout 120 python3 bench/cuda_decode_profile.py "$M" | tee "$OUT/h200-decode-profile.txt" || echo "profile: exit $?"
      exit 0
    fi
    python3 bench/cuda_ops_check.py || echo "cuda_ops_check: some ops differ between the GPU and the CPU"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    python3 bench/cuda_gguf_check.py "$M" || true
    "$L" --version
    LAYA_LOG=debug "$L" doctor --model "$M"
    for allow in 0 1; do  # the CPU, then the GPU: their answers must agree
      echo "== LAYA_ALLOW_CUDA=$allow"
      LAYA_ALLOW_CUDA=$allow "$L" complete --model "$M" "The capital of France is" || echo "exit $?"
      LAYA_ALLOW_CUDA=$allow "$L" rank --model "$M" --context "I would like to thank you for your" help banana support || echo "exit $?"
    done
    export LAYA_ALLOW_CUDA=1
    "$L" bench --model "$M" --peers none --reps 30 --out "$OUT/h200-smollm2.json" | tee "$OUT/h200-smollm2.txt"
    for shape in qwen3-0.6b qwen3-8b; do
      python3 bench/random_checkpoint.py --shape $shape --tokenizer "$S/tokenizer.json" --out "/root/$shape"
      "$L" bench --model "/root/$shape" --peers none --reps 20 --only prefill_64,decode_64,decode_512,score_8,append_2 \
        --out "$OUT/h200-$shape.json" | tee "$OUT/h200-$shape.txt"
    done
    ;;
esac
