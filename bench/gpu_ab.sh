#!/usr/bin/env bash
# A/B timings of laya binaries on an NVIDIA machine through the device tool, in three calls
# (docs/benchmarks.md, "The H200 runs"): a smaller bundle than h200.sh's. MLX's two wheels travel
# unpacked and xz-compressed (74 MB against 88), so the wheels, the default model and the lexicon
# are 174 MB: two calls stash 63 MB each, the third carries the rest beside the binaries (xz, ~3 MB
# each) and does the work. The binary is what changes between runs.
#   bench/gpu_ab.sh pack BIN...   (here) the stash in .whl/s0, .whl/s1, .whl/run; each BIN (a built
#                                 laya, named by its file name) stripped and compressed into .whl/run
#   bench/gpu_ab.sh stash FILE    (there) keep a stash part in /root/stash
#   bench/gpu_ab.sh run BIN... [-- STEPS]   (there) reassemble once; for each binary laya doctor (the
#       GPU check), then STEPS (default: bench replay 8b): laya bench on the default model twice
#       (BENCH_BINS), the typing replay (REPLAY_SEQ, then REPLAY_SEQ2 after the Qwen3-8B shape),
#       the Qwen3-8B shape (B8_BINS); files in $OUT/r.tar
# Calls: stash .whl/s0/stash.part00 (carry .whl/s0 and this script), stash .whl/s1/stash.part01
# (carry .whl/s1), then run (carry .whl/run, the script copied into it as go.sh).
set -uo pipefail
if [ "$1" = pack ]; then
  shift
  W=.whl; T=$(mktemp -d); mkdir -p "$W/s0" "$W/s1" "$W/run" "$T/site" "$T/stash"
  CUDA_WHL=mlx_cuda_13-0.32.2-py3-none-manylinux_2_35_x86_64.whl
  CPU_WHL=mlx-0.32.2-cp312-cp312-manylinux_2_35_x86_64.whl
  test -f "$W/$CUDA_WHL" || python3 -m pip download -q --no-deps --only-binary=:all: \
    --platform manylinux_2_35_x86_64 -d "$W" mlx-cuda-13==0.32.2
  test -f "$W/$CPU_WHL" || python3 -m pip download -q --no-deps --only-binary=:all: \
    --platform manylinux_2_35_x86_64 --python-version 3.12 -d "$W" mlx==0.32.2
  (cd "$T/site" && unzip -q "$OLDPWD/$W/$CPU_WHL" && unzip -qo "$OLDPWD/$W/$CUDA_WHL")
  tar -C "$T/site" -cf - . | xz -6 -T2 >"$T/stash/site.tar.xz"
  cp "${XDG_CACHE_HOME:-$HOME/.cache}/laya/models/SmolLM2-135M-Instruct.Q4_1.gguf" .deps/lexicon/en.tsv "$T/stash/"
  tar -C "$T/stash" -cf "$T/stash.tar" site.tar.xz SmolLM2-135M-Instruct.Q4_1.gguf en.tsv
  (cd "$T" && sha256sum stash.tar | sed 's|stash.tar|/root/stash/stash.tar|') >"$W/run/stash.sha256"
  (cd "$T" && split -d -b 63000000 stash.tar stash.part)
  mv "$T/stash.part00" "$W/s0/"; mv "$T/stash.part01" "$W/s1/"; mv "$T/stash.part02" "$W/run/"
  for b in "$@"; do strip -o "$T/$(basename "$b")" "$b" && xz -9 -T2 -c "$T/$(basename "$b")" >"$W/run/$(basename "$b").xz"; done
  cp "$0" "$W/run/go.sh"; rm -rf "$T"; ls -la "$W"/s0 "$W"/s1 "$W"/run
  exit 0
fi
S=/root/stash
mkdir -p "$S"
if [ "$1" = stash ]; then cp "$2" "$S/"; ls -la "$S"; exit 0; fi
shift
R=.whl/run
bins=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do bins+=("$1"); shift; done
[ $# -gt 0 ] && shift
steps="${*:-bench 8b replay}"
if [ ! -d /root/site/mlx ]; then
  cat "$S"/stash.part00 "$S"/stash.part01 "$R"/stash.part02 >"$S/stash.tar" && rm -f "$S"/stash.part0*
  sha256sum -c "$R/stash.sha256" || exit 1
  tar -xf "$S/stash.tar" -C "$S" && rm "$S/stash.tar"
  mkdir -p /root/site && python3 -c 'import tarfile,sys; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' "$S/site.tar.xz" /root/site && rm "$S/site.tar.xz"
fi
for b in "$R"/*.xz; do n=$(basename "$b" .xz); python3 -c 'import lzma,sys; open(sys.argv[2],"wb").write(lzma.open(sys.argv[1]).read())' "$b" "$S/$n"; chmod +x "$S/$n"; done
nvlibs=$(ls -d /opt/torch/.venv/lib/python3.12/site-packages/nvidia/*/lib 2>/dev/null | tr '\n' ':' || true)
export PYTHONPATH=/root/site LD_LIBRARY_PATH="/root/site/mlx/lib:$nvlibs${LD_LIBRARY_PATH:-}"
M=$S/SmolLM2-135M-Instruct.Q4_1.gguf
W=/root/work; mkdir -p "$W"
snap() { tar -C "$W" -cf "$OUT/r.tar" . 2>/dev/null || true; }
show() {
  python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["engines"]["laya"]["workloads"]; print("  "+sys.argv[2]+"  "+"  ".join("%s %.2f" % (k, v["median_ms"]) for k,v in sorted(w.items())))' "$1" "$2" || true
}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader | tee "$W/gpu.txt"
uptime
for b in "${bins[@]}"; do
  LAYA_LOG=debug timeout 120 "$S/$b" doctor --model "$M" >"$W/doctor-$b.txt" 2>&1
  echo "$b: $(grep -E '^ *GPU check' "$W/doctor-$b.txt")"
done
snap
case " $steps " in *" bench "*)
  for rep in 1 2; do
    for b in ${BENCH_BINS:-${bins[@]}}; do
      timeout 100 "$S/$b" bench --model "$M" --peers none --reps 30 --out "$W/smollm2-$b-$rep.json" >"$W/smollm2-$b-$rep.txt" 2>&1 || echo "bench $b: exit $?"
      show "$W/smollm2-$b-$rep.json" "$b#$rep"
    done
    snap
  done ;;
esac
rep=0
replays() {
  for b in $1; do
    rep=$((rep + 1))
    if [ $SECONDS -gt ${REPLAY_UNTIL:-400} ]; then echo "replay $b#$rep skipped at ${SECONDS}s"; continue; fi
    LAYA_MODEL="$M" LAYA_LEXICON="$S/en.tsv" timeout 90 "$S/$b" bench --replay --chars 500 --out "$W/replay-$b-$rep.json" \
      >"$W/replay-$b-$rep.txt" 2>&1 || echo "replay: exit $?"
    echo "replay $b#$rep at ${SECONDS}s: $(grep -E 'ghost text, per|suggestions shown' "$W/replay-$b-$rep.txt" | tr -s ' ' | tr '\n' ' ')"
    snap
  done
}
case " $steps " in *" replay "*) replays "${REPLAY_SEQ:-${bins[*]}}" ;; esac
case " $steps " in *" 8b "*)
  if [ $SECONDS -gt ${B8_UNTIL:-430} ]; then echo "8b skipped at ${SECONDS}s"; else
  timeout 150 python3 bench/random_checkpoint.py --shape qwen3-8b --tokenizer bench/tokenizer-bytes-384.json --out /root/qwen3-8b >/dev/null || echo "checkpoint: exit $?"
  for rep in ${REPS8B:-1}; do
    for b in ${B8_BINS:-${bins[@]}}; do
      timeout 100 "$S/$b" bench --model /root/qwen3-8b --peers none --reps 20 --only decode_64,decode_512,score_8 \
        --out "$W/qwen3-8b-$b-$rep.json" >"$W/qwen3-8b-$b-$rep.txt" 2>&1 || echo "bench 8b $b: exit $?"
      show "$W/qwen3-8b-$b-$rep.json" "8b $b#$rep"
    done
    snap
  done; fi ;;
esac
case " $steps " in *" replay "*) replays "${REPLAY_SEQ2:-}" ;; esac
echo "done at ${SECONDS}s"; uptime
