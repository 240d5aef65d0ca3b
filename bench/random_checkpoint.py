"""Writes an mlx-lm checkpoint folder of a given model *shape* with random 4-bit weights, for
timing on machines where the real model cannot travel (DESIGN.md: the device tool carries 64 MiB
per call). Needs only mlx. The numbers it produces are timings, never quality.

    python3 bench/random_checkpoint.py --shape qwen3-8b --tokenizer tokenizer.json --out DIR
"""
import argparse
import json
import shutil
from pathlib import Path

SHAPES = {
    # Qwen3 as mlx-community publishes it (Qwen3-0.6B-4bit, Qwen3-8B-4bit): group 64, 4 bits.
    "qwen3-0.6b": dict(hidden_size=1024, num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8,
                       head_dim=128, intermediate_size=3072, vocab_size=151936, tie_word_embeddings=True),
    "qwen3-8b": dict(hidden_size=4096, num_hidden_layers=36, num_attention_heads=32, num_key_value_heads=8,
                     head_dim=128, intermediate_size=12288, vocab_size=151936, tie_word_embeddings=False),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), required=True)
    ap.add_argument("--tokenizer", required=True, help="a tokenizer.json to copy (any vocabulary up to the shape's)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--group-size", type=int, default=64)
    a = ap.parse_args()
    import mlx.core as mx

    s = SHAPES[a.shape]
    h, inter, hd = s["hidden_size"], s["intermediate_size"], s["head_dim"]
    q, kv = s["num_attention_heads"] * hd, s["num_key_value_heads"] * hd
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    mx.random.seed(0)
    weights = {}

    def quantized(name: str, rows: int, cols: int) -> None:
        w = mx.random.normal((rows, cols), dtype=mx.float16) * 0.02
        wq, sc, bi = mx.quantize(w, group_size=a.group_size, bits=a.bits)
        weights[f"{name}.weight"], weights[f"{name}.scales"], weights[f"{name}.biases"] = wq, sc, bi
        mx.eval(wq, sc, bi)

    def norm(name: str, n: int) -> None:
        weights[f"{name}.weight"] = mx.ones((n,), dtype=mx.float16)

    quantized("model.embed_tokens", s["vocab_size"], h)
    for i in range(s["num_hidden_layers"]):
        p = f"model.layers.{i}"
        for proj, rows in (("q_proj", q), ("k_proj", kv), ("v_proj", kv)):
            quantized(f"{p}.self_attn.{proj}", rows, h)
        quantized(f"{p}.self_attn.o_proj", h, q)
        norm(f"{p}.self_attn.q_norm", hd)
        norm(f"{p}.self_attn.k_norm", hd)
        quantized(f"{p}.mlp.gate_proj", inter, h)
        quantized(f"{p}.mlp.up_proj", inter, h)
        quantized(f"{p}.mlp.down_proj", h, inter)
        norm(f"{p}.input_layernorm", h)
        norm(f"{p}.post_attention_layernorm", h)
    norm("model.norm", h)
    if not s["tie_word_embeddings"]:
        quantized("lm_head", s["vocab_size"], h)
    mx.save_safetensors(str(out / "model.safetensors"), weights)
    config = dict(model_type="qwen3", rms_norm_eps=1e-6, rope_theta=1000000.0, max_position_embeddings=40960,
                  quantization={"group_size": a.group_size, "bits": a.bits}, **s)
    (out / "config.json").write_text(json.dumps(config, indent=1))
    shutil.copy(a.tokenizer, out / "tokenizer.json")
    print(json.dumps({"out": str(out), "shape": a.shape, "bytes": sum(f.stat().st_size for f in out.iterdir())}))


if __name__ == "__main__":
    main()
