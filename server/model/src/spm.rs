//! The SentencePiece tokenizer of GGUF files whose `tokenizer.ggml.model` is "llama" (Gemma,
//! Llama 2, Mistral): its vocabulary, scores and token types from the metadata, the encoding
//! llama.cpp's `llm_tokenizer_spm` does (special and user-defined tokens first, then score-ordered
//! merges of characters, bytes for the rest) and the decoding back to text.
//!
//! Encoding a text:
//! 1. Control, unknown and user-defined tokens (`<start_of_turn>`, runs of newlines or spaces,
//!    `</div>`) are cut out of the text first, the longest tokens first, each one at its leftmost
//!    places, as llama.cpp's `tokenizer_st_partition` does.
//! 2. Each piece of plain text between them has its spaces replaced by '▁' (U+2581), and a '▁'
//!    put before it when the model asks for a space prefix and the piece starts the text or
//!    follows a special token.
//! 3. The piece is split into characters; the adjacent pair whose concatenation is a token with
//!    the highest score is merged (the leftmost on ties), again and again, through a priority
//!    queue of candidate pairs, until no pair makes a token.
//! 4. A symbol that is a token gives its id; one that is not (a character outside the
//!    vocabulary) gives the byte tokens `<0xNN>` of its UTF-8 bytes.
//!
//! Decoding reads every '▁' as a space, so a text that holds U+2581 itself does not come back
//! unchanged (as with SentencePiece everywhere).
//!
//! One deliberate difference from llama.cpp: merges never produce byte, control or unknown
//! tokens. llama.cpp looks merge results up among all tokens, so the literal text "<0x41>" becomes
//! the byte token for 'A' there (and decodes to "A"); SentencePiece, which the models were trained
//! with, only merges into normal and user-defined pieces, as here.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use ahash::AHashMap;

/// GGUF token types (llama.cpp's `llama_token_type`).
const NORMAL: u8 = 1;
const UNKNOWN: u8 = 2;
const CONTROL: u8 = 3;
const USER_DEFINED: u8 = 4;
const UNUSED: u8 = 5;
const BYTE: u8 = 6;

const SPACE_MARK: char = '\u{2581}';

/// A SentencePiece vocabulary, ready to encode and decode.
pub(crate) struct Spm {
    /// Token texts by id, as stored ('▁' for spaces).
    texts: Vec<String>,
    scores: Vec<f32>,
    types: Vec<u8>,
    /// Text -> id over all tokens (the last id wins on duplicates, as in llama.cpp).
    ids: AHashMap<String, u32>,
    /// The token of each byte value (`<0xNN>`, else the byte alone), else the unknown token.
    bytes: [u32; 256],
    specials: SpecialMatcher,
    add_space_prefix: bool,
}

impl std::fmt::Debug for Spm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spm").field("vocab", &self.texts.len()).finish()
    }
}

impl Spm {
    /// Builds the tokenizer from the GGUF arrays `tokenizer.ggml.tokens`, `.scores` and
    /// `.token_type` (types as integers: 1 normal, 2 unknown, 3 control, 4 user-defined,
    /// 5 unused, 6 byte). Fails with a sentence when they disagree or a byte has no token.
    pub(crate) fn new(texts: Vec<String>, scores: Vec<f32>, types: Vec<u8>, unk: Option<u32>, add_space_prefix: bool) -> Result<Self, String> {
        let n = texts.len();
        if scores.len() != n || types.len() != n {
            return Err(format!("{n} tokens but {} scores and {} token types", scores.len(), types.len()));
        }
        if n > u32::MAX as usize / 2 {
            return Err(format!("{n} tokens is too many"));
        }
        let mut ids = AHashMap::with_capacity(n);
        for (id, t) in texts.iter().enumerate() {
            ids.insert(t.clone(), id as u32);
        }
        let unk = unk.filter(|&u| (u as usize) < n).or_else(|| types.iter().position(|&t| t == UNKNOWN).map(|u| u as u32));
        let mut bytes = [0u32; 256];
        for (b, slot) in bytes.iter_mut().enumerate() {
            let hex = format!("<0x{b:02X}>");
            let alone = (b < 0x80).then(|| (b as u8 as char).to_string());
            *slot = ids
                .get(&hex)
                .or_else(|| alone.as_ref().and_then(|a| ids.get(a)))
                .copied()
                .or(unk)
                .ok_or_else(|| format!("byte 0x{b:02X} has no token ({hex}) and there is no unknown token"))?;
        }
        let specials = SpecialMatcher::new(
            texts
                .iter()
                .zip(&types)
                .enumerate()
                .filter_map(|(id, (t, &ty))| matches!(ty, CONTROL | UNKNOWN | USER_DEFINED).then_some((id as u32, t.as_str()))),
        );
        Ok(Self { texts, scores, types, ids, bytes, specials, add_space_prefix })
    }

    pub(crate) fn vocab_size(&self) -> usize {
        self.texts.len()
    }

    /// Control and unknown tokens: markers, never prose.
    pub(crate) fn control_ids(&self) -> Vec<u32> {
        (0..self.texts.len() as u32).filter(|&id| matches!(self.types[id as usize], CONTROL | UNKNOWN)).collect()
    }

    /// The id of a token's exact text (stored form: '▁' for spaces, `<0x41>` for bytes).
    pub(crate) fn id_of(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    /// The ids of `text`, special tokens matched in it, without BOS.
    pub(crate) fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        let mut prev_special = true;
        let mut piece = String::new();
        for seg in self.specials.partition(text) {
            match seg {
                Segment::Token(id) => {
                    out.push(id);
                    prev_special = true;
                }
                Segment::Text(range) => {
                    piece.clear();
                    if self.add_space_prefix && prev_special {
                        piece.push(SPACE_MARK);
                    }
                    for c in text[range].chars() {
                        piece.push(if c == ' ' { SPACE_MARK } else { c });
                    }
                    self.merge(&piece, &mut out);
                    prev_special = false;
                }
            }
        }
        out
    }

    /// Whether a merge may produce this token: normal and user-defined pieces (SentencePiece's
    /// own rule), never bytes, control or unknown tokens.
    fn mergeable(&self, id: u32) -> bool {
        matches!(self.types[id as usize], NORMAL | USER_DEFINED | UNUSED)
    }

    /// llama.cpp's `llm_tokenizer_spm_session::tokenize` on one escaped piece of text.
    fn merge(&self, text: &str, out: &mut Vec<u32>) {
        if text.is_empty() {
            return;
        }
        let mut syms: Vec<Symbol> = Vec::with_capacity(text.len());
        let mut offsets = text.char_indices().map(|(i, _)| i as u32).peekable();
        while let Some(start) = offsets.next() {
            let end = offsets.peek().copied().unwrap_or(text.len() as u32);
            let i = syms.len() as i32;
            syms.push(Symbol { start, len: end - start, prev: i - 1, next: if end as usize == text.len() { -1 } else { i + 1 } });
        }
        let mut queue = BinaryHeap::with_capacity(syms.len());
        let bigram = |syms: &[Symbol], left: i32, right: i32| -> Option<Bigram> {
            if left < 0 || right < 0 {
                return None;
            }
            let (l, r) = (&syms[left as usize], &syms[right as usize]);
            let piece = &text[l.start as usize..(l.start + l.len + r.len) as usize];
            let id = *self.ids.get(piece)?;
            self.mergeable(id).then(|| Bigram { score: self.scores[id as usize], left: left as u32, right: right as u32, size: l.len + r.len })
        };
        for i in 1..syms.len() as i32 {
            queue.extend(bigram(&syms, i - 1, i));
        }
        while let Some(b) = queue.pop() {
            let (l, r) = (syms[b.left as usize], syms[b.right as usize]);
            // One side was merged into something else since this pair was queued.
            if l.len == 0 || r.len == 0 || l.len + r.len != b.size {
                continue;
            }
            syms[b.left as usize].len += r.len;
            syms[b.right as usize].len = 0;
            syms[b.left as usize].next = r.next;
            if r.next >= 0 {
                syms[r.next as usize].prev = b.left as i32;
            }
            queue.extend(bigram(&syms, l.prev, b.left as i32));
            queue.extend(bigram(&syms, b.left as i32, r.next));
        }
        let mut i = 0i32;
        while i >= 0 {
            let s = syms[i as usize];
            let piece = &text[s.start as usize..(s.start + s.len) as usize];
            // A merged symbol is a token; a single character may be none (then: its bytes).
            match self.ids.get(piece) {
                Some(&id) => out.push(id),
                None => out.extend(piece.bytes().map(|b| self.bytes[b as usize])),
            }
            i = s.next;
        }
    }

    /// The text of `ids`: '▁' read as a space, byte tokens joined into UTF-8 (invalid sequences
    /// become U+FFFD), control tokens written as their text.
    pub(crate) fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        let mut buf = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            let i = id as usize;
            let (Some(text), Some(&ty)) = (self.texts.get(i), self.types.get(i)) else { return Err(id) };
            match ty {
                BYTE => buf.push(byte_of(text).unwrap_or(b'?')),
                CONTROL | UNKNOWN => buf.extend_from_slice(text.as_bytes()),
                _ => {
                    for (i, part) in text.split(SPACE_MARK).enumerate() {
                        if i > 0 {
                            buf.push(b' ');
                        }
                        buf.extend_from_slice(part.as_bytes());
                    }
                }
            }
        }
        Ok(match String::from_utf8(buf) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }
}

/// The byte a `<0xNN>` token stands for.
fn byte_of(text: &str) -> Option<u8> {
    let hex = text.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

#[derive(Clone, Copy)]
struct Symbol {
    start: u32,
    /// Bytes; 0 once merged into the symbol on its left.
    len: u32,
    prev: i32,
    next: i32,
}

/// A candidate merge. The queue's top is the highest score, the leftmost pair on ties.
struct Bigram {
    score: f32,
    left: u32,
    right: u32,
    size: u32,
}

impl Ord for Bigram {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score.total_cmp(&other.score).then_with(|| other.left.cmp(&self.left))
    }
}
impl PartialOrd for Bigram {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Bigram {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Bigram {}

#[derive(Debug, PartialEq)]
enum Segment {
    Token(u32),
    Text(std::ops::Range<usize>),
}

/// Finds special and user-defined tokens in text. llama.cpp takes these tokens longest first
/// and cuts each out at its leftmost non-overlapping places in the text not yet cut; all their
/// occurrences are found in one pass over a byte trie and then accepted in that order.
struct SpecialMatcher {
    /// Trie edges: (node, byte) -> node; node 0 is the root.
    edges: AHashMap<(u32, u8), u32>,
    /// The rank of the token ending at each node: ranks order tokens by length, longest first.
    ends: Vec<Option<u32>>,
    /// Token ids by rank.
    ids: Vec<u32>,
    /// Bytes that start some token.
    first: [bool; 256],
    /// Token lengths by rank.
    lens: Vec<u32>,
}

impl SpecialMatcher {
    fn new<'a>(tokens: impl Iterator<Item = (u32, &'a str)>) -> Self {
        let mut tokens: Vec<(u32, &str)> = tokens.filter(|(_, t)| !t.is_empty()).collect();
        // llama.cpp sorts by length only (std::sort); equal lengths go by id here.
        tokens.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        let mut m = Self {
            edges: AHashMap::new(),
            ends: vec![None],
            ids: Vec::with_capacity(tokens.len()),
            first: [false; 256],
            lens: Vec::with_capacity(tokens.len()),
        };
        for (rank, (id, text)) in tokens.iter().enumerate() {
            m.first[text.as_bytes()[0] as usize] = true;
            let mut node = 0u32;
            for &b in text.as_bytes() {
                let next = m.ends.len() as u32;
                node = *m.edges.entry((node, b)).or_insert_with(|| next);
                if node == next {
                    m.ends.push(None);
                }
            }
            // Two tokens with the same text: the first (longest-first, then lowest id) wins.
            m.ends[node as usize].get_or_insert(rank as u32);
            m.lens.push(text.len() as u32);
            m.ids.push(*id);
        }
        m
    }

    /// The text cut into special tokens and the plain text between them, in order.
    fn partition(&self, text: &str) -> Vec<Segment> {
        let bytes = text.as_bytes();
        // Every occurrence of every token, by rank (starts ascending within each).
        let mut found: Vec<Vec<u32>> = Vec::new();
        let mut any = false;
        for start in 0..bytes.len() {
            if !self.first[bytes[start] as usize] {
                continue;
            }
            let mut node = 0u32;
            for &b in &bytes[start..] {
                match self.edges.get(&(node, b)) {
                    Some(&n) => node = n,
                    None => break,
                }
                if let Some(rank) = self.ends[node as usize] {
                    if found.is_empty() {
                        found.resize_with(self.lens.len(), Vec::new);
                    }
                    found[rank as usize].push(start as u32);
                    any = true;
                }
            }
        }
        if !any {
            return if text.is_empty() { vec![] } else { vec![Segment::Text(0..text.len())] };
        }
        let mut taken = vec![false; bytes.len()];
        let mut accepted: Vec<(u32, u32, u32)> = Vec::new(); // (start, end, id)
        for (rank, starts) in found.iter().enumerate() {
            let len = self.lens[rank];
            let mut free_from = 0u32; // the end of this token's last accepted occurrence
            for &start in starts {
                let end = start + len;
                if start < free_from || taken[start as usize..end as usize].iter().any(|&t| t) {
                    continue;
                }
                taken[start as usize..end as usize].fill(true);
                accepted.push((start, end, self.ids[rank]));
                free_from = end;
            }
        }
        accepted.sort_unstable();
        let mut out = Vec::with_capacity(accepted.len() * 2 + 1);
        let mut at = 0usize;
        for (start, end, id) in accepted {
            if start as usize > at {
                out.push(Segment::Text(at..start as usize));
            }
            out.push(Segment::Token(id));
            at = end as usize;
        }
        if at < text.len() {
            out.push(Segment::Text(at..text.len()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made vocabulary: (text, score, type).
    fn spm(vocab: &[(&str, f32, u8)], space_prefix: bool) -> Spm {
        let mut texts: Vec<String> = vocab.iter().map(|v| v.0.to_string()).collect();
        let mut scores: Vec<f32> = vocab.iter().map(|v| v.1).collect();
        let mut types: Vec<u8> = vocab.iter().map(|v| v.2).collect();
        for b in 0..=255u8 {
            texts.push(format!("<0x{b:02X}>"));
            scores.push(0.0);
            types.push(BYTE);
        }
        Spm::new(texts, scores, types, None, space_prefix).unwrap()
    }

    fn byte(s: &Spm, b: u8) -> u32 {
        s.id_of(&format!("<0x{b:02X}>")).unwrap()
    }

    const VOCAB: &[(&str, f32, u8)] = &[
        ("<unk>", 0.0, UNKNOWN),         // 0
        ("<bos>", 0.0, CONTROL),         // 1
        ("a", -1.0, NORMAL),             // 2
        ("b", -1.0, NORMAL),             // 3
        ("c", -1.0, NORMAL),             // 4
        ("ab", -5.0, NORMAL),            // 5
        ("bc", -2.0, NORMAL),            // 6
        ("abc", -3.0, NORMAL),           // 7
        ("\u{2581}", -1.0, NORMAL),      // 8
        ("\u{2581}a", -4.0, NORMAL),     // 9
        ("\n\n", -1000.0, USER_DEFINED), // 10
        ("\n", -1000.0, USER_DEFINED),   // 11
        ("<", -1.0, NORMAL),             // 12
        ("0", -1.0, NORMAL),             // 13
        ("x", -1.0, NORMAL),             // 14
        ("4", -1.0, NORMAL),             // 15
        ("1", -1.0, NORMAL),             // 16
        (">", -1.0, NORMAL),             // 17
        ("<0", -1.0, NORMAL),            // 18
        ("<0x", -1.0, NORMAL),           // 19
        ("<0x4", -1.0, NORMAL),          // 20
        ("1>", -1.0, NORMAL),            // 21
    ];

    #[test]
    fn the_best_scoring_pair_merges_first() {
        let s = spm(VOCAB, false);
        // "bc" (-2) beats "ab" (-5); then "a"+"bc" makes "abc".
        assert_eq!(s.encode("abc"), vec![7]);
        // "ab" alone: nothing better.
        assert_eq!(s.encode("ab"), vec![5]);
        // "abab": both "ab" pairs, leftmost first; "abab" is no token.
        assert_eq!(s.encode("abab"), vec![5, 5]);
        // "bcbc": "bc" twice; the middle "cb" is no token.
        assert_eq!(s.encode("bcbc"), vec![6, 6]);
    }

    #[test]
    fn ties_merge_the_leftmost_pair() {
        // "xy" and "yz" score the same: "xyz" -> "xy", "z".
        let s = spm(&[("x", -1.0, NORMAL), ("y", -1.0, NORMAL), ("z", -1.0, NORMAL), ("xy", -2.0, NORMAL), ("yz", -2.0, NORMAL)], false);
        assert_eq!(s.encode("xyz"), vec![3, 2]);
    }

    #[test]
    fn spaces_become_the_space_mark_and_the_prefix_is_optional() {
        let s = spm(VOCAB, false);
        assert_eq!(s.encode("a a"), vec![2, 9]);
        assert_eq!(s.decode(&[2, 9]).unwrap(), "a a");
        let p = spm(VOCAB, true);
        assert_eq!(p.encode("a"), vec![9]);
        // After a special token the prefix comes again.
        assert_eq!(p.encode("a<bos>a"), vec![9, 1, 9]);
    }

    #[test]
    fn unknown_characters_fall_back_to_their_utf8_bytes() {
        let s = spm(VOCAB, false);
        let ids = s.encode("a中b");
        let want: Vec<u32> = std::iter::once(2).chain("中".bytes().map(|b| byte(&s, b))).chain(std::iter::once(3)).collect();
        assert_eq!(ids, want);
        assert_eq!(s.decode(&ids).unwrap(), "a中b");
        // A lone continuation byte or a cut sequence decodes to U+FFFD.
        assert_eq!(s.decode(&want[1..3]).unwrap(), "\u{FFFD}");
        let emoji = s.encode("🙂");
        assert_eq!(emoji.len(), 4);
        assert_eq!(s.decode(&emoji).unwrap(), "🙂");
    }

    #[test]
    fn user_defined_and_control_tokens_are_cut_out_first_longest_first() {
        let s = spm(VOCAB, false);
        assert_eq!(s.encode("a\n\n\nb"), vec![2, 10, 11, 3]);
        assert_eq!(s.encode("\n\n\n\n"), vec![10, 10]);
        // "b<bos>c" would never merge "b" with "<" here; the control token is one id.
        assert_eq!(s.encode("ab<bos>bc"), vec![5, 1, 6]);
        assert_eq!(s.decode(&[5, 1, 6]).unwrap(), "ab<bos>bc");
    }

    #[test]
    fn merges_never_make_byte_tokens() {
        let s = spm(VOCAB, false);
        // "<0x41>" would be the byte 'A' in llama.cpp; here it stays text and round-trips.
        let ids = s.encode("<0x41>");
        assert!(!ids.contains(&byte(&s, 0x41)), "{ids:?}");
        assert_eq!(s.decode(&ids).unwrap(), "<0x41>");
    }

    #[test]
    fn special_tokens_longest_first_then_leftmost() {
        // llama.cpp order: the longer "bcd" is cut first even though "ab" starts further left.
        let m = SpecialMatcher::new([(0, "ab"), (1, "bcd")].into_iter());
        assert_eq!(m.partition("abcd"), vec![Segment::Text(0..1), Segment::Token(1)]);
        assert_eq!(m.partition("abab"), vec![Segment::Token(0), Segment::Token(0)]);
        assert_eq!(m.partition(""), vec![]);
        assert_eq!(m.partition("xyz"), vec![Segment::Text(0..3)]);
    }

    #[test]
    fn empty_text_has_no_tokens() {
        assert_eq!(spm(VOCAB, false).encode(""), Vec::<u32>::new());
        assert_eq!(spm(VOCAB, true).encode(""), Vec::<u32>::new());
    }
}
