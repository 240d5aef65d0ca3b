#!/usr/bin/env python3
"""Python reference for Laya's Rust engine: what the Rust parity tests compare against.

Subcommands (run `mlx_reference.py SUBCOMMAND --help` for the options):

  logits           full forward of a model (GGUF file or mlx-lm checkpoint folder) on token ids with
                   MLX's CPU backend through mlx-lm's model classes; writes [seq, vocab] float32 LE.
  make-checkpoint  writes a tiny, deterministic, random-weight mlx-lm checkpoint (config.json,
                   model.safetensors, tokenizer.json, tokenizer_config.json) for llama/qwen2/qwen3.
  tokenize         reference tokenization of texts with a GGUF's tokenizer through llama.cpp
                   (llama-cpp-python, vocab only): an implementation independent of the Rust
                   `tokenizers` crate.

`logits` and `make-checkpoint` need the venv made by scripts/bootstrap-pyref.sh (.deps/pyref);
`tokenize` needs the one made by tests/reference/build-llamacpp.sh (.deps/llamacpp). Each subcommand
imports only what it needs, so the script runs under either venv.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from pathlib import Path

# --------------------------------------------------------------------------------------------------
# Shared helpers


def die(msg: str) -> "None":
    print(f"mlx_reference: error: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_tokens(s: str) -> list[int]:
    try:
        ids = [int(t) for t in s.replace(" ", "").split(",") if t != ""]
    except ValueError:
        die(f"--tokens must be comma-separated integers, got {s!r}")
    if not ids:
        die("--tokens is empty")
    return ids


def import_mlx():
    try:
        import mlx.core as mx
        import mlx.nn as nn
    except ImportError as e:  # pragma: no cover - environment problem
        die(f"cannot import mlx ({e}); run scripts/bootstrap-pyref.sh and use .deps/pyref/bin/python")
    mx.set_default_device(mx.cpu)
    return mx, nn


def dtype_name(dt) -> str:
    return str(dt).rsplit(".", 1)[-1]


# --------------------------------------------------------------------------------------------------
# GGUF -> mlx-lm llama model

# GGUF tensor name (after "blk.N.") -> mlx-lm module path (after "model.layers.N.")
GGUF_LAYER_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}
GGUF_TOP_NAMES = {
    "token_embd": "model.embed_tokens",
    "output_norm": "model.norm",
    "output": "lm_head",
}
QUANT_PARTS = ("weight", "scales", "biases", "bias")


def gguf_scalar(md: dict, key: str, default=None):
    """GGUF metadata values come back from mx.load as 0-d arrays, strings or lists."""
    if key not in md:
        return default
    v = md[key]
    if hasattr(v, "item"):
        return v.item()
    return v


def gguf_name_to_mlx(name: str) -> str:
    parts = name.split(".")
    if parts[0] == "blk":
        if len(parts) != 4 or parts[2] not in GGUF_LAYER_NAMES or parts[3] not in QUANT_PARTS:
            raise KeyError(name)
        return f"model.layers.{parts[1]}.{GGUF_LAYER_NAMES[parts[2]]}.{parts[3]}"
    if len(parts) != 2 or parts[0] not in GGUF_TOP_NAMES or parts[1] not in QUANT_PARTS:
        raise KeyError(name)
    return f"{GGUF_TOP_NAMES[parts[0]]}.{parts[1]}"


def infer_quant(path: str, module, weights: dict) -> dict | bool:
    """Per-tensor affine quantization parameters from the shapes of a loaded triple.

    With in_dims the unquantized input width (from the float module), a packed uint32 weight of
    width W and scales of width S: group_size = in_dims / S and bits = 32 * W / in_dims.
    """
    if f"{path}.scales" not in weights:
        return False  # stays a float layer (e.g. a GGUF tensor MLX dequantized on load)
    in_dims = module.weight.shape[-1]
    w, s = weights[f"{path}.weight"], weights[f"{path}.scales"]
    if in_dims % s.shape[-1] or (32 * w.shape[-1]) % in_dims:
        raise ValueError(f"{path}: weight {w.shape} / scales {s.shape} do not fit in_dims {in_dims}")
    group_size = in_dims // s.shape[-1]
    bits = 32 * w.shape[-1] // in_dims
    if bits not in (2, 3, 4, 5, 6, 8):
        raise ValueError(f"{path}: inferred {bits} bits (weight {w.shape}, in_dims {in_dims})")
    return {"group_size": group_size, "bits": bits, "mode": "affine"}


def load_gguf(path: Path, rope_traditional: bool | None):
    mx, nn = import_mlx()
    from mlx_lm.models import llama

    tensors, md = mx.load(str(path), return_metadata=True)
    arch = gguf_scalar(md, "general.architecture")
    if arch != "llama":
        die(f"{path}: GGUF architecture {arch!r} is not supported here (only 'llama')")

    def need(key):
        v = gguf_scalar(md, key)
        if v is None:
            die(f"{path}: GGUF metadata {key} is missing")
        return v

    n_heads = int(need("llama.attention.head_count"))
    hidden = int(need("llama.embedding_length"))
    vocab = gguf_scalar(md, "llama.vocab_size")
    if vocab is None:
        vocab = len(md["tokenizer.ggml.tokens"])
    head_dim = gguf_scalar(md, "llama.attention.key_length") or gguf_scalar(
        md, "llama.rope.dimension_count"
    ) or hidden // n_heads
    tied = "output.weight" not in tensors
    args = llama.ModelArgs(
        model_type="llama",
        hidden_size=hidden,
        num_hidden_layers=int(need("llama.block_count")),
        intermediate_size=int(need("llama.feed_forward_length")),
        num_attention_heads=n_heads,
        num_key_value_heads=int(gguf_scalar(md, "llama.attention.head_count_kv", n_heads)),
        head_dim=int(head_dim),
        rms_norm_eps=float(need("llama.attention.layer_norm_rms_epsilon")),
        vocab_size=int(vocab),
        rope_theta=float(gguf_scalar(md, "llama.rope.freq_base", 10000.0)),
        # GGUF stores Llama's Q/K rows permuted for llama.cpp's interleaved rope.
        rope_traditional=True if rope_traditional is None else rope_traditional,
        max_position_embeddings=gguf_scalar(md, "llama.context_length"),
        tie_word_embeddings=tied,
    )
    if gguf_scalar(md, "llama.rope.scaling.type") not in (None, "none"):
        die(f"{path}: rope scaling is not supported by this reference")
    model = llama.Model(args)

    weights = {}
    for name, arr in tensors.items():
        try:
            weights[gguf_name_to_mlx(name)] = arr
        except KeyError:
            die(f"{path}: unexpected GGUF tensor {name!r} {arr.shape}")

    quant = {}

    def predicate(p, m):
        if not hasattr(m, "to_quantized"):
            return False
        q = infer_quant(p, m, weights)
        if q:
            quant[p] = q
        return q

    nn.quantize(model, class_predicate=predicate)
    model.eval()
    model.load_weights(list(weights.items()), strict=True)
    mx.eval(model.parameters())
    info = {
        "source": "gguf",
        "rope_traditional": args.rope_traditional,
        "quantization": summarize_quant(quant),
    }
    return model, info


def summarize_quant(quant: dict) -> dict:
    """{"bits=4,group_size=32": n_layers, ...} plus the embedding's setting."""
    out: dict = {}
    for p, q in quant.items():
        key = f"bits={q['bits']},group_size={q['group_size']}"
        out[key] = out.get(key, 0) + 1
    return out


def load_checkpoint(path: Path, rope_traditional: bool | None):
    import_mlx()
    from mlx_lm.utils import load_model

    if not (path / "config.json").is_file():
        die(f"{path}: no config.json (expected an mlx-lm checkpoint folder or a .gguf file)")
    model, config = load_model(path, strict=True)
    rt = None
    for layer in model.layers:
        rope = layer.self_attn.rope
        if rope_traditional is not None:
            rope.traditional = rope_traditional
        rt = getattr(rope, "traditional", None)
    q = config.get("quantization") or {}
    return model, {
        "source": "checkpoint",
        "model_type": config.get("model_type"),
        "rope_traditional": rt,
        "quantization": {k: q[k] for k in ("bits", "group_size") if k in q},
    }


def cast_floats(model, dtype):
    mx, _ = import_mlx()
    from mlx.utils import tree_map

    def f(a):
        return a.astype(dtype) if mx.issubdtype(a.dtype, mx.floating) else a

    model.update(tree_map(f, model.parameters()))
    mx.eval(model.parameters())


def cmd_logits(a) -> None:
    path = Path(a.model)
    ids = parse_tokens(a.tokens)
    rt = {"auto": None, "true": True, "false": False}[a.rope_traditional]
    if path.is_dir():
        model, info = load_checkpoint(path, rt)
    elif path.is_file():
        model, info = load_gguf(path, rt)
    else:
        die(f"{path}: no such file or folder")
    mx, _ = import_mlx()
    if a.float32:
        cast_floats(model, mx.float32)
    vocab = model.args.vocab_size
    if max(ids) >= vocab or min(ids) < 0:
        die(f"token id out of range [0, {vocab})")

    x = mx.array([ids], dtype=mx.int32)
    ids_all = ids
    if a.tail and hasattr(model, "model"):
        # The head on the last positions only: all of a long text's would take minutes.
        h = model.model(x)[:, -a.tail:]
        logits = (model.lm_head(h) if "lm_head" in model else model.model.embed_tokens.as_linear(h))[0]
        ids = ids[-a.tail:]
    else:
        logits = model(x)[0]  # [seq, vocab]
    mx.eval(logits)
    act_dtype = dtype_name(logits.dtype)
    l32 = logits.astype(mx.float32)
    logp = l32 - mx.logsumexp(l32, axis=-1, keepdims=True)
    argmax_last = int(mx.argmax(l32[-1]).item())
    out = {
        "seq": len(ids_all),
        "vocab": int(l32.shape[-1]),
        "argmax_last": argmax_last,
        "p_argmax_last": float(mx.exp(logp[-1, argmax_last]).item()),
        "dtype": act_dtype,
    }
    if len(ids) > 1:
        # mean negative log-likelihood of tokens[1:] given their prefixes
        tgt = mx.array(ids[1:], dtype=mx.int32)
        nll = -mx.take_along_axis(logp[:-1], tgt[:, None], axis=-1).mean()
        out["nll_mean"] = float(nll.item())
    out.update(info)
    import numpy as np

    arr = np.asarray(l32, dtype=np.float32)
    assert arr.shape == (len(ids), out["vocab"])
    if a.tail:
        arr = arr[-a.tail:]  # a long text's logits would be gigabytes
        out["tail"] = int(arr.shape[0])
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    arr.astype("<f4").tofile(a.out)
    print(json.dumps(out))


# --------------------------------------------------------------------------------------------------
# make-checkpoint

# Training text for the tiny tokenizer (written for this project; no third-party text).
TOKENIZER_TEXT = """\
Laya is a small code completion engine. It reads the text around the cursor, runs a language model
and offers the most likely continuation before the user has finished typing. The model is quantized
to four bits so that it fits in memory and answers quickly, even on a laptop without a graphics card.

The quick brown fox jumps over the lazy dog. The five boxing wizards jump quickly. A journey of a
thousand miles begins with a single step, and a program of a thousand lines begins with one function.
In 2026 the team measured 3.14 ms per token on one machine and 90 ms on another; numbers like 42,
1024 and 65536 appear in code all the time, as do dates such as 2025-12-31 and times like 10:30.

def add(a, b):
    return a + b

fn main() {
    let xs: Vec<i32> = (0..10).map(|x| x * x).collect();
    println!("{:?}", xs);
}

for (int i = 0; i < n; i++) { total += values[i]; }
if (err != nil) { return fmt.Errorf("open %s: %w", path, err) }
const url = "https://example.com/api/v1/items?id=7&sort=desc";

She said, "It's late, isn't it?" He answered: "We'll see; they're not here yet, and I'd rather wait."
Weather today: sunny, light wind from the west, high of 21 degrees. Tomorrow: rain in the evening.
The committee will meet on Monday to review the proposal, the budget and the schedule for next year.
Every line of this paragraph exists only to give the tokenizer a few common English words and pieces
of source code, so that the merges it learns look like the merges of a real model, only much smaller.
Café, naïve, résumé and jalapeño keep their accents; 東京 and 🙂 stay as bytes.
"""

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Qwen2/Qwen3's pre-tokenizer split pattern (as in their tokenizer.json), used for those archs.
QWEN_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

ARCHS = {
    # llama: SmolLM2 / Llama-style; untied lm_head so that a separate output projection is exercised.
    "llama": dict(
        model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, intermediate_size=128, rope_theta=10000.0,
        rms_norm_eps=1e-5, tie_word_embeddings=False, max_position_embeddings=2048,
        hidden_act="silu", attention_bias=False, mlp_bias=False,
    ),
    # qwen2: q/k/v projections carry biases; tied embeddings.
    "qwen2": dict(
        model_type="qwen2", architectures=["Qwen2ForCausalLM"], hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, intermediate_size=128, rope_theta=1000000.0,
        rms_norm_eps=1e-6, tie_word_embeddings=True, max_position_embeddings=2048,
        hidden_act="silu",
    ),
    # qwen3: explicit head_dim (heads*head_dim != hidden_size) and q/k RMSNorm; tied embeddings.
    "qwen3": dict(
        model_type="qwen3", architectures=["Qwen3ForCausalLM"], hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32, intermediate_size=128,
        rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True,
        max_position_embeddings=2048, hidden_act="silu", attention_bias=False,
    ),
}


def train_tokenizer(arch: str, vocab_size: int):
    try:
        from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
        from tokenizers import processors, trainers
    except ImportError as e:
        die(f"cannot import tokenizers ({e}); run scripts/bootstrap-pyref.sh")
    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    if arch == "llama":
        # SmolLM2's: each digit on its own, then GPT-2's byte-level regex.
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
        ])
    else:
        # Qwen's: NFC, a split regex, then byte-level without its own regex.
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(TOKENIZER_TEXT.splitlines(keepends=True), trainer=trainer)
    return tok


def init_params(model, seed: int):
    """Deterministic random weights with a scale that keeps the logits well spread."""
    mx, _ = import_mlx()
    from mlx.utils import tree_flatten, tree_unflatten

    params = sorted(tree_flatten(model.parameters()))
    keys = mx.random.split(mx.random.key(seed), len(params))
    new = []
    # Scales chosen so that the logits spread (std ~1.5-2) and depend on the context: with larger
    # tied embeddings the residual stream is dominated by the input token, which then wins argmax.
    for k, (name, p) in zip(keys, params):
        if name.endswith("norm.weight"):  # RMSNorm gains around 1, not all equal
            v = 1.0 + 0.1 * mx.random.normal(p.shape, key=k)
        elif name.endswith(".bias"):
            v = 0.1 * mx.random.normal(p.shape, key=k)
        elif "embed_tokens" in name:
            v = 0.25 * mx.random.normal(p.shape, key=k)
        else:  # linear weights [out, in]
            v = mx.random.normal(p.shape, key=k) * (1.5 / math.sqrt(p.shape[-1]))
        new.append((name, v.astype(mx.float32)))
    model.update(tree_unflatten(new))
    mx.eval(model.parameters())


def cmd_make_checkpoint(a) -> None:
    mx, nn = import_mlx()
    from mlx_lm.utils import _get_classes, quantize_model, save_config, save_model

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    tok = train_tokenizer(a.arch, a.vocab_size)
    n_tok = tok.get_vocab_size(with_added_tokens=True)
    eos_id = tok.token_to_id("<|endoftext|>")
    im_end = tok.token_to_id("<|im_end|>")

    config = dict(ARCHS[a.arch])
    config.update(vocab_size=n_tok, bos_token_id=eos_id, eos_token_id=eos_id, torch_dtype=a.dtype)
    model_class, args_class = _get_classes(config)
    model = model_class(args_class.from_dict(config))
    init_params(model, a.seed)
    dt = getattr(mx, a.dtype)
    cast_floats(model, dt)  # mlx-community checkpoints keep the source dtype (mostly bfloat16)
    with contextlib.redirect_stdout(sys.stderr):  # quantize_model prints an [INFO] line
        model, config = quantize_model(model, config, group_size=a.group_size, bits=a.bits)
    mx.eval(model.parameters())

    # Check that the logits are not all alike before writing anything.
    ids = tok.encode("The quick brown fox jumps over the lazy dog.").ids
    logits = model(mx.array([ids]))[0].astype(mx.float32)
    std = float(logits.std(axis=-1).mean().item())
    distinct = len(set(mx.argmax(logits, axis=-1).tolist()))
    if not (std > 0.3 and distinct > 1):
        die(f"random logits are too flat (std {std:.3f}, {distinct} distinct argmax)")

    save_model(out, model)
    save_config(config, out / "config.json")
    tok.save(str(out / "tokenizer.json"))
    # Re-serialise deterministically (tokenizers' writer is, but make key order explicit).
    tj = json.loads((out / "tokenizer.json").read_text())
    (out / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False, indent=2) + "\n")
    tok_cfg = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": None,
        "eos_token": "<|endoftext|>",
        "pad_token": "<|endoftext|>",
        "unk_token": None,
        "add_bos_token": False,
        "add_prefix_space": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": config["max_position_embeddings"],
        "chat_template": CHAT_TEMPLATE,
        "added_tokens_decoder": {
            str(tok.token_to_id(t)): {
                "content": t, "lstrip": False, "normalized": False, "rstrip": False,
                "single_word": False, "special": True,
            }
            for t in SPECIAL_TOKENS
        },
    }
    (out / "tokenizer_config.json").write_text(json.dumps(tok_cfg, indent=2) + "\n")
    gen = {"bos_token_id": eos_id, "eos_token_id": [eos_id, im_end]}
    (out / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")

    # What was written must load back through mlx-lm and give the same logits.
    from mlx_lm.utils import load_model
    from tokenizers import Tokenizer

    reloaded, _ = load_model(out, strict=True)
    again = reloaded(mx.array([ids]))[0].astype(mx.float32)
    if not mx.array_equal(again, logits).item():
        die(f"{out}: the reloaded checkpoint gives different logits")
    if Tokenizer.from_file(str(out / "tokenizer.json")).encode(TOKENIZER_TEXT).ids != \
            tok.encode(TOKENIZER_TEXT).ids:
        die(f"{out}: the reloaded tokenizer encodes differently")

    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    print(json.dumps({
        "out": str(out), "arch": a.arch, "bits": a.bits, "group_size": a.group_size,
        "seed": a.seed, "dtype": a.dtype, "vocab": n_tok, "bytes": size,
        "logit_std": round(std, 4),
    }))


# --------------------------------------------------------------------------------------------------
# tokenize (llama.cpp reference)


def cmd_tokenize(a) -> None:
    try:
        import llama_cpp
    except ImportError as e:
        die(f"cannot import llama_cpp ({e}); run tests/reference/build-llamacpp.sh and use "
            ".deps/llamacpp/bin/python")
    texts = json.loads(Path(a.texts_file).read_text(encoding="utf-8"))
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        die(f"{a.texts_file}: expected a JSON list of strings")
    llm = llama_cpp.Llama(model_path=a.model, vocab_only=True, verbose=False)
    out = []
    for t in texts:
        ids = llm.tokenize(t.encode("utf-8"), add_bos=False, special=True)
        out.append(list(ids))
        # The round trip through llama.cpp's detokenizer must give the text back.
        back = llm.detokenize(ids, special=True).decode("utf-8", errors="replace")
        if back != t:
            print(f"mlx_reference: warning: llama.cpp does not round-trip {t!r} -> {back!r}",
                  file=sys.stderr)
    if a.with_text:
        # One {"text", "ids"} object per line inside the list: reviewable diffs.
        rows = [json.dumps({"text": t, "ids": ids}, ensure_ascii=False) for t, ids in zip(texts, out)]
        print("[\n" + ",\n".join(rows) + "\n]")
    else:
        print(json.dumps(out))


# --------------------------------------------------------------------------------------------------


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="mlx_reference.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("logits", help="full-forward logits of a model on token ids")
    s.add_argument("--model", required=True, help="a .gguf file or an mlx-lm checkpoint folder")
    s.add_argument("--tokens", required=True, help="comma-separated token ids, e.g. 1,2,3")
    s.add_argument("--out", required=True, help="output file: [seq, vocab] float32 little-endian")
    s.add_argument("--rope-traditional", choices=["auto", "true", "false"], default="auto",
                   help="override the rope layout (auto: true for GGUF, the config's for checkpoints)")
    s.add_argument("--float32", action="store_true",
                   help="cast every float parameter (scales, biases, norms) to float32 first, so "
                        "the activations are float32 too")
    s.add_argument("--tail", type=int, default=0,
                   help="write only the logits of the last N positions (0: all)")
    s.set_defaults(func=cmd_logits)

    s = sub.add_parser("make-checkpoint", help="write a tiny random-weight mlx-lm checkpoint")
    s.add_argument("--arch", required=True, choices=sorted(ARCHS))
    s.add_argument("--bits", type=int, choices=[4, 8], default=4)
    s.add_argument("--group-size", type=int, choices=[32, 64], default=64)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--out", required=True, help="output folder (created)")
    s.add_argument("--dtype", choices=["bfloat16", "float16", "float32"], default="bfloat16",
                   help="dtype of the float tensors (scales, biases, norms); mlx-community "
                        "checkpoints are mostly bfloat16")
    s.add_argument("--vocab-size", type=int, default=384,
                   help="target tokenizer vocab (256 bytes + specials + merges)")
    s.set_defaults(func=cmd_make_checkpoint)

    s = sub.add_parser("tokenize", help="reference tokenization through llama.cpp")
    s.add_argument("--model", required=True, help="a .gguf file (only its vocab is loaded)")
    s.add_argument("--texts-file", required=True, help="JSON list of strings")
    s.add_argument("--with-text", action="store_true",
                   help='print [{"text": ..., "ids": [...]}, ...] (the fixture format) instead of '
                        "a list of id lists")
    s.set_defaults(func=cmd_tokenize)

    a = p.parse_args(argv)
    a.func(a)


if __name__ == "__main__":
    main()
