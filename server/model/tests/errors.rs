//! Every bad model input gets a clear error naming the file and the problem — never a panic:
//! missing files, files that are not models, truncated or corrupt files, unsupported
//! architectures and quantizations, tokenizers that do not match the vocabulary.

mod common;
use common::*;
use laya_model::{KvCache, Model, ModelError};
use std::path::Path;

fn load_err(path: &Path) -> (ModelError, String) {
    let e = Model::load(path).err().expect("loading must fail");
    let msg = e.to_string();
    (e, msg)
}

/// A minimal GGUF v3 file: `meta` string/u32 pairs, then tensor infos (name, dims, ggml type).
fn write_gguf(path: &Path, meta: &[(&str, Meta)], tensors: &[(&str, &[u64], u32)]) {
    fn s(out: &mut Vec<u8>, v: &str) {
        out.extend((v.len() as u64).to_le_bytes());
        out.extend(v.as_bytes());
    }
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend((tensors.len() as u64).to_le_bytes());
    b.extend((meta.len() as u64).to_le_bytes());
    for (k, v) in meta {
        s(&mut b, k);
        match v {
            Meta::Str(v) => {
                b.extend(8u32.to_le_bytes());
                s(&mut b, v);
            }
            Meta::U32(v) => {
                b.extend(4u32.to_le_bytes());
                b.extend(v.to_le_bytes());
            }
        }
    }
    for (name, dims, ty) in tensors {
        s(&mut b, name);
        b.extend((dims.len() as u32).to_le_bytes());
        for d in *dims {
            b.extend(d.to_le_bytes());
        }
        b.extend(ty.to_le_bytes());
        b.extend(0u64.to_le_bytes());
    }
    b.resize(b.len().div_ceil(32) * 32 + 4096, 0);
    std::fs::write(path, b).unwrap();
}

enum Meta {
    Str(&'static str),
    U32(u32),
}

#[test]
fn a_missing_file_says_so() {
    let (e, msg) = load_err(Path::new("/nonexistent/model.gguf"));
    assert!(matches!(e, ModelError::NotFound { .. }), "{e:?}");
    assert!(msg.contains("/nonexistent/model.gguf") && msg.contains("does not exist"), "{msg}");
}

#[test]
fn a_file_that_is_not_a_model_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.gguf");
    std::fs::write(&p, "just some text, not a model").unwrap();
    let (e, msg) = load_err(&p);
    assert!(matches!(e, ModelError::Corrupt { .. }), "{e:?}");
    assert!(msg.contains("not a GGUF file"), "{msg}");
}

#[test]
fn a_truncated_download_is_caught_before_mlx_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read(default_model_path()).unwrap();
    for keep in [16usize, 4096, 2_000_000, real.len() / 2, real.len() - 1] {
        let p = dir.path().join(format!("cut-{keep}.gguf"));
        std::fs::write(&p, &real[..keep]).unwrap();
        let (e, msg) = load_err(&p);
        assert!(matches!(e, ModelError::Corrupt { .. }), "{keep}: {e:?}");
        assert!(msg.contains("file ends") || msg.contains("truncated"), "{keep}: {msg}");
    }
}

#[test]
fn absurd_counts_are_rejected_without_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.gguf");
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend((1u64 << 60).to_le_bytes());
    b.extend((1u64 << 60).to_le_bytes());
    std::fs::write(&p, b).unwrap();
    let (e, msg) = load_err(&p);
    assert!(matches!(e, ModelError::Corrupt { .. }), "{e:?}: {msg}");
}

#[test]
fn an_unsupported_architecture_names_what_is_supported() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("gpt2.gguf");
    write_gguf(&p, &[("general.architecture", Meta::Str("gpt2"))], &[]);
    let (e, msg) = load_err(&p);
    assert!(matches!(e, ModelError::UnsupportedArchitecture { .. }), "{e:?}");
    assert!(msg.contains("\"gpt2\"") && msg.contains("llama"), "{msg}");
}

#[test]
fn an_unsupported_quantization_says_how_to_convert() {
    let dir = tempfile::tempdir().unwrap();
    // 16: IQ2_XXS, an i-quant (a codebook, not an affine grid).
    let p = dir.path().join("iq2.gguf");
    write_gguf(&p, &[("general.architecture", Meta::Str("llama")), ("llama.block_count", Meta::U32(1))], &[("blk.0.attn_q.weight", &[256, 256], 16)]);
    let (e, msg) = load_err(&p);
    assert!(matches!(e, ModelError::UnsupportedQuantization { .. }), "{e:?}");
    assert!(msg.contains("blk.0.attn_q.weight") && msg.contains("IQ") && msg.contains("Q4_K") && msg.contains("llama-quantize"), "{msg}");
}

#[test]
fn a_gguf_without_a_byte_level_tokenizer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("spm.gguf");
    let meta = [
        ("general.architecture", Meta::Str("llama")),
        ("llama.block_count", Meta::U32(1)),
        ("llama.embedding_length", Meta::U32(64)),
        ("llama.feed_forward_length", Meta::U32(128)),
        ("llama.attention.head_count", Meta::U32(4)),
        ("llama.context_length", Meta::U32(128)),
        ("llama.vocab_size", Meta::U32(32000)),
        ("tokenizer.ggml.model", Meta::Str("llama")),
    ];
    write_gguf(&p, &meta, &[]);
    let (e, msg) = load_err(&p);
    assert!(matches!(e, ModelError::Tokenizer { .. }), "{e:?}");
    // SentencePiece is read since spm.rs; a file that says so but has no vocabulary is refused.
    assert!(msg.contains("tokenizer.ggml.tokens is missing"), "{msg}");
}

#[test]
fn mlx_lm_folders_report_what_is_wrong() {
    let _mlx = mlx_lock();
    // No config.json at all.
    let empty = tempfile::tempdir().unwrap();
    let (e, msg) = load_err(empty.path());
    assert!(matches!(e, ModelError::NotFound { .. }) && msg.contains("config.json"), "{msg}");

    // An architecture Laya does not run.
    let dir = make_checkpoint("llama", 4, 64, 1);
    let config_path = dir.path().join("config.json");
    let config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    let write = |c: &serde_json::Value| std::fs::write(&config_path, c.to_string()).unwrap();
    let mut c = config.clone();
    c["model_type"] = "gemma3".into();
    write(&c);
    let (e, msg) = load_err(dir.path());
    assert!(matches!(e, ModelError::UnsupportedArchitecture { .. }), "{e:?}");
    assert!(msg.contains("gemma3") && msg.contains("qwen3"), "{msg}");

    // A tokenizer with more tokens than the model has rows.
    let mut c = config.clone();
    c["vocab_size"] = 100.into();
    write(&c);
    let (e, msg) = load_err(dir.path());
    assert!(matches!(e, ModelError::Tokenizer { .. }) && msg.contains("do not belong together"), "{msg}");

    // A truncated weights file.
    write(&config);
    let st = dir.path().join("model.safetensors");
    let bytes = std::fs::read(&st).unwrap();
    std::fs::write(&st, &bytes[..bytes.len() - 100]).unwrap();
    let (e, msg) = load_err(dir.path());
    assert!(matches!(e, ModelError::Corrupt { .. }) && msg.contains("truncated"), "{msg}");

    // A missing tensor (weights of another shape of model).
    std::fs::write(&st, &bytes).unwrap();
    let mut c = config.clone();
    c["num_hidden_layers"] = 3.into();
    write(&c);
    let (e, msg) = load_err(dir.path());
    assert!(matches!(e, ModelError::MissingTensor { .. }) && msg.contains("layers.2"), "{msg}");

    // A missing tokenizer.
    write(&config);
    std::fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
    let (e, msg) = load_err(dir.path());
    assert!(matches!(e, ModelError::NotFound { .. }) && msg.contains("tokenizer.json"), "{msg}");
}

#[test]
fn bad_inputs_to_a_loaded_model_are_errors() {
    let _mlx = mlx_lock();
    let dir = make_checkpoint("qwen3", 4, 32, 2);
    let config_path = dir.path().join("config.json");
    let mut c: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    c["max_position_embeddings"] = 16.into();
    std::fs::write(&config_path, c.to_string()).unwrap();
    let model = Model::load(dir.path()).unwrap();
    let mut cache = KvCache::new();

    let e = model.prefill(&mut cache, &[5, 1_000_000]).unwrap_err();
    assert!(matches!(e, ModelError::TokenOutOfRange { id: 1_000_000, .. }), "{e:?}");
    let e = model.prefill(&mut cache, &[]).unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    let e = model.prefill(&mut cache, &[5; 17]).unwrap_err();
    assert!(e.to_string().contains("context of 16"), "{e}");
    assert!(model.score(&KvCache::new(), &[vec![1]]).is_err(), "scoring needs a context");
    model.prefill(&mut cache, &[5, 6, 7]).unwrap();
    assert!(model.score(&cache, &[vec![]]).is_err(), "an empty candidate");
    assert!(model.forward(&[vec![1, 2], vec![3]], &mut KvCache::new()).is_err(), "ragged batch");
}
