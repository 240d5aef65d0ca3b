//! LSP's rules for a document's text, written out plainly over a `Vec<char>` as
//! vscode-languageserver-node's `TextDocument` applies them, independently of laya-text's rope:
//! lines end at `\n`, `\r\n` or a lone `\r` (not U+2028); a position counts UTF-8 bytes, UTF-16
//! units or code points; a position inside a char rounds down to its start, a character past the
//! line's end clamps before the line break, a line past the last clamps to the document's end; a
//! reversed range is swapped; a change without a range replaces everything.

/// A position encoding, as LSP names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
    Utf32,
}

impl Encoding {
    /// "utf-8", "utf-16" or "utf-32".
    pub fn from_lsp(name: &str) -> Option<Encoding> {
        match name {
            "utf-8" => Some(Encoding::Utf8),
            "utf-16" => Some(Encoding::Utf16),
            "utf-32" => Some(Encoding::Utf32),
            _ => None,
        }
    }

    /// How many units `c` takes.
    pub fn width(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }
}

/// A document's text and where its lines start. Positions are (line, character).
#[derive(Debug, Clone, Default)]
pub struct LspText {
    pub chars: Vec<char>,
    /// Char index where each line starts.
    pub line_starts: Vec<usize>,
}

impl LspText {
    pub fn new(text: &str) -> LspText {
        let chars: Vec<char> = text.chars().collect();
        let mut line_starts = vec![0];
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '\r' if chars.get(i + 1) == Some(&'\n') => {
                    line_starts.push(i + 2);
                    i += 2;
                }
                '\r' | '\n' => {
                    line_starts.push(i + 1);
                    i += 1;
                }
                _ => i += 1,
            }
        }
        LspText { chars, line_starts }
    }

    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// (start, end) char indexes of a line's content, before its line break.
    pub fn line(&self, line: usize) -> (usize, usize) {
        let start = self.line_starts[line];
        let mut end = self.line_starts.get(line + 1).copied().unwrap_or(self.chars.len());
        while end > start && matches!(self.chars[end - 1], '\r' | '\n') {
            end -= 1;
        }
        (start, end)
    }

    /// The char index a position names.
    pub fn offset_of(&self, (line, character): (usize, usize), enc: Encoding) -> usize {
        if line >= self.line_starts.len() {
            return self.chars.len();
        }
        let (start, end) = self.line(line);
        let (mut i, mut units) = (start, 0);
        // Whole chars only: a position inside a char rounds down.
        while i < end && units + enc.width(self.chars[i]) <= character {
            units += enc.width(self.chars[i]);
            i += 1;
        }
        i
    }

    /// The position of a char index (past the end: the end's).
    pub fn position_of(&self, idx: usize, enc: Encoding) -> (usize, usize) {
        let idx = idx.min(self.chars.len());
        let line = self.line_starts.partition_point(|&s| s <= idx) - 1;
        let (start, end) = self.line(line);
        (line, self.chars[start..idx.min(end)].iter().map(|&c| enc.width(c)).sum())
    }

    /// Applies one content change: `range` None replaces the whole text.
    pub fn apply(&mut self, range: Option<((usize, usize), (usize, usize))>, text: &str, enc: Encoding) {
        let (start, end) = match range {
            None => (0, self.chars.len()),
            Some((a, b)) => {
                let (a, b) = (self.offset_of(a, enc), self.offset_of(b, enc));
                (a.min(b), a.max(b))
            }
        };
        self.chars.splice(start..end, text.chars());
        *self = LspText::new(&self.text());
    }

    /// Every valid position (each line's start and the end of each of its chars).
    pub fn valid_positions(&self, enc: Encoding) -> Vec<(usize, usize)> {
        let mut out = vec![];
        for line in 0..self.line_starts.len() {
            let (start, end) = self.line(line);
            let mut units = 0;
            out.push((line, 0));
            for &c in &self.chars[start..end] {
                units += enc.width(c);
                out.push((line, units));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_in_brief() {
        let t = LspText::new("a😀b\r\nc\rd");
        assert_eq!(t.line_starts, vec![0, 5, 7]);
        assert_eq!(t.offset_of((0, 2), Encoding::Utf16), 1, "inside the surrogate pair: rounds down");
        assert_eq!(t.offset_of((0, 99), Encoding::Utf16), 3, "past the line's end: before the CRLF");
        assert_eq!(t.offset_of((9, 0), Encoding::Utf8), t.chars.len());
        assert_eq!(t.position_of(2, Encoding::Utf8), (0, 5));
        let mut t = t;
        t.apply(Some(((1, 1), (0, 1))), "X", Encoding::Utf32);
        assert_eq!(t.text(), "aX\rd", "a reversed range is swapped");
        t.apply(None, "new", Encoding::Utf8);
        assert_eq!(t.text(), "new");
    }
}
