//! Text without a model or a protocol: the open document (a rope with LSP positions, its
//! paragraphs, sentences and context windows), what counts as a word character and as prose,
//! where the word being typed at the end of a text starts, and how a text splits around it.

pub mod document;

pub use document::{Document, Edit, Position, PositionEncoding, Range, TextError};

mod prose;
pub use prose::{code_pieces, is_prose_at, prose_mask, words, ProseMask};

mod script;
pub use script::{dominant_script, has_other_script, is_spaceless, script_of, Script};

/// Paragraphs of a text (runs of non-blank lines; a blank line is empty or whitespace only):
/// (first char index, text with its line breaks), in order.
pub fn paragraphs(text: &str) -> Vec<(usize, String)> {
    let mut out = vec![];
    let mut cur: Option<(usize, String)> = None;
    let mut at = 0usize;
    for line in text.split_inclusive('\n') {
        let n = line.chars().count();
        if line.trim().is_empty() {
            if let Some(p) = cur.take() {
                out.push(p);
            }
        } else {
            match &mut cur {
                Some((_, t)) => t.push_str(line),
                None => cur = Some((at, line.to_string())),
            }
        }
        at += n;
    }
    out.extend(cur);
    out
}

/// Letters, digits, and the apostrophes inside words ("don't", "l’été").
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '\'' || c == '’'
}

/// True when every char of `s` is a word char (and `s` is not empty).
pub fn is_word(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_word_char)
}

/// How a text ends, as seen by completion: the context to condition on and the characters
/// the continuation must start with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorSplit<'a> {
    /// Text before the word being typed (and before the single space that leads it).
    pub context: &'a str,
    /// What follows `context` up to the cursor: " Par", "Par", " " or "".
    pub typed: &'a str,
    /// The word characters of `typed` ("Par"; empty after a space or punctuation).
    pub word: &'a str,
}

/// Splits `text` (the text before the cursor) so that a model can continue it at a word
/// boundary: subword tokenizers attach the leading space to the word (" Paris"), so the
/// context stops before that space and the typed characters become a constraint. In scripts
/// written without spaces (Chinese, Japanese, Thai) the last character is the word being typed:
/// it may be the first of a word the tokenizer keeps whole ("共" of "共和国"), and a context cut
/// inside such a token reads to the model like nothing it has seen.
pub fn split_at_cursor(text: &str) -> CursorSplit<'_> {
    if let Some((i, c)) = text.char_indices().next_back().filter(|&(_, c)| is_spaceless(c) && is_word_char(c)) {
        return CursorSplit { context: &text[..i], typed: &text[i..i + c.len_utf8()], word: &text[i..] };
    }
    let word_start = text.char_indices().rev().take_while(|&(_, c)| is_word_char(c) && !is_spaceless(c)).last().map_or(text.len(), |(i, _)| i);
    let word = &text[word_start..];
    // A leading apostrophe is a quote mark, not part of the word.
    let (word_start, word) = match word.strip_prefix(['\'', '’']) {
        Some(rest) => (text.len() - rest.len(), rest),
        None => (word_start, word),
    };
    let start = if text[..word_start].ends_with(' ') { word_start - 1 } else { word_start };
    CursorSplit { context: &text[..start], typed: &text[start..], word }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(t: &str) -> (&str, &str, &str) {
        let s = split_at_cursor(t);
        (s.context, s.typed, s.word)
    }

    #[test]
    fn mid_word_backs_off_to_the_leading_space() {
        assert_eq!(split("The capital of France is Par"), ("The capital of France is", " Par", "Par"));
    }

    #[test]
    fn after_a_space_the_space_is_the_constraint() {
        assert_eq!(split("Hello "), ("Hello", " ", ""));
        assert_eq!(split("Hello  "), ("Hello ", " ", ""));
    }

    #[test]
    fn after_punctuation_or_newline_nothing_is_typed() {
        assert_eq!(split("Hello,"), ("Hello,", "", ""));
        assert_eq!(split("Hello\n"), ("Hello\n", "", ""));
        assert_eq!(split(""), ("", "", ""));
    }

    #[test]
    fn a_word_at_the_start_or_after_a_newline_has_no_space() {
        assert_eq!(split("Hel"), ("", "Hel", "Hel"));
        assert_eq!(split("a\nHel"), ("a\n", "Hel", "Hel"));
    }

    #[test]
    fn apostrophes_inside_words_and_multibyte_letters() {
        assert_eq!(split("I don't kn"), ("I don't", " kn", "kn"));
        assert_eq!(split("I don'"), ("I", " don'", "don'"));
        assert_eq!(split("c'est l’é"), ("c'est", " l’é", "l’é"));
        assert_eq!(split("He said 'hel"), ("He said '", "hel", "hel"));
        assert_eq!(split("Grüße aus Mün"), ("Grüße aus", " Mün", "Mün"));
    }

    #[test]
    fn text_without_spaces_has_no_word_being_typed() {
        assert_eq!(split("中华人民共"), ("中华人民", "共", "共"));
        assert_eq!(split("今天天气真好，"), ("今天天气真好，", "", ""));
        assert_eq!(split("我们用Rus"), ("我们用", "Rus", "Rus"));
        assert_eq!(split("𠀋"), ("", "𠀋", "𠀋"));
    }
}
