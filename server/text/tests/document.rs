//! Tests of `Document`: hand-written edge cases for positions and edits, the paragraph,
//! sentence and context-window helpers, a differential property test against a plain
//! `Vec<char>` model of vscode-languageserver-node's `TextDocument`, and an edit-cost check
//! on a 20 MB document.

use laya_harness::{Encoding, LspText};
use laya_text::{Document, Edit, Position, PositionEncoding, Range, TextError};
use proptest::prelude::*;
use PositionEncoding::{Utf16, Utf32, Utf8};

const ENCODINGS: [PositionEncoding; 3] = [Utf8, Utf16, Utf32];

fn p(line: u32, character: u32) -> Position {
    Position::new(line, character)
}

fn r(l1: u32, c1: u32, l2: u32, c2: u32) -> Option<Range> {
    Some(Range::new(p(l1, c1), p(l2, c2)))
}

fn edited(text: &str, range: Option<Range>, new: &str, enc: PositionEncoding) -> String {
    let mut doc = Document::new(text, 1);
    doc.apply_change(range, new, enc).unwrap();
    doc.text()
}

// ---------------------------------------------------------------------------------------
// Positions

#[test]
fn multibyte_chars_in_each_encoding() {
    // é: 2 UTF-8 bytes, 1 UTF-16 unit. 中: 3 bytes, 1 unit. 😀: 4 bytes, 2 units.
    let doc = Document::new("aé中😀b", 0);
    let ends = [(Utf8, [0, 1, 3, 6, 10, 11]), (Utf16, [0, 1, 2, 3, 5, 6]), (Utf32, [0, 1, 2, 3, 4, 5])];
    for (enc, cols) in ends {
        for (i, col) in cols.into_iter().enumerate() {
            assert_eq!(doc.offset_of(p(0, col), enc), i, "{enc:?} col {col}");
            assert_eq!(doc.position_of(i, enc), p(0, col), "{enc:?} char {i}");
        }
    }
}

#[test]
fn positions_inside_a_char_round_down() {
    let doc = Document::new("aé中😀b", 0);
    // Inside é, inside 中, inside 😀 (UTF-8).
    assert_eq!(doc.offset_of(p(0, 2), Utf8), 1);
    assert_eq!(doc.offset_of(p(0, 4), Utf8), 2);
    assert_eq!(doc.offset_of(p(0, 5), Utf8), 2);
    for col in 7..10 {
        assert_eq!(doc.offset_of(p(0, col), Utf8), 3);
    }
    // Between the halves of 😀's surrogate pair (UTF-16).
    assert_eq!(doc.offset_of(p(0, 4), Utf16), 3);
    // So an edit there neither splits nor eats the emoji.
    assert_eq!(edited("a😀b", r(0, 2, 0, 2), "X", Utf16), "aX😀b");
    assert_eq!(edited("a😀b", r(0, 2, 0, 4), "", Utf8), "a😀b");
    assert_eq!(edited("a😀b", r(0, 1, 0, 2), "", Utf16), "a😀b");
    assert_eq!(edited("a😀b", r(0, 1, 0, 3), "", Utf16), "ab");
    // byte_to_position rounds down too.
    assert_eq!(Document::new("😀", 0).byte_to_position(2, Utf16), p(0, 0));
}

#[test]
fn characters_past_the_line_end_clamp_before_the_line_break() {
    for text in ["ab\ncd", "ab\r\ncd", "ab\rcd"] {
        let doc = Document::new(text, 0);
        for enc in ENCODINGS {
            assert_eq!(doc.offset_of(p(0, 2), enc), 2, "{text:?}");
            assert_eq!(doc.offset_of(p(0, 3), enc), 2, "{text:?}");
            assert_eq!(doc.offset_of(p(0, u32::MAX), enc), 2, "{text:?}");
            assert_eq!(doc.offset_of(p(1, 99), enc), doc.len_chars(), "{text:?}");
        }
    }
}

#[test]
fn lines_past_the_last_clamp_to_the_document_end() {
    let doc = Document::new("ab\ncd\n", 0);
    assert_eq!(doc.len_lines(), 3);
    assert_eq!(doc.offset_of(p(2, 0), Utf16), 6);
    assert_eq!(doc.offset_of(p(3, 0), Utf16), 6);
    assert_eq!(doc.offset_of(p(u32::MAX, u32::MAX), Utf16), 6);
    assert_eq!(edited("ab\ncd", r(7, 0, 9, 3), "!", Utf16), "ab\ncd!");
    assert_eq!(edited("ab\ncd", r(0, 1, 9, 0), "", Utf16), "a");
}

#[test]
fn crlf_and_lone_cr_documents() {
    let doc = Document::new("one\r\ntwo\rthree\n\r\n", 0);
    assert_eq!(doc.len_lines(), 5);
    let lines: Vec<_> = (0..6).map(|l| doc.line_text(l).into_owned()).collect();
    assert_eq!(lines, ["one", "two", "three", "", "", ""]);
    assert_eq!(doc.offset_of(p(1, 0), Utf16), 5);
    assert_eq!(doc.offset_of(p(2, 0), Utf16), 9);
    assert_eq!(doc.offset_of(p(3, 0), Utf16), 15);
    assert_eq!(doc.offset_of(p(4, 0), Utf16), 17);
    // Inside a line break, a char index is the line's end.
    assert_eq!(doc.position_of(3, Utf16), p(0, 3)); // at \r
    assert_eq!(doc.position_of(4, Utf16), p(0, 3)); // between \r and \n
    assert_eq!(doc.position_of(5, Utf16), p(1, 0));
    assert_eq!(doc.position_of(8, Utf16), p(1, 3)); // at the lone \r
    assert_eq!(doc.position_of(999, Utf16), p(4, 0));
}

#[test]
fn edits_that_make_or_break_a_crlf() {
    // "\n" typed after a lone "\r" makes one CRLF: the lines merge.
    let mut doc = Document::new("a\rb", 0);
    doc.apply_change(r(1, 0, 1, 0), "\n", Utf16).unwrap();
    assert_eq!((doc.text().as_str(), doc.len_lines()), ("a\r\nb", 2));
    let mut doc = Document::new("a\rb", 0);
    doc.apply_change(r(0, 9, 0, 9), "x\r", Utf16).unwrap();
    assert_eq!(doc.text(), "ax\r\rb");
    assert_eq!(doc.len_lines(), 3);
    let mut doc = Document::new("a\r", 0);
    doc.apply_change(r(1, 0, 1, 0), "\nb", Utf16).unwrap();
    assert_eq!(doc.text(), "a\r\nb");
    assert_eq!(doc.len_lines(), 2);
    assert_eq!(doc.line_text(0), "a");
    // Deleting the "\n" of a CRLF leaves a lone CR, still one break.
    let mut doc = Document::new("a\r\nb", 0);
    doc.replace_chars(2..3, "");
    assert_eq!((doc.text().as_str(), doc.len_lines()), ("a\rb", 2));
    // Deleting the "\r" leaves "\n".
    let mut doc = Document::new("a\r\nb", 0);
    doc.replace_chars(1..2, "");
    assert_eq!((doc.text().as_str(), doc.len_lines()), ("a\nb", 2));
    // Joining "\r" and "\n" from two breaks by deleting what is between.
    let mut doc = Document::new("a\rX\nb", 0);
    doc.replace_chars(2..3, "");
    assert_eq!((doc.text().as_str(), doc.len_lines()), ("a\r\nb", 2));
}

#[test]
fn edits_at_the_start_and_end() {
    for enc in ENCODINGS {
        assert_eq!(edited("héllo", r(0, 0, 0, 0), "¡", enc), "¡héllo");
        assert_eq!(edited("héllo", r(0, 99, 0, 99), "!", enc), "héllo!");
        assert_eq!(edited("héllo\n", r(1, 0, 1, 0), "x", enc), "héllo\nx");
        assert_eq!(edited("", r(0, 0, 0, 0), "x", enc), "x");
        assert_eq!(edited("", r(5, 5, 6, 6), "x", enc), "x");
        assert_eq!(edited("", None, "", enc), "");
    }
}

#[test]
fn deleting_everything_and_replacing_everything() {
    let text = "Un été à 中国 😀\r\nsecond\rthird\n";
    for enc in ENCODINGS {
        assert_eq!(edited(text, r(0, 0, 99, 0), "", enc), "");
        assert_eq!(edited(text, r(99, 0, 0, 0), "", enc), "");
        assert_eq!(edited(text, None, "new", enc), "new");
        assert_eq!(edited(text, None, "", enc), "");
    }
    let mut doc = Document::new(text, 1);
    let e = doc.apply_change(None, "", Utf16).unwrap();
    assert_eq!((e.start_char, e.old_end_char, e.new_end_char), (0, 28, 0));
    assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (0, text.len(), 0));
    assert_eq!((doc.len_chars(), doc.len_bytes(), doc.len_lines()), (0, 0, 1));
}

#[test]
fn reversed_ranges_are_swapped() {
    for enc in ENCODINGS {
        assert_eq!(edited("abcdef", r(0, 4, 0, 1), "X", enc), "aXef");
        assert_eq!(edited("ab\ncd\nef", r(2, 1, 0, 1), "X", enc), "aXf");
        // Reversed only before clamping: (0, 9) clamps to 3, after (0, 1).
        assert_eq!(edited("abc\nd", r(0, 9, 0, 1), "X", enc), "aX\nd");
    }
}

#[test]
fn the_edit_describes_the_change() {
    let mut doc = Document::new("l’été\nest là", 3);
    let e = doc.apply_change(r(1, 4, 1, 6), "ici", Utf16).unwrap();
    assert_eq!(doc.text(), "l’été\nest ici");
    let expected = Edit { start_byte: 14, old_end_byte: 17, new_end_byte: 17, start_char: 10, old_end_char: 12, new_end_char: 13 };
    assert_eq!(e, expected);
    assert_eq!((e.removed_chars(), e.inserted_chars()), (2, 3));
    assert_eq!(e.map_char(3), 3);
    assert_eq!(e.map_char(11), 13);
    assert_eq!(e.map_char(12), 13);
    // Retyping the same text changes nothing.
    let e = doc.apply_change(r(0, 0, 0, 2), "l’", Utf16).unwrap();
    assert!(e.is_empty());
}

#[test]
fn versions() {
    let mut doc = Document::new("", 9);
    assert_eq!(doc.version(), 9);
    assert_eq!(doc.check_version(10), Ok(()));
    let err = doc.check_version(7).unwrap_err();
    assert_eq!(err, TextError::StaleVersion { new: 7, current: 9 });
    assert_eq!(err.to_string(), "version 7 is not newer than 9");
    assert!(doc.check_version(9).is_err());
    doc.set_version(12);
    assert_eq!(doc.version(), 12);
}

#[test]
fn unicode_line_separators_are_not_line_breaks() {
    let doc = Document::new("a\u{2028}b\u{85}c", 0);
    assert_eq!(doc.len_lines(), 1);
    assert_eq!(doc.offset_of(p(0, 99), Utf16), 5);
    assert_eq!(doc.position_of(4, Utf16), p(0, 4));
}

// ---------------------------------------------------------------------------------------
// Paragraphs, sentences, context

const PROSE: &str = "Title\n\nFirst one. Second one!  Third\nline? Yes.\n  \t\r\nNext para.\r\n\r\nLast";

#[test]
fn paragraphs_are_separated_by_blank_lines() {
    let doc = Document::new(PROSE, 0);
    let text: Vec<char> = PROSE.chars().collect();
    let span = |r: std::ops::Range<usize>| text[r].iter().collect::<String>();
    let at = |needle: &str| PROSE[..PROSE.find(needle).unwrap()].chars().count();
    assert_eq!(span(doc.paragraph_at(0)), "Title");
    assert_eq!(span(doc.paragraph_at(5)), "Title");
    assert_eq!(span(doc.paragraph_at(6)), "");
    assert_eq!(span(doc.paragraph_at(at("Second"))), "First one. Second one!  Third\nline? Yes.");
    assert_eq!(span(doc.paragraph_at(at("line?"))), "First one. Second one!  Third\nline? Yes.");
    assert_eq!(span(doc.paragraph_at(at("  \t"))), "  \t");
    assert_eq!(span(doc.paragraph_at(at("Next"))), "Next para.");
    assert_eq!(span(doc.paragraph_at(doc.len_chars())), "Last");
    assert_eq!(span(doc.paragraph_at(usize::MAX)), "Last");
}

#[test]
fn sentences_start_after_terminators_and_blank_lines() {
    let doc = Document::new(PROSE, 0);
    let at = |needle: &str| PROSE[..PROSE.find(needle).unwrap()].chars().count();
    let start = |idx: usize| doc.sentence_start_before(idx);
    assert_eq!(start(3), 0);
    assert_eq!(start(at("First") + 3), at("First"));
    assert_eq!(start(at("First")), at("First"));
    // Right after the terminator, still the same sentence; after the space, the next one.
    assert_eq!(start(at(" Second")), at("First"));
    assert_eq!(start(at("Second")), at("Second"));
    assert_eq!(start(at("Second") + 4), at("Second"));
    // Inside the two spaces after "!": the next sentence has begun.
    assert_eq!(start(at("Third") - 1), at("Third") - 1);
    // A single line break does not end a sentence; "?" then a line break does.
    assert_eq!(start(at("line?") + 2), at("Third"));
    assert_eq!(start(at("Yes")), at("Yes"));
    assert_eq!(start(at("Next") + 2), at("Next"));
    assert_eq!(start(doc.len_chars()), at("Last"));

    let doc = Document::new("He said \"Stop.\" Then left. Mr. Smith  ", 0);
    assert_eq!(doc.sentence_start_before(20), 16);
    assert_eq!(doc.sentence_start_before(33), 31);
    assert_eq!(doc.sentence_start_before(38), 31);
    assert_eq!(doc.sentence_start_before(37), 31);
    let doc = Document::new("  lead", 0);
    assert_eq!(doc.sentence_start_before(4), 2);
    assert_eq!(doc.sentence_start_before(1), 1);
    // CJK full stops end a sentence without whitespace; closers stay with the sentence.
    let doc = Document::new("你好。我们走吧。」 好", 0);
    assert_eq!(doc.sentence_start_before(5), 3);
    assert_eq!(doc.sentence_start_before(9), 9);
    assert_eq!(doc.sentence_start_before(11), 10);
    // Right after a CJK full stop, the next sentence has begun.
    assert_eq!(doc.sentence_start_before(8), 8);
    let doc = Document::new("a\r\n\r\nb", 0);
    assert_eq!(doc.sentence_start_before(6), 5);
    assert_eq!(doc.sentence_start_before(5), 5);
    assert_eq!(doc.sentence_start_before(4), 4);
    assert_eq!(doc.sentence_start_before(3), 0);
}

#[test]
fn text_before_cuts_at_sentence_starts() {
    let text = "One two. Three four five. Six seven";
    let doc = Document::new(text, 0);
    let end = doc.len_chars();
    assert_eq!(doc.text_before(end, 100), text);
    assert_eq!(doc.text_before(end, end), text);
    assert_eq!(doc.text_before(end, end - 1), "Three four five. Six seven");
    assert_eq!(doc.text_before(end, 26), "Three four five. Six seven");
    assert_eq!(doc.text_before(end, 25), "Six seven");
    // No sentence start fits: the earliest word start.
    assert_eq!(doc.text_before(end, 8), "seven");
    // No word start either: mid-word.
    assert_eq!(doc.text_before(end, 3), "ven");
    assert_eq!(doc.text_before(end, 0), "");
    assert_eq!(doc.text_before(7, 100), "One two");
    // Paragraph starts count; a sentence start at the cursor itself does not.
    let doc = Document::new("aaa bbb\n\nccc ddd. ", 0);
    assert_eq!(doc.text_before(18, 12), "ccc ddd. ");
    assert_eq!(doc.text_before(18, 6), "ddd. ");
    assert_eq!(doc.text_before(18, 4), "dd. ");
    let doc = Document::new("x.\r\ny", 0);
    assert_eq!(doc.text_before(5, 3), "y");
    assert_eq!(doc.text_before(5, 2), "y");
}

#[test]
fn text_after_cuts_at_sentence_ends() {
    let text = "One two. Three four five. Six seven";
    let doc = Document::new(text, 0);
    assert_eq!(doc.text_after(0, 100), text);
    assert_eq!(doc.text_after(0, 35), text);
    assert_eq!(doc.text_after(0, 34), "One two. Three four five.");
    assert_eq!(doc.text_after(0, 25), "One two. Three four five.");
    assert_eq!(doc.text_after(0, 24), "One two.");
    assert_eq!(doc.text_after(4, 4), "two.");
    // No sentence end fits: the last word end; then mid-word.
    assert_eq!(doc.text_after(9, 12), "Three four");
    assert_eq!(doc.text_after(9, 3), "Thr");
    assert_eq!(doc.text_after(99, 3), "");
    // A paragraph end counts even without a terminator.
    let doc = Document::new("ab cd\n\nef gh", 0);
    assert_eq!(doc.text_after(0, 8), "ab cd");
    // A sentence end whose next sentence starts beyond the window.
    let doc = Document::new("Hi.      There", 0);
    assert_eq!(doc.text_after(0, 5), "Hi.");
    let doc = Document::new("Hi. Yo      ", 0);
    assert_eq!(doc.text_after(0, 8), "Hi. Yo");
}

// ---------------------------------------------------------------------------------------
// Differential property test

/// laya-harness's reference model of LSP's edit rules (vscode-languageserver-node's
/// `TextDocument` over a `Vec<char>`, written for clarity and independently of the rope), in
/// this crate's types. The server's random-edit test and `laya stress` check against it too.
struct Model(LspText);

impl std::ops::Deref for Model {
    type Target = LspText;
    fn deref(&self) -> &LspText {
        &self.0
    }
}

fn enc_of(enc: PositionEncoding) -> Encoding {
    match enc {
        Utf8 => Encoding::Utf8,
        Utf16 => Encoding::Utf16,
        Utf32 => Encoding::Utf32,
    }
}

fn at(pos: Position) -> (usize, usize) {
    (pos.line as usize, pos.character as usize)
}

impl Model {
    fn new(text: &str) -> Self {
        Model(LspText::new(text))
    }

    fn offset_of(&self, pos: Position, enc: PositionEncoding) -> usize {
        self.0.offset_of(at(pos), enc_of(enc))
    }

    fn position_of(&self, idx: usize, enc: PositionEncoding) -> Position {
        let (line, character) = self.0.position_of(idx, enc_of(enc));
        p(line as u32, character as u32)
    }

    fn apply(&mut self, range: Option<Range>, text: &str, enc: PositionEncoding) {
        self.0.apply(range.map(|r| (at(r.start), at(r.end))), text, enc_of(enc));
    }

    fn valid_positions(&self, enc: PositionEncoding) -> Vec<Position> {
        self.0.valid_positions(enc_of(enc)).into_iter().map(|(l, c)| p(l as u32, c as u32)).collect()
    }
}

fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["a", "b", "xyz", " ", ". ", "é", "中", "😀", "👍🏽", "\r\n", "\r", "\n", "\n\n", "\u{2028}"])
}

fn text(max_pieces: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..max_pieces).prop_map(|v| v.concat())
}

fn position() -> impl Strategy<Value = Position> {
    let line = prop_oneof![6 => 0..6u32, 2 => 0..400u32, 1 => Just(u32::MAX)];
    let character = prop_oneof![6 => 0..12u32, 2 => 0..80u32, 1 => Just(u32::MAX)];
    (line, character).prop_map(|(line, character)| p(line, character))
}

fn encoding() -> impl Strategy<Value = PositionEncoding> {
    prop::sample::select(ENCODINGS.to_vec())
}

#[derive(Debug, Clone)]
struct Change {
    range: Option<Range>,
    text: String,
    enc: PositionEncoding,
}

fn change() -> impl Strategy<Value = Change> {
    let range = prop_oneof![1 => Just(None), 12 => (position(), position()).prop_map(|(a, b)| Some(Range::new(a, b)))];
    let new_text = prop_oneof![8 => text(6), 1 => text(40)];
    (range, new_text, encoding()).prop_map(|(range, text, enc)| Change { range, text, enc })
}

/// A starting text: usually small, sometimes a few KB (several rope chunks).
fn start_text() -> impl Strategy<Value = String> {
    prop_oneof![10 => text(30), 1 => (text(30), 10..80usize).prop_map(|(t, n)| t.repeat(n))]
}

fn check_edit(before: &str, after: &str, e: &Edit) {
    let rebuilt = format!("{}{}{}", &before[..e.start_byte], &after[e.start_byte..e.new_end_byte], &before[e.old_end_byte..]);
    assert_eq!(rebuilt, after, "edit {e:?}");
    assert_eq!(before[..e.start_byte].chars().count(), e.start_char);
    assert_eq!(before[..e.old_end_byte].chars().count(), e.old_end_char);
    assert_eq!(after[..e.new_end_byte].chars().count(), e.new_end_char);
}

/// Checks conversions against the model at about `samples` evenly spaced char indices,
/// valid positions and lines per encoding (all of them when there are fewer), and at
/// `probes` (arbitrary, often out-of-range positions).
fn check_positions(doc: &Document, model: &Model, probes: &[Position], samples: usize) {
    let n = model.chars.len();
    let stride = |len: usize| (len / samples).max(1);
    for enc in ENCODINGS {
        for &pos in probes {
            assert_eq!(doc.offset_of(pos, enc), model.offset_of(pos, enc), "offset_of({pos:?}, {enc:?})");
        }
        for idx in (0..=n + 1).step_by(stride(n)).chain([n, n + 1]) {
            let pos = doc.position_of(idx, enc);
            assert_eq!(pos, model.position_of(idx, enc), "position_of({idx}, {enc:?})");
            // Round trip, except past the end and between the \r and \n of a CRLF.
            let mid_crlf = idx > 0 && idx < n && model.chars[idx] == '\n' && model.chars[idx - 1] == '\r';
            if idx <= n && !mid_crlf {
                assert_eq!(doc.offset_of(pos, enc), idx, "offset_of(position_of({idx}, {enc:?}))");
            }
        }
        let valid = model.valid_positions(enc);
        for &pos in valid.iter().step_by(stride(valid.len())).chain(valid.last()) {
            assert_eq!(doc.position_of(doc.offset_of(pos, enc), enc), pos, "round trip {pos:?} {enc:?}");
        }
    }
    let lines = model.line_starts.len();
    assert_eq!(doc.len_lines(), lines);
    for line in (0..lines).step_by(stride(lines)).chain([lines - 1, lines]) {
        let text = match model.line_starts.get(line) {
            Some(_) => {
                let (s, e) = model.line(line);
                model.chars[s..e].iter().collect::<String>()
            }
            None => String::new(),
        };
        assert_eq!(doc.line_text(line), text, "line {line}");
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn document_matches_the_reference_model(
        start in start_text(),
        changes in prop::collection::vec(change(), 1..9),
        probes in prop::collection::vec(position(), 8),
    ) {
        let mut doc = Document::new(&start, 0);
        let mut model = Model::new(&start);
        check_positions(&doc, &model, &probes, 8);
        for (i, c) in changes.iter().enumerate() {
            let before = doc.text();
            let edit = doc.apply_change(c.range, &c.text, c.enc).unwrap();
            model.apply(c.range, &c.text, c.enc);
            let after = doc.text();
            prop_assert_eq!(&after, &model.text(), "after change {}: {:?}", i, c);
            check_edit(&before, &after, &edit);
            check_positions(&doc, &model, &probes, 8);
        }
        check_positions(&doc, &model, &probes, 150);
        // The context helpers never panic and stay within their bounds.
        let n = doc.len_chars();
        for idx in [0, n / 3, n / 2, n] {
            for max in [0, 1, 7, 40] {
                let b = doc.text_before(idx, max);
                let a = doc.text_after(idx, max);
                prop_assert!(b.chars().count() <= max && a.chars().count() <= max);
                prop_assert!(model.chars[..idx].iter().collect::<String>().ends_with(&b));
                prop_assert!(model.chars[idx..].iter().collect::<String>().starts_with(&a));
            }
            let s = doc.sentence_start_before(idx);
            prop_assert!(s <= idx);
            let para = doc.paragraph_at(idx);
            prop_assert!(para.start <= para.end && para.end <= n);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Cost

#[test]
#[cfg_attr(feature = "ropey-small-chunks", ignore = "9-byte chunks make 20 MB slow")]
fn edits_on_a_20_mb_document_do_not_copy_it() {
    let line = "Une phrase d’exemple, avec un peu de texte — et un 😀.\r\n";
    let text = line.repeat(20_000_000 / line.len());
    let mut doc = Document::new(&text, 0);
    drop(text);
    let lines = doc.len_lines() as u32;
    let started = std::time::Instant::now();
    for i in 0..10_000u32 {
        let l = (i.wrapping_mul(7919)) % lines;
        let enc = ENCODINGS[i as usize % 3];
        let range = Range::new(p(l, 10), p(l, 14 + i % 5));
        doc.apply_change(Some(range), "abcd", enc).unwrap();
        let _ = doc.position_of(doc.offset_of(p(l, 3), enc), enc);
    }
    let _ = doc.text_before(doc.len_chars() / 2, 2_000);
    let _ = doc.paragraph_at(doc.len_chars() / 2);
    let elapsed = started.elapsed();
    // Copying 20 MB per edit would take 20 s or more; O(log n) edits and conversions take
    // about 50 µs each in a debug build.
    assert!(elapsed.as_secs_f64() < 5.0, "10,000 edits took {elapsed:?}");
}

/// What the language server uses: 600 to 1,500 characters before the cursor.
const MIN: usize = 600;
const MAX: usize = 1500;

#[test]
fn the_context_window_depends_on_the_text_and_the_cursor_alone() {
    let sentence = "The quick brown fox jumps over the lazy dog again. ";
    let doc = Document::new(&sentence.repeat(100), 1);
    let len = doc.len_chars();
    assert_eq!(doc.window_start(MAX, MIN, MAX), 0, "a short text is read whole");
    let mut moves = 0;
    let mut last = 0;
    for to in (MAX..len).step_by(7) {
        let start = doc.window_start(to, MIN, MAX);
        assert!(to - start >= MIN.min(to) && to - start <= MAX + sentence.len(), "{to}: {start}");
        assert_eq!(doc.sentence_start_before(start), start, "{to}: starts a sentence");
        moves += usize::from(start != last);
        last = start;
    }
    assert!(moves <= (len - MAX) / (MAX - MIN) + 1, "it moves once a step, not at every key: {moves}");
    // A line with no sentence start in reach: after a space near the grid point.
    let doc = Document::new(&"word ".repeat(1000), 1);
    let start = doc.window_start(4000, MIN, MAX);
    assert!((MIN..=MAX).contains(&(4000 - start)), "{start}");
    assert_eq!(doc.rope().char(start - 1), ' ');
}

#[test]
fn paragraphs_and_their_starts_agree() {
    let text = "Title\n\nFirst line\nsecond line\n  \t\nLast";
    let ps = laya_text::paragraphs(text);
    assert_eq!(ps, [(0, "Title\n".to_string()), (7, "First line\nsecond line\n".to_string()), (34, "Last".to_string())]);
    let doc = Document::new(text, 1);
    for (start, p) in &ps {
        for i in 0..p.chars().count() {
            assert_eq!(doc.paragraph_start(start + i), Some(*start), "{i} into {p:?}");
        }
    }
    assert_eq!(doc.paragraph_start(6), None, "a blank line");
    assert_eq!(doc.paragraph_start(31), None, "a line of spaces is blank");
}
