#!/usr/bin/env bash
# After `REPS8B=1 bash .whl/run/go.sh run laya-main -- bench 8b` (bench/gpu_ab.sh), in the same call:
# `bash bench/gpu_ab_extras.sh $SECONDS`. The replay, the Qwen3-8B shape with Laya's GPU kernels off
# and on again, the MLX-Python peers (bench/cuda_score_nodes.py, bench/cuda_step_variants.py
# --child default); each step skipped past its deadline (seconds since the call began); $OUT/r.tar.
S=/root/stash; M=$S/SmolLM2-135M-Instruct.Q4_1.gguf; W=/root/work; B=$S/laya-main
nvlibs=$(ls -d /opt/torch/.venv/lib/python3.12/site-packages/nvidia/*/lib 2>/dev/null | tr '\n' ':' || true)
export PYTHONPATH=/root/site LD_LIBRARY_PATH="/root/site/mlx/lib:$nvlibs${LD_LIBRARY_PATH:-}"
snap() { tar -C "$W" -cf "$OUT/r.tar" . 2>/dev/null || true; }
t0=$1  # seconds go.sh took
late() { [ $((t0 + SECONDS)) -gt "$1" ] && echo "skipped $2 at $((t0 + SECONDS))s" ; }
replay() {
  LAYA_MODEL="$M" LAYA_LEXICON="$S/en.tsv" timeout "$2" "$B" bench --replay --chars 500 --out "$W/replay-$1.json" >"$W/replay-$1.txt" 2>&1 || echo "replay $1: exit $?"
  echo "replay $1 at $((t0 + SECONDS))s: $(grep -E 'ghost text, per|suggestions shown' "$W/replay-$1.txt" | tr -s ' ' | tr '\n' ' ')"; snap
}
b8() {
  env $2 timeout 100 "$B" bench --model /root/qwen3-8b --peers none --reps 20 --only decode_64,decode_512,score_8 --out "$W/qwen3-8b-$1.json" >"$W/qwen3-8b-$1.txt" 2>&1 || echo "8b $1: exit $?"
  python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["engines"]["laya"]["workloads"]; print("  8b "+sys.argv[2]+"  "+"  ".join("%s %.2f" % (k, v["median_ms"]) for k,v in sorted(w.items())))' "$W/qwen3-8b-$1.json" "$1" || true
  snap
}
late 330 replay1 || replay 1 150
late 420 8b-off || b8 nokernels LAYA_GPU_KERNELS=0
late 450 8b-on || b8 laya-main-2 LAYA_GPU_KERNELS=1
late 480 score-nodes || { timeout 60 python3 bench/cuda_score_nodes.py >"$W/score-nodes.txt" 2>&1; echo "score-nodes: exit $?"; cat "$W/score-nodes.txt" | tail -12; snap; }
late 500 variants || { MLX_PTX_CACHE_DIR=/tmp/mlx-ptx-cache timeout 100 python3 bench/cuda_step_variants.py --child default >"$W/step-variants-default.txt" 2>&1; echo "variants: exit $?"; grep -E '"step|projections' "$W/step-variants-default.txt"; snap; }
late 530 replay2 || replay 2 60
echo "extras done at $((t0 + SECONDS))s"
