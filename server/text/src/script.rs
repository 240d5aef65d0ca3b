//! Writing systems: which script a character or a text is written in, whether that script
//! puts spaces between words, and so which kind of model a text needs.

/// The scripts Laya tells apart. Latin text goes to the default (English) model; the others
/// need a multilingual one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Script {
    Latin,
    /// Chinese characters (also Japanese kanji).
    Han,
    /// Japanese hiragana and katakana.
    Kana,
    Hangul,
    Cyrillic,
    Greek,
    Arabic,
    Hebrew,
    Devanagari,
    Thai,
    /// Letters of any other script.
    Other,
}

impl Script {
    /// Whether words of this script are written without spaces between them: a word then ends
    /// wherever the next one begins, and "the word being typed" is only what a tokenizer says.
    pub fn is_spaceless(self) -> bool {
        matches!(self, Script::Han | Script::Kana | Script::Thai)
    }

    /// Whether an English model serves text of this script. Latin covers more than English,
    /// but the default model and lexicon are English, and its spelling checks know no other.
    pub fn is_latin(self) -> bool {
        self == Script::Latin
    }
}

/// The script of one character, or None for what is in none (digits, punctuation, spaces,
/// symbols and emoji).
pub fn script_of(c: char) -> Option<Script> {
    let u = c as u32;
    let s = match u {
        0x41..=0x5A | 0x61..=0x7A | 0xC0..=0x24F | 0x1E00..=0x1EFF | 0xFF21..=0xFF3A | 0xFF41..=0xFF5A => Script::Latin,
        0x370..=0x3FF | 0x1F00..=0x1FFF => Script::Greek,
        0x400..=0x52F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => Script::Cyrillic,
        0x590..=0x5FF | 0xFB1D..=0xFB4F => Script::Hebrew,
        0x600..=0x6FF | 0x750..=0x77F | 0x8A0..=0x8FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => Script::Arabic,
        0x900..=0x97F => Script::Devanagari,
        0xE00..=0xE7F => Script::Thai,
        0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF => Script::Hangul,
        0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => Script::Kana,
        0x2E80..=0x2FDF | 0x3005..=0x3007 | 0x3021..=0x3029 | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3134F => Script::Han,
        _ if c.is_alphabetic() => Script::Other,
        _ => return None,
    };
    Some(s)
}

/// Whether any letter of `word` is in a script other than Latin (what an English lexicon has no
/// say over).
pub fn has_other_script(word: &str) -> bool {
    word.chars().any(|c| script_of(c).is_some_and(|s| !s.is_latin()))
}

/// Whether `c` belongs to a script written without spaces between words.
pub fn is_spaceless(c: char) -> bool {
    script_of(c).is_some_and(Script::is_spaceless)
}

/// The script most of `text`'s letters are in (Han and Kana count together as Japanese when
/// any kana is present), or None for a text without letters. Only the first 4,096 letters are
/// looked at: a document's script is clear long before its end.
pub fn dominant_script(text: &str) -> Option<Script> {
    let mut counts: Vec<(Script, usize)> = Vec::new();
    for s in text.chars().filter_map(script_of).take(4096) {
        match counts.iter_mut().find(|(k, _)| *k == s) {
            Some((_, n)) => *n += 1,
            None => counts.push((s, 1)),
        }
    }
    let count = |s| counts.iter().find(|(k, _)| *k == s).map_or(0, |(_, n)| *n);
    // A Chinese character costs one letter where a Latin word costs five: weigh by that, so a
    // Chinese text with English names in it is still Chinese.
    let weight = |s: Script, n: usize| if s.is_spaceless() || s == Script::Hangul { n * 4 } else { n };
    let (best, _) = counts.iter().map(|&(s, n)| (s, weight(s, n))).max_by_key(|&(_, w)| w)?;
    Some(if best == Script::Han && count(Script::Kana) > 0 { Script::Kana } else { best })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_of_characters() {
        assert_eq!(script_of('a'), Some(Script::Latin));
        assert_eq!(script_of('é'), Some(Script::Latin));
        assert_eq!(script_of('好'), Some(Script::Han));
        assert_eq!(script_of('𠀋'), Some(Script::Han)); // outside the BMP
        assert_eq!(script_of('か'), Some(Script::Kana));
        assert_eq!(script_of('한'), Some(Script::Hangul));
        assert_eq!(script_of('ж'), Some(Script::Cyrillic));
        assert_eq!(script_of('7'), None);
        assert_eq!(script_of('，'), None);
        assert_eq!(script_of('🙂'), None);
    }

    #[test]
    fn a_texts_script_is_that_of_most_of_its_letters() {
        assert_eq!(dominant_script("The weather is nice today."), Some(Script::Latin));
        assert_eq!(dominant_script("今天天气真好"), Some(Script::Han));
        assert_eq!(dominant_script("我们用 Rust 和 TypeScript 写了一个语言服务器。"), Some(Script::Han));
        assert_eq!(dominant_script("今日はいい天気ですね"), Some(Script::Kana));
        assert_eq!(dominant_script("Привет, мир"), Some(Script::Cyrillic));
        assert_eq!(dominant_script("12, 34! 🙂"), None);
        assert_eq!(dominant_script(""), None);
    }

    #[test]
    fn spaceless_scripts() {
        assert!(is_spaceless('好') && is_spaceless('か') && is_spaceless('ไ'));
        assert!(!is_spaceless('a') && !is_spaceless('한') && !is_spaceless(' ') && !is_spaceless('。'));
    }

    #[test]
    fn words_in_other_scripts() {
        assert!(has_other_script("天气") && has_other_script("Москва") && has_other_script("iPhone中"));
        assert!(!has_other_script("café") && !has_other_script("don't") && !has_other_script("42"));
    }
}
