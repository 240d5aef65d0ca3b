//! The server's copy of an open document: a rope kept equal to the editor's text through
//! incremental changes, LSP-style positions in three encodings, and the paragraph,
//! sentence and context-window spans that completion reads around the cursor.
//!
//! Lines are what LSP calls lines: they end at `\n`, `\r\n` or a lone `\r` and at nothing
//! else (ropey's `unicode_lines` feature, which would also break at U+2028 and friends, is
//! deliberately off). A line's *end* is the position before its line break.
//!
//! Odd inputs follow vscode-languageserver-node's `TextDocument` (the editors' reference
//! implementation), so that a sloppy client ends up with the same text as its own buffer:
//!
//! - a `character` past the line's end means the line's end (never inside or after the
//!   line break, so never between the `\r` and `\n` of a CRLF);
//! - a `line` past the last line means the end of the document;
//! - a range whose start is after its end is swapped;
//! - a `character` that lands inside a character (inside a multi-byte UTF-8 sequence, or
//!   between the two halves of a UTF-16 surrogate pair) is rounded *down* to that
//!   character's start. (The reference splits the surrogate pair; a Rust string cannot
//!   hold half a character, so rounding down is the deterministic choice.)

use std::borrow::Cow;

use ropey::{Rope, RopeSlice};

/// How the `character` of a [`Position`] counts within its line (LSP's
/// `PositionEncodingKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PositionEncoding {
    /// UTF-8 bytes.
    Utf8,
    /// UTF-16 code units: LSP's default and the one every client supports. 😀 counts 2.
    #[default]
    Utf16,
    /// Unicode scalar values (Rust `char`s).
    Utf32,
}

/// A place in a document: zero-based line, and an offset within that line in some
/// [`PositionEncoding`]. Orders by line, then character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

impl Position {
    pub const fn new(line: u32, character: u32) -> Self {
        Self { line, character }
    }
}

/// A span between two positions; `end` is exclusive. Need not be well-formed: a
/// reversed range is swapped when used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

impl Range {
    pub const fn new(start: Position, end: Position) -> Self {
        Self { start, end }
    }
}

/// Why a document refused something.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// A change carried a version that does not increase (a stale or replayed change).
    #[error("version {new} is not newer than {current}")]
    StaleVersion { new: i32, current: i32 },
}

/// What one change did, in the coordinates of the text before it (`start_*`,
/// `old_end_*`) and after it (`start_*`, `new_end_*`): the old span
/// `start..old_end` became the new span `start..new_end`.
///
/// The span is the *minimal* one: characters that the change replaced with themselves (a
/// common prefix or suffix of the replaced and the inserted text) are left out, so a
/// whole-document replacement that retypes one letter reports that letter, not the whole
/// document. Replacing nothing with nothing gives an empty edit (see [`Edit::is_empty`]).
///
/// Line structure can change just outside the span: inserting `\n` right after a `\r`
/// turns that lone-CR line break into one CRLF, merging two lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Edit {
    pub start_byte: usize,
    pub old_end_byte: usize,
    pub new_end_byte: usize,
    pub start_char: usize,
    pub old_end_char: usize,
    pub new_end_char: usize,
}

impl Edit {
    /// True when the text did not change.
    pub fn is_empty(&self) -> bool {
        self.old_end_char == self.start_char && self.new_end_char == self.start_char
    }

    /// Characters removed.
    pub fn removed_chars(&self) -> usize {
        self.old_end_char - self.start_char
    }

    /// Characters inserted.
    pub fn inserted_chars(&self) -> usize {
        self.new_end_char - self.start_char
    }

    /// Where a char index of the old text is in the new text: unchanged before the edit,
    /// shifted after it, and the new span's end for an index inside the replaced span.
    pub fn map_char(&self, old_char: usize) -> usize {
        if old_char <= self.start_char {
            old_char
        } else if old_char >= self.old_end_char {
            old_char - self.old_end_char + self.new_end_char
        } else {
            self.new_end_char
        }
    }
}

/// One open document: its text and the version the editor last gave it.
///
/// Edits and position conversions cost O(log n) plus the size of the change, whatever the
/// document's size; nothing copies the whole text except [`Document::text`].
#[derive(Debug, Clone)]
pub struct Document {
    rope: Rope,
    version: i32,
}

impl Document {
    pub fn new(text: &str, version: i32) -> Self {
        Self { rope: Rope::from_str(text), version }
    }

    /// The whole text (a copy: O(n)).
    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    pub fn rope(&self) -> &Rope {
        &self.rope
    }

    pub fn len_chars(&self) -> usize {
        self.rope.len_chars()
    }

    pub fn len_bytes(&self) -> usize {
        self.rope.len_bytes()
    }

    /// Number of lines, as LSP counts them: one more than the number of line breaks (an
    /// empty document has one line; "a\n" has two, the second empty).
    pub fn len_lines(&self) -> usize {
        self.rope.len_lines()
    }

    pub fn version(&self) -> i32 {
        self.version
    }

    /// Sets the version unconditionally (see [`Document::check_version`]).
    pub fn set_version(&mut self, version: i32) {
        self.version = version;
    }

    /// Ok when `new` is newer than the current version. Checks only; the caller decides
    /// what to do with a stale change and when to call [`Document::set_version`].
    pub fn check_version(&self, new: i32) -> Result<(), TextError> {
        if new > self.version {
            Ok(())
        } else {
            Err(TextError::StaleVersion { new, current: self.version })
        }
    }

    // ---------------------------------------------------------------------------------
    // Changes

    /// Applies one LSP content change: replaces `range` (the whole document when `None`)
    /// with `text`. Odd positions are clamped, reversed ranges swapped, and positions inside
    /// a character rounded down, as the module documentation says; so this currently never
    /// fails, the `Result` leaves room for refusing changes later.
    pub fn apply_change(&mut self, range: Option<Range>, text: &str, enc: PositionEncoding) -> Result<Edit, TextError> {
        let chars = match range {
            None => 0..self.rope.len_chars(),
            Some(r) => {
                let a = self.offset_of(r.start, enc);
                let b = self.offset_of(r.end, enc);
                a.min(b)..a.max(b)
            }
        };
        Ok(self.replace_chars(chars, text))
    }

    /// Replaces the chars in `chars` with `text`. The range is clamped to the document and
    /// swapped if reversed. Returns the minimal [`Edit`].
    pub fn replace_chars(&mut self, chars: std::ops::Range<usize>, text: &str) -> Edit {
        let len = self.rope.len_chars();
        let (a, b) = (chars.start.min(len), chars.end.min(len));
        let (start, end) = (a.min(b), a.max(b));

        // Leave out what the change replaces with itself.
        let prefix = common_prefix_bytes(self.rope.slice(start..end), text);
        let start_char = start + text[..prefix].chars().count();
        let rest = &text[prefix..];
        let suffix = common_suffix_bytes(self.rope.slice(start_char..end), rest);
        let inserted = &rest[..rest.len() - suffix];
        let old_end_char = end - rest[rest.len() - suffix..].chars().count();

        let start_byte = self.rope.char_to_byte(start_char);
        let old_end_byte = self.rope.char_to_byte(old_end_char);
        if old_end_char > start_char {
            self.rope.remove(start_char..old_end_char);
        }
        if !inserted.is_empty() {
            self.rope.insert(start_char, inserted);
        }
        Edit {
            start_byte,
            old_end_byte,
            new_end_byte: start_byte + inserted.len(),
            start_char,
            old_end_char,
            new_end_char: start_char + inserted.chars().count(),
        }
    }

    // ---------------------------------------------------------------------------------
    // Positions

    /// The char index that `pos` names, clamped as the module documentation says: a
    /// character past the line's end gives the line's end, a line past the last line gives
    /// the end of the document, a character inside a character rounds down.
    pub fn offset_of(&self, pos: Position, enc: PositionEncoding) -> usize {
        let line = pos.line as usize;
        if line >= self.rope.len_lines() {
            return self.rope.len_chars();
        }
        let (start, content) = self.line_content(line);
        let character = pos.character as usize;
        // Inside a char (a UTF-8 sequence, a surrogate pair), ropey gives that char's index:
        // rounds down.
        start
            + match enc {
                PositionEncoding::Utf32 => character.min(content.len_chars()),
                PositionEncoding::Utf16 => content.utf16_cu_to_char(character.min(content.len_utf16_cu())),
                PositionEncoding::Utf8 => content.byte_to_char(character.min(content.len_bytes())),
            }
    }

    /// The byte index that `pos` names (see [`Document::offset_of`]).
    pub fn byte_offset_of(&self, pos: Position, enc: PositionEncoding) -> usize {
        self.rope.char_to_byte(self.offset_of(pos, enc))
    }

    /// The position of a char index. An index past the end is the end; an index inside a
    /// line break (at its `\r` or `\n`) is the line's end, as in the reference
    /// implementation, so `offset_of(position_of(i))` is `i` except there.
    pub fn position_of(&self, char_idx: usize, enc: PositionEncoding) -> Position {
        let idx = char_idx.min(self.rope.len_chars());
        let line = self.rope.char_to_line(idx);
        let (start, content) = self.line_content(line);
        let rel = (idx - start).min(content.len_chars());
        let character = match enc {
            PositionEncoding::Utf32 => rel,
            PositionEncoding::Utf16 => content.char_to_utf16_cu(rel),
            PositionEncoding::Utf8 => content.char_to_byte(rel),
        };
        Position { line: to_u32(line), character: to_u32(character) }
    }

    /// The position of a byte index; a byte inside a multi-byte char counts as that char's
    /// start.
    pub fn byte_to_position(&self, byte_idx: usize, enc: PositionEncoding) -> Position {
        let byte_idx = byte_idx.min(self.rope.len_bytes());
        self.position_of(self.rope.byte_to_char(byte_idx), enc)
    }

    /// Char range of a line without its line break; `None` past the last line.
    pub fn line_range(&self, line: usize) -> Option<std::ops::Range<usize>> {
        (line < self.rope.len_lines()).then(|| {
            let (s, e) = self.line_bounds(line);
            s..e
        })
    }

    /// A line's text without its line break; empty past the last line. Borrowed when the
    /// line lies in one chunk of the rope.
    pub fn line_text(&self, line: usize) -> Cow<'_, str> {
        match self.line_range(line) {
            None => Cow::Borrowed(""),
            Some(r) => slice_cow(self.rope.slice(r)),
        }
    }

    /// (start, end) chars of `line` (which must exist), end before the line break.
    fn line_bounds(&self, line: usize) -> (usize, usize) {
        let (start, content) = self.line_content(line);
        (start, start + content.len_chars())
    }

    /// The start char of `line` (which must exist) and its text without the line break.
    /// Conversions within a line go through this slice: when the line lies in one chunk
    /// of the rope (nearly always), they scan that chunk instead of walking the tree again.
    fn line_content(&self, line: usize) -> (usize, RopeSlice<'_>) {
        let start = self.rope.line_to_char(line);
        let full = self.rope.line(line);
        let n = full.len_bytes();
        let last = |k: usize| n.checked_sub(k).map(|i| full.byte(i));
        let line_break = match (last(2), last(1)) {
            (Some(b'\r'), Some(b'\n')) => 2,
            (_, Some(b'\n' | b'\r')) => 1,
            _ => 0,
        };
        (start, full.slice(..full.len_chars() - line_break))
    }

    // ---------------------------------------------------------------------------------
    // Paragraphs, sentences, context

    /// Char range of the paragraph containing `char_idx`: the run of non-blank lines around
    /// it (a blank line is empty or whitespace only), from the first line's start to the
    /// last line's end (line break excluded). On a blank line, that line's own range.
    /// Costs a pass over the paragraph's lines: a document with no blank line is one
    /// paragraph (about 50 ms for 20 MB in a debug build), so callers that only need the
    /// neighbourhood of an edit should bound what they read.
    pub fn paragraph_at(&self, char_idx: usize) -> std::ops::Range<usize> {
        let idx = char_idx.min(self.rope.len_chars());
        let line = self.rope.char_to_line(idx);
        let (start, end) = self.line_bounds(line);
        if self.is_blank(start, end) {
            return start..end;
        }
        let is_blank = |l: RopeSlice<'_>| l.chars().all(char::is_whitespace);
        let before = self.rope.lines_at(line).reversed().take_while(|&l| !is_blank(l)).count();
        let after = self.rope.lines_at(line + 1).take_while(|&l| !is_blank(l)).count();
        self.rope.line_to_char(line - before)..self.line_bounds(line + after).1
    }

    fn is_blank(&self, start: usize, end: usize) -> bool {
        self.rope.slice(start..end).chars().all(char::is_whitespace)
    }

    /// Char index where the paragraph holding char `at` starts (the first of its run of
    /// non-blank lines, as [`crate::paragraphs`] splits a text), or None when `at` is on a
    /// blank line.
    pub fn paragraph_start(&self, at: usize) -> Option<usize> {
        let blank = |l: usize| self.rope.line(l).chars().all(char::is_whitespace);
        let mut line = self.rope.char_to_line(at.min(self.rope.len_chars()));
        if blank(line) {
            return None;
        }
        while line > 0 && !blank(line - 1) {
            line -= 1;
        }
        Some(self.rope.line_to_char(line))
    }

    /// Where a model's context window for a cursor at char `to` starts, between `min` and
    /// `max` characters before it: a function of the text and the cursor alone, so that what
    /// a suggestion reads does not depend on where the cursor was when it was last asked. The
    /// whole text up to `max`; past that, the start of the sentence holding the last multiple
    /// of `max - min` at least `min` before the cursor (after a space near it when no sentence
    /// starts near: a very long line). It stays put while the cursor moves within `max - min`
    /// characters, so each keystroke reuses a cache of the window's text.
    pub fn window_start(&self, to: usize, min: usize, max: usize) -> usize {
        let to = to.min(self.rope.len_chars());
        let step = max.saturating_sub(min).max(1);
        if to <= max {
            return 0;
        }
        let grid = (to - min) / step * step;
        let anchor = self.sentence_start_before(grid).min(to);
        if to - anchor <= max + min {
            return anchor;
        }
        let skip = self.rope.chars_at(grid).take(100).position(char::is_whitespace).map_or(0, |n| n + 1);
        (grid + skip).min(to)
    }

    /// Char index where the sentence containing `char_idx` starts, looking only at the text
    /// before `char_idx`: just after the whitespace that follows a sentence end (`.`, `!`,
    /// `?` or `…`, then any closing quotes or brackets, then whitespace; or `。`, `！`, `？`
    /// and closers, with or without whitespace), else after the blank line that starts the
    /// paragraph, else at the document's first non-whitespace char; never after
    /// `char_idx`. Inside the whitespace after a sentence end, that is `char_idx`: the
    /// next sentence has begun. Abbreviations ("Mr. Smith") end sentences too.
    /// Costs one step per char of the sentence.
    pub fn sentence_start_before(&self, char_idx: usize) -> usize {
        let idx = char_idx.min(self.rope.len_chars());
        let mut chars = self.rope.chars_at(idx);
        // A `\r` just before `idx` is a line break of the text before, `\n` after it or not.
        let mut after = None;
        let mut pos = idx;
        let mut state = Back::Seek { closers_end: None };
        while let Some(c) = chars.prev() {
            pos -= 1;
            let is_break = c == '\n' || (c == '\r' && after != Some('\n'));
            after = Some(c);
            state = match state {
                Back::Seek { closers_end } => {
                    if c.is_whitespace() {
                        Back::Space { end: pos + 1, breaks: u32::from(is_break) }
                    } else if is_closer(c) {
                        Back::Seek { closers_end: closers_end.or(Some(pos + 1)) }
                    } else if is_cjk_terminator(c) {
                        return closers_end.unwrap_or(pos + 1);
                    } else {
                        Back::Seek { closers_end: None }
                    }
                }
                Back::Space { end, breaks } => {
                    if c.is_whitespace() {
                        let breaks = breaks + u32::from(is_break);
                        if breaks >= 2 {
                            return end;
                        }
                        Back::Space { end, breaks }
                    } else if is_terminator(c) || is_cjk_terminator(c) {
                        return end;
                    } else if is_closer(c) {
                        Back::Closers { end }
                    } else {
                        Back::Seek { closers_end: None }
                    }
                }
                Back::Closers { end } => {
                    if is_closer(c) {
                        Back::Closers { end }
                    } else if is_terminator(c) || is_cjk_terminator(c) {
                        return end;
                    } else if c.is_whitespace() {
                        Back::Space { end: pos + 1, breaks: u32::from(is_break) }
                    } else {
                        Back::Seek { closers_end: None }
                    }
                }
            };
        }
        // The document's start: skip leading whitespace, not past `idx`.
        self.rope.chars().take(idx).take_while(|c| c.is_whitespace()).count()
    }

    /// At most `max_chars` chars of text before `char_idx` (a model's context window). When
    /// the text before is longer, the cut falls at the earliest sentence or paragraph start
    /// that fits (see [`Document::sentence_start_before`]); when no such start fits, at the
    /// earliest word start (after whitespace); when the window is one word, mid-word.
    /// Costs one step per char returned.
    pub fn text_before(&self, char_idx: usize, max_chars: usize) -> String {
        let idx = char_idx.min(self.rope.len_chars());
        if max_chars >= idx {
            return self.rope.slice(..idx).to_string();
        }
        let from = idx - max_chars;
        let mut scanner = self.scanner_at(from);
        let mut prev_ws = self.rope.char(from - 1).is_whitespace();
        let mut word = None;
        for (i, c) in self.rope.slice(from..idx).chars().enumerate() {
            let pos = from + i;
            if scanner.feed(c) {
                return self.rope.slice(pos..idx).to_string();
            }
            let ws = c.is_whitespace();
            if word.is_none() && prev_ws && !ws {
                word = Some(pos);
            }
            prev_ws = ws;
        }
        self.rope.slice(word.unwrap_or(from)..idx).to_string()
    }

    /// At most `max_chars` chars of text after `char_idx`. When the text after is longer,
    /// the cut falls at the last sentence or paragraph end that fits (after the sentence's
    /// closing punctuation, before the whitespace that follows it); when none fits, at the
    /// last word end; when the window is one word, mid-word.
    /// Costs one step per char returned (plus the whitespace run at the window's end).
    pub fn text_after(&self, char_idx: usize, max_chars: usize) -> String {
        let len = self.rope.len_chars();
        let idx = char_idx.min(len);
        if max_chars >= len - idx {
            return self.rope.slice(idx..).to_string();
        }
        let limit = idx + max_chars;
        let mut scanner = self.scanner_at(idx);
        let (mut end, mut word_end, mut space_start) = (None, None, None);
        let mut exhausted = true;
        for (i, c) in self.rope.chars_at(idx).enumerate() {
            let pos = idx + i;
            if c.is_whitespace() {
                if space_start.is_none() {
                    space_start = Some(pos);
                    if pos > idx && pos <= limit {
                        word_end = Some(pos);
                    }
                }
                scanner.feed(c);
                continue;
            }
            let boundary = scanner.feed(c);
            let e = space_start.take().unwrap_or(pos);
            if boundary && e > idx && e <= limit {
                end = Some(e);
            }
            if pos >= limit {
                exhausted = false;
                break;
            }
        }
        if exhausted {
            // Only whitespace from before the limit to the document's end, which ends a
            // sentence too.
            let e = space_start.unwrap_or(len);
            if e > idx && e <= limit {
                end = Some(e);
            }
        }
        self.rope.slice(idx..end.or(word_end).unwrap_or(limit)).to_string()
    }

    /// A forward sentence-boundary scanner primed with the text before `pos`.
    fn scanner_at(&self, pos: usize) -> Scanner {
        let mut chars = self.rope.chars_at(pos);
        // A `\r` just before `pos` counts here even when a `\n` follows: feeding that `\n`
        // will not count it again.
        let mut after = None;
        let mut scanner = Scanner { prev: Prev::Start, space: false, breaks: 0, last_cr: pos > 0 && self.rope.char(pos - 1) == '\r' };
        // The whitespace run just before `pos`.
        let mut c = chars.prev();
        while let Some(ch) = c.filter(|ch| ch.is_whitespace()) {
            scanner.space = true;
            scanner.breaks += u32::from(ch == '\n' || (ch == '\r' && after != Some('\n')));
            after = Some(ch);
            c = chars.prev();
        }
        // Then closers, then what they close.
        let mut closers = false;
        while c.is_some_and(is_closer) {
            closers = true;
            c = chars.prev();
        }
        scanner.prev = match c {
            None if !closers => Prev::Start,
            Some(ch) if is_terminator(ch) => Prev::Term,
            Some(ch) if is_cjk_terminator(ch) => Prev::CjkTerm,
            _ => Prev::Other,
        };
        scanner
    }
}

/// States of the backward sentence scan in [`Document::sentence_start_before`].
#[derive(Clone, Copy)]
enum Back {
    /// In non-whitespace; `closers_end` is the end of the run of closers just read, if the
    /// chars read since the last non-closer are all closers.
    Seek { closers_end: Option<usize> },
    /// In whitespace that ends at `end`, holding `breaks` line breaks so far.
    Space { end: usize, breaks: u32 },
    /// In closers that precede whitespace ending at `end`.
    Closers { end: usize },
}

/// What the text before the scanner's position ends with (whitespace aside).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    /// The document's start.
    Start,
    /// `.`, `!`, `?` or `…`, then perhaps closers.
    Term,
    /// `。`, `！` or `？`, then perhaps closers.
    CjkTerm,
    Other,
}

/// Finds sentence starts going forward, one char at a time.
struct Scanner {
    prev: Prev,
    /// Whitespace since the last non-whitespace char.
    space: bool,
    /// Line breaks in that whitespace.
    breaks: u32,
    /// The last char was `\r` (so a `\n` now is the same line break).
    last_cr: bool,
}

impl Scanner {
    /// Feeds the next char; true when a sentence starts at it.
    fn feed(&mut self, c: char) -> bool {
        if c.is_whitespace() {
            self.breaks += u32::from(c == '\r' || (c == '\n' && !self.last_cr));
            self.last_cr = c == '\r';
            self.space = true;
            return false;
        }
        self.last_cr = false;
        let starts = self.breaks >= 2
            || match self.prev {
                Prev::Start => true,
                Prev::Term => self.space,
                Prev::CjkTerm => self.space || !is_closer(c),
                Prev::Other => false,
            };
        self.prev = if is_terminator(c) {
            Prev::Term
        } else if is_cjk_terminator(c) {
            Prev::CjkTerm
        } else if is_closer(c) && !self.space && matches!(self.prev, Prev::Term | Prev::CjkTerm) {
            self.prev
        } else {
            Prev::Other
        };
        self.space = false;
        self.breaks = 0;
        starts
    }
}

/// Ends a sentence when whitespace follows.
fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

/// Ends a sentence with or without whitespace after it.
fn is_cjk_terminator(c: char) -> bool {
    matches!(c, '。' | '！' | '？')
}

/// May follow a sentence's terminator and still belong to the sentence.
fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | '”' | '’' | '»' | ')' | ']' | '}' | '」' | '』' | '）')
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn slice_cow(slice: RopeSlice<'_>) -> Cow<'_, str> {
    match slice.as_str() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(slice.to_string()),
    }
}

/// Length in bytes of the longest common prefix of `old` and `new`, on a char boundary.
fn common_prefix_bytes(old: RopeSlice<'_>, new: &str) -> usize {
    let bytes = new.as_bytes();
    let mut n = 0;
    for chunk in old.chunks() {
        let chunk = chunk.as_bytes();
        let rest = &bytes[n..];
        if rest.len() >= chunk.len() && rest[..chunk.len()] == *chunk {
            n += chunk.len();
            continue;
        }
        n += chunk.iter().zip(rest).take_while(|(a, b)| a == b).count();
        break;
    }
    while !new.is_char_boundary(n) {
        n -= 1;
    }
    n
}

/// Length in bytes of the longest common suffix of `old` and `new`, on a char boundary.
fn common_suffix_bytes(old: RopeSlice<'_>, new: &str) -> usize {
    let bytes = new.as_bytes();
    let mut n = 0;
    let mut chunks = old.chunks_at_byte(old.len_bytes()).0;
    while let Some(chunk) = chunks.prev() {
        let chunk = chunk.as_bytes();
        let rest = &bytes[..bytes.len() - n];
        if rest.len() >= chunk.len() && rest[rest.len() - chunk.len()..] == *chunk {
            n += chunk.len();
            continue;
        }
        n += chunk.iter().rev().zip(rest.iter().rev()).take_while(|(a, b)| a == b).count();
        break;
    }
    while !new.is_char_boundary(new.len() - n) {
        n -= 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use PositionEncoding::*;

    fn p(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    #[test]
    fn lines_are_lsp_lines_only() {
        // U+2028, U+2029, U+0085, VT and FF are not line breaks in LSP.
        let doc = Document::new("a\u{2028}b\u{2029}c\u{85}d\u{0B}e\u{0C}f", 0);
        assert_eq!(doc.len_lines(), 1);
        let doc = Document::new("a\nb\r\nc\rd", 0);
        assert_eq!(doc.len_lines(), 4);
        assert_eq!(doc.line_text(1), "b");
        assert_eq!(doc.line_text(2), "c");
        assert_eq!(doc.line_text(3), "d");
        assert_eq!(doc.line_text(4), "");
    }

    #[test]
    fn ropey_rounds_down_inside_chars() {
        // On a rope, and on a slice not starting at the rope's start.
        let rope = Rope::from_str("xa😀b");
        assert_eq!(rope.utf16_cu_to_char(3), 2);
        assert_eq!(rope.byte_to_char(3), 2);
        assert_eq!(rope.byte_to_char(5), 2);
        assert_eq!(rope.byte_to_char(6), 3);
        let slice = rope.slice(1..);
        assert_eq!(slice.utf16_cu_to_char(2), 1);
        assert_eq!(slice.byte_to_char(2), 1);
        assert_eq!(slice.byte_to_char(4), 1);
        assert_eq!(slice.byte_to_char(5), 2);
    }

    #[test]
    fn minimal_edits() {
        let mut doc = Document::new("hello world", 0);
        let e = doc.apply_change(None, "hello there world", Utf16).unwrap();
        assert_eq!((e.start_char, e.old_end_char, e.new_end_char), (6, 6, 12));
        assert_eq!(doc.text(), "hello there world");
        let e = doc.apply_change(Some(Range::new(p(0, 0), p(0, 5))), "hello", Utf16).unwrap();
        assert!(e.is_empty());
        // A common prefix that would end inside a char is cut at the char's start.
        let mut doc = Document::new("é", 0);
        let e = doc.apply_change(None, "è", Utf8).unwrap();
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (0, 2, 2));
        assert_eq!(doc.text(), "è");
    }

    #[test]
    fn common_prefix_and_suffix_across_chunks() {
        let big: String = "abcdéfgh\r\n".repeat(500);
        let mut doc = Document::new(&big, 0);
        assert!(doc.rope().chunks().count() > 2);
        let mut new = big.clone();
        new.insert_str(2503, "XY");
        let e = doc.apply_change(None, &new, Utf32).unwrap();
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (2503, 2503, 2505));
        // 227 lines of 10 chars (11 bytes), then "abcdé".
        assert_eq!((e.start_char, e.old_end_char, e.new_end_char), (2275, 2275, 2277));
        assert_eq!(doc.text(), new);
        let e = doc.apply_change(None, &big, Utf32).unwrap();
        assert_eq!((e.start_char, e.old_end_char, e.new_end_char), (2275, 2277, 2275));
        assert_eq!(doc.text(), big);
    }

    #[test]
    fn scanner_primed_inside_crlf_counts_one_break() {
        let doc = Document::new("one\r\ntwo", 0);
        let mut s = doc.scanner_at(4); // between \r and \n
        assert!(!s.feed('\n'));
        assert!(!s.feed('t'));
        let doc = Document::new("one\r\n\r\ntwo", 0);
        let mut s = doc.scanner_at(4);
        for c in "\n\r\n".chars() {
            assert!(!s.feed(c));
        }
        assert!(s.feed('t'));
    }
}
