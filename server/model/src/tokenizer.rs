//! The tokenizer: built from a GGUF file's metadata (byte-level BPE from its tokens and merges,
//! with the pre-tokenizer its `tokenizer.ggml.pre` names, through the `tokenizers` crate; or
//! SentencePiece from its tokens, scores and types, in `spm.rs`) or read from an mlx-lm folder's
//! `tokenizer.json` (the `tokenizers` crate); special tokens are matched in text.

use std::path::Path;

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{AddedToken, SplitDelimiterBehavior};

use crate::error::{ModelError, Result};
use crate::gguf::{GgufHeader, Value};
use crate::spm::Spm;

/// GGUF `tokenizer.ggml.pre` values Laya knows how to pre-tokenize, with their split regexes.
/// The regexes are those the model families were trained with (GPT-2, Llama 3, Qwen 2).
const QWEN2_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const LLAMA3_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
pub const SUPPORTED_PRE: &str = "gpt2, smollm, qwen2, llama-bpe";

/// GGUF token types (llama.cpp's `llama_token_type`).
const TOKEN_CONTROL: u64 = 3;
const TOKEN_USER_DEFINED: u64 = 4;

pub struct Tokenizer {
    backend: Backend,
    /// Ids that are control tokens (never part of prose: `<|im_start|>`, `<|endoftext|>`), sorted.
    special: Vec<u32>,
    eos: Option<u32>,
    /// The token every sequence starts with, where the model wants one (Gemma's `<bos>`).
    bos: Option<u32>,
    /// The tokens every sequence begins with (see [`Tokenizer::start`]).
    start: Vec<u32>,
    /// The largest id + 1 (asking `tokenizers` builds its whole vocabulary map each time).
    vocab_size: usize,
    /// The id of [`PROBE`] alone, when it is one token (see [`Tokenizer::encode_prefix`]).
    probe: Option<u32>,
}

/// The two ways text becomes ids.
enum Backend {
    /// Byte-level BPE (GGUF "gpt2") and every `tokenizer.json`.
    Hf(Box<tokenizers::Tokenizer>),
    /// SentencePiece (GGUF "llama": Gemma, Llama 2).
    Spm(Box<Spm>),
}

/// A letter appended to a text to see how its end is tokenized when a word follows.
const PROBE: &str = "A";

/// What a model with no start token reads before a document: without it SmolLM2 takes a
/// text's first words for the middle of something ("Right now, ..." scored as "Right know"; after
/// "They", "was not sure" 4.7 nats likelier than "were not sure", and 6.2 nats less likely after
/// "\n\nThey"). See docs/benchmarks.md ("A paragraph break before every text").
const PARAGRAPH_BREAK: &str = "\n\n";

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer").field("vocab", &self.vocab_size()).finish()
    }
}

impl Tokenizer {
    /// Builds the tokenizer a GGUF file describes.
    pub fn from_gguf(path: &Path, header: &GgufHeader) -> Result<Self> {
        let err = |reason: String| ModelError::Tokenizer { path: path.to_path_buf(), reason };
        let model = header.str("tokenizer.ggml.model").unwrap_or("(none)");
        match model {
            "gpt2" => {}
            "llama" => return Self::spm_from_gguf(path, header),
            _ => {
                return Err(err(format!(
                    "tokenizer model {model:?} is not supported; Laya reads byte-level BPE (\"gpt2\") and \
                     SentencePiece (\"llama\") tokenizers from GGUF files"
                )))
            }
        }
        let tokens = header.strings("tokenizer.ggml.tokens").ok_or_else(|| err("tokenizer.ggml.tokens is missing".into()))?;
        let merges = header.strings("tokenizer.ggml.merges").ok_or_else(|| err("tokenizer.ggml.merges is missing".into()))?;
        let types: Vec<u64> = match header.get("tokenizer.ggml.token_type").and_then(|v| v.as_array()) {
            Some(a) => a.iter().map(|v| v.as_u64().unwrap_or(1)).collect(),
            None => vec![1; tokens.len()],
        };
        if types.len() != tokens.len() {
            return Err(err(format!("{} token types for {} tokens", types.len(), tokens.len())));
        }

        let mut vocab = ahash::AHashMap::with_capacity(tokens.len());
        for (id, t) in tokens.iter().enumerate() {
            // Duplicate strings happen in some conversions; the first id wins, as in llama.cpp.
            vocab.entry(t.to_string()).or_insert(id as u32);
        }
        let mut pairs = Vec::with_capacity(merges.len());
        for m in &merges {
            let (a, b) = m.split_once(' ').ok_or_else(|| err(format!("merge {m:?} has no space")))?;
            if !vocab.contains_key(a) || !vocab.contains_key(b) || !vocab.contains_key(&format!("{a}{b}")) {
                return Err(err(format!("merge {m:?} uses tokens that are not in the vocabulary")));
            }
            pairs.push((a.to_string(), b.to_string()));
        }
        let bpe = BPE::builder().vocab_and_merges(vocab, pairs).build().map_err(|e| err(format!("building BPE: {e}")))?;

        let pre = header.str("tokenizer.ggml.pre").unwrap_or("gpt2");
        let byte_level = |use_regex| PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, use_regex));
        let split = |re: &str| -> Result<PreTokenizerWrapper> {
            let s = Split::new(SplitPattern::Regex(re.into()), SplitDelimiterBehavior::Isolated, false)
                .map_err(|e| err(format!("pre-tokenizer regex: {e}")))?;
            Ok(PreTokenizerWrapper::Split(s))
        };
        let pre_tokenizer = match pre {
            "gpt2" | "default" => byte_level(true),
            "smollm" => Sequence::new(vec![Digits::new(true).into(), byte_level(true)]).into(),
            "qwen2" => Sequence::new(vec![split(QWEN2_SPLIT)?, byte_level(false)]).into(),
            "llama-bpe" | "llama3" => Sequence::new(vec![split(LLAMA3_SPLIT)?, byte_level(false)]).into(),
            other => return Err(err(format!("pre-tokenizer {other:?} is not supported (supported: {SUPPORTED_PRE})"))),
        };

        let mut inner = tokenizers::Tokenizer::new(bpe);
        inner.with_pre_tokenizer(Some(pre_tokenizer));
        inner.with_decoder(Some(ByteLevelDecoder::default()));

        let mut special = Vec::new();
        let mut added = Vec::new();
        for (id, (t, ty)) in tokens.iter().zip(&types).enumerate() {
            match *ty {
                TOKEN_CONTROL => {
                    special.push(id as u32);
                    added.push(AddedToken::from(t.to_string(), true));
                }
                TOKEN_USER_DEFINED => added.push(AddedToken::from(t.to_string(), false).normalized(false)),
                _ => {}
            }
        }
        // Added tokens already in the vocabulary keep their ids.
        inner.add_special_tokens(&added.iter().filter(|a| a.special).cloned().collect::<Vec<_>>());
        inner.add_tokens(&added.iter().filter(|a| !a.special).cloned().collect::<Vec<_>>());

        let eos = header.u64("tokenizer.ggml.eos_token_id").map(|v| v as u32);
        // No BOS: byte-level BPE models run without a start token (see Tokenizer::start).
        Ok(Self::new(Backend::Hf(Box::new(inner)), special, eos, None))
    }

    /// A SentencePiece tokenizer from `tokenizer.ggml.tokens`, `.scores` and `.token_type`.
    fn spm_from_gguf(path: &Path, header: &GgufHeader) -> Result<Self> {
        let err = |reason: String| ModelError::Tokenizer { path: path.to_path_buf(), reason };
        let tokens = header.strings("tokenizer.ggml.tokens").ok_or_else(|| err("tokenizer.ggml.tokens is missing".into()))?;
        let n = tokens.len();
        let scores: Vec<f32> = match header.get("tokenizer.ggml.scores").and_then(|v| v.as_array()) {
            Some(a) => a
                .iter()
                .map(|v| v.as_f64().map(|f| f as f32))
                .collect::<Option<_>>()
                .ok_or_else(|| err("tokenizer.ggml.scores holds non-numbers".into()))?,
            None => return Err(err("tokenizer.ggml.scores is missing (a SentencePiece vocabulary needs its scores)".into())),
        };
        let types: Vec<u8> = match header.get("tokenizer.ggml.token_type").and_then(|v| v.as_array()) {
            Some(a) => a.iter().map(|v| v.as_u64().map_or(1, |t| t.min(255) as u8)).collect(),
            None => vec![1; n],
        };
        let flag = |key: &str, default: bool| match header.get(key) {
            Some(Value::Bool(b)) => *b,
            Some(v) => v.as_u64().map_or(default, |x| x != 0),
            None => default,
        };
        let id = |key: &str| header.u64(key).filter(|&v| (v as usize) < n).map(|v| v as u32);
        let unk = id("tokenizer.ggml.unknown_token_id");
        // llama.cpp's defaults for SentencePiece: a space prefix and a BOS unless the file says no.
        let spm = Spm::new(tokens.iter().map(|t| t.to_string()).collect(), scores, types, unk, flag("tokenizer.ggml.add_space_prefix", true))
            .map_err(err)?;
        let special = spm.control_ids();
        let bos = id("tokenizer.ggml.bos_token_id").filter(|_| flag("tokenizer.ggml.add_bos_token", true));
        Ok(Self::new(Backend::Spm(Box::new(spm)), special, id("tokenizer.ggml.eos_token_id"), bos))
    }

    fn new(backend: Backend, mut special: Vec<u32>, eos: Option<u32>, bos: Option<u32>) -> Self {
        special.sort_unstable();
        special.dedup();
        let vocab_size = match &backend {
            Backend::Hf(inner) => inner.get_vocab(true).values().max().map_or(0, |&m| m as usize + 1),
            Backend::Spm(spm) => spm.vocab_size(),
        };
        let mut tok = Self { backend, special, eos, bos, start: vec![], vocab_size, probe: None };
        tok.start = match bos {
            Some(bos) => vec![bos],
            None => tok.encode(PARAGRAPH_BREAK).unwrap_or_default(),
        };
        tok.probe = match tok.encode(PROBE) {
            Ok(ids) if ids.len() == 1 => Some(ids[0]),
            _ => None,
        };
        tok
    }

    /// Reads an mlx-lm / Hugging Face `tokenizer.json`.
    pub fn from_file(path: &Path, eos: Option<u32>) -> Result<Self> {
        let inner = tokenizers::Tokenizer::from_file(path)
            .map_err(|e| ModelError::Tokenizer { path: path.to_path_buf(), reason: format!("cannot read tokenizer.json: {e}") })?;
        let special = inner.get_added_tokens_decoder().iter().filter(|(_, t)| t.special).map(|(id, _)| *id).collect();
        Ok(Self::new(Backend::Hf(Box::new(inner)), special, eos, None))
    }

    /// The ids of `text`, special tokens matched in it, never a BOS (see [`Tokenizer::bos`]).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        match &self.backend {
            Backend::Hf(inner) => {
                let enc = inner.encode_fast(text, false).map_err(|e| ModelError::Input(format!("tokenizing: {e}")))?;
                Ok(enc.get_ids().to_vec())
            }
            Backend::Spm(spm) => Ok(spm.encode(text)),
        }
    }

    /// The tokens of `text` as the beginning of a longer text: what a context to be continued is
    /// encoded as. They differ from [`Tokenizer::encode`]'s only where `text` ends in white
    /// space that the pre-tokenizer splits differently before a word: GPT-2's regex keeps a
    /// final "\n\n" as one token but gives "\n", "\n" before "You". The model has seen only
    /// the second form before a word, and a cache holding the first must be cut back once a
    /// letter is typed. Found by encoding `text` with a letter after it, so that it holds for
    /// whatever pre-tokenizer the model has.
    pub fn encode_prefix(&self, text: &str) -> Result<Vec<u32>> {
        let Some(probe) = self.probe.filter(|_| text.ends_with(char::is_whitespace)) else {
            return self.encode(text);
        };
        let mut ids = self.encode(&format!("{text}{PROBE}"))?;
        // The probe joined the text's end (" A" after a space): no split to learn from.
        if ids.pop() != Some(probe) {
            return self.encode(text);
        }
        Ok(ids)
    }

    /// The text of `ids`; special tokens are written as their text.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        match &self.backend {
            Backend::Hf(inner) => inner.decode(ids, false).map_err(|e| ModelError::Input(format!("detokenizing: {e}"))),
            Backend::Spm(spm) => spm.decode(ids).map_err(|id| ModelError::TokenOutOfRange { id, vocab: self.vocab_size }),
        }
    }

    /// The text of a single token, as it would appear in the output (bytes joined, spaces real).
    pub fn token_text(&self, id: u32) -> Result<String> {
        self.decode(&[id])
    }

    /// Number of ids the tokenizer can produce (the largest id + 1).
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.special.binary_search(&id).is_ok()
    }

    pub fn special_ids(&self) -> &[u32] {
        &self.special
    }

    pub fn eos(&self) -> Option<u32> {
        self.eos
    }

    /// The token a sequence must start with, where the model was trained with one (GGUF
    /// `tokenizer.ggml.bos_token_id` with `add_bos_token`, true by default for SentencePiece:
    /// Gemma's `<bos>`). None for byte-level BPE models, which Laya runs without one.
    pub fn bos(&self) -> Option<u32> {
        self.bos
    }

    /// The id of a token's exact text as the vocabulary stores it.
    pub fn id_of(&self, token: &str) -> Option<u32> {
        match &self.backend {
            Backend::Hf(inner) => inner.token_to_id(token),
            Backend::Spm(spm) => spm.id_of(token),
        }
    }

    /// The tokens every sequence begins with, before a document's first character: the start
    /// token the model asks for (Gemma's `<bos>`), or, for a model that asks for none (SmolLM2's
    /// byte-level BPE), a paragraph break ("\n\n", `PARAGRAPH_BREAK`).
    pub fn start(&self) -> &[u32] {
        &self.start
    }

    /// The tokens of `text` as the start of a sequence to be continued: [`Tokenizer::start`]
    /// then [`Tokenizer::encode_prefix`]. Every context the model reads is encoded so, so that
    /// caches of the same document share their tokens from the first.
    pub fn encode_context(&self, text: &str) -> Result<Vec<u32>> {
        Ok([&self.start[..], &self.encode_prefix(text)?].concat())
    }

    /// The tokens of `text` as a whole sequence: [`Tokenizer::start`] then [`Tokenizer::encode`].
    pub fn encode_document(&self, text: &str) -> Result<Vec<u32>> {
        Ok([&self.start[..], &self.encode(text)?].concat())
    }
}
