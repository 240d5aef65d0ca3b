//! Which parts of a text are prose: words, and the spans a writing assistant must leave alone
//! (front matter, fenced code, inline code, math, URLs, e-mail addresses, @mentions, HTML tags,
//! link targets, LaTeX commands).

use std::ops::Range;

use crate::is_word_char;

/// Byte spans of the words of `text`: runs of word characters, without leading or trailing
/// apostrophes (quote marks).
pub fn words(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let push = |s: usize, e: usize, out: &mut Vec<(usize, usize)>| {
        let w = &text[s..e];
        let t = w.trim_start_matches(['\'', '’']);
        let s2 = s + (w.len() - t.len());
        let t2 = t.trim_end_matches(['\'', '’']);
        if !t2.is_empty() {
            out.push((s2, s2 + t2.len()));
        }
    };
    for (i, c) in text.char_indices() {
        match (is_word_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                push(s, i, &mut out);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        push(s, text.len(), &mut out);
    }
    out
}

/// The spans of a text that are not prose, sorted and disjoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProseMask {
    excluded: Vec<Range<usize>>,
}

impl ProseMask {
    /// Whether byte `at` is prose.
    pub fn contains(&self, at: usize) -> bool {
        let i = self.excluded.partition_point(|r| r.end <= at);
        self.excluded.get(i).is_none_or(|r| at < r.start)
    }

    /// The excluded spans.
    pub fn excluded(&self) -> &[Range<usize>] {
        &self.excluded
    }
}

/// Finds the non-prose spans of `text` (Markdown-, LaTeX- and plain-text-aware).
pub fn prose_mask(text: &str) -> ProseMask {
    let mut ex: Vec<Range<usize>> = Vec::new();
    let mut offset = 0usize;
    let mut fence: Option<(usize, String)> = None; // start, marker
    let mut first_line = true;
    let mut front: Option<(usize, &str)> = None;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_end_matches(['\n', '\r']);
        if first_line && (trimmed == "---" || trimmed == "+++") {
            front = Some((start, if trimmed == "---" { "---" } else { "+++" }));
            first_line = false;
            continue;
        }
        first_line = false;
        if let Some((fs, marker)) = front {
            if trimmed == marker || (marker == "---" && trimmed == "...") {
                ex.push(fs..offset);
                front = None;
            }
            continue;
        }
        let lead = trimmed.trim_start();
        if let Some((fs, marker)) = &fence {
            if lead.starts_with(marker.as_str()) && lead.trim_start_matches(marker.chars().next().unwrap_or('`')).trim().is_empty() {
                ex.push(*fs..offset);
                fence = None;
            }
            continue;
        }
        if lead.starts_with("```") || lead.starts_with("~~~") {
            let ch = lead.chars().next().unwrap_or('`');
            let n = lead.chars().take_while(|&c| c == ch).count();
            fence = Some((start, ch.to_string().repeat(n)));
            continue;
        }
        if lead == "$$"
            || lead.starts_with("\\begin{")
                && (lead.contains("equation") || lead.contains("align") || lead.contains("verbatim") || lead.contains("lstlisting"))
        {
            // Display math or a verbatim environment: until its end line.
            let end_marker = if lead == "$$" { "$$".to_string() } else { lead.replacen("\\begin", "\\end", 1) };
            fence = Some((start, end_marker));
            continue;
        }
        inline_spans(trimmed, start, &mut ex);
    }
    if let Some((fs, _)) = fence {
        ex.push(fs..text.len()); // an unclosed fence runs to the end, as Markdown renders it
    }
    if let Some((fs, _)) = front {
        ex.push(fs..text.len());
    }
    ex.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::new();
    for r in ex {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    ProseMask { excluded: merged }
}

/// Byte spans of the identifier pieces inside the inline code spans of `text` (`like_this`, not
/// fenced blocks) and the bare identifiers of its prose (fill_uninit): runs of ASCII letters, cut where camelCase starts a new word ("TokenStream"
/// is "Token" and "Stream", "HTTPServer" is "HTTP" and "Server"). A spell checker reads these
/// alone: they are names, not sentences.
pub fn code_pieces(text: &str, mask: &ProseMask) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for r in mask.excluded() {
        let span = &text[r.clone()];
        let code = span.starts_with('`') || span.starts_with(|c: char| c.is_ascii_alphanumeric()) && is_bare_identifier(span);
        if !code || span.contains('\n') {
            continue;
        }
        let b = span.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if !b[i].is_ascii_alphabetic() {
                i += 1;
                continue;
            }
            let run = i;
            let mut pieces = vec![];
            let mut piece = i;
            while i < b.len() && b[i].is_ascii_alphabetic() {
                // A new piece where a lowercase letter meets a capital, or where a run of
                // capitals meets a capitalized word.
                let cut = i > piece
                    && b[i].is_ascii_uppercase()
                    && (b[i - 1].is_ascii_lowercase() || b[i - 1].is_ascii_uppercase() && b.get(i + 1).is_some_and(u8::is_ascii_lowercase));
                if cut {
                    pieces.push((r.start + piece, r.start + i));
                    piece = i;
                }
                i += 1;
            }
            pieces.push((r.start + piece, r.start + i));
            // Letters next to a digit are part of a name such as "aarch64" or "u64hibits".
            let digit = |k: Option<&u8>| k.is_some_and(u8::is_ascii_digit);
            if !digit(run.checked_sub(1).and_then(|k| b.get(k))) && !digit(b.get(i)) {
                out.extend(pieces);
            }
        }
    }
    out
}

/// Inline spans of one line (no line break), at byte `base`.
fn inline_spans(line: &str, base: usize, ex: &mut Vec<Range<usize>>) {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &line[i..];
        // `code` (any run of backticks, closed by the same run)
        if b[i] == b'`' {
            let n = rest.bytes().take_while(|&c| c == b'`').count();
            let marker = &rest[..n];
            if let Some(close) = rest[n..].find(marker) {
                let end = i + n + close + n;
                ex.push(base + i..base + end);
                i = end;
                continue;
            }
            i += n;
            continue;
        }
        // $math$ (not "$5 and $6": the opening $ must touch a non-space, the closing too)
        if b[i] == b'$' && b.get(i + 1).is_some_and(|c| !c.is_ascii_whitespace() && !c.is_ascii_digit()) {
            if let Some(close) = rest[1..].find('$') {
                if !rest[1..1 + close].ends_with(' ') {
                    let end = i + 1 + close + 1;
                    ex.push(base + i..base + end);
                    i = end;
                    continue;
                }
            }
        }
        // URLs and e-mail addresses: to the next whitespace or closing bracket.
        let url = rest.starts_with("http://")
            || rest.starts_with("https://")
            || rest.starts_with("ftp://")
            || rest.starts_with("file://")
            || rest.starts_with("mailto:")
            || (rest.starts_with("www.") && (i == 0 || !is_word_char(line[..i].chars().next_back().unwrap_or(' '))));
        if url {
            let len = rest.find(|c: char| c.is_whitespace() || matches!(c, '>' | ')' | ']' | '"' | '\'')).unwrap_or(rest.len());
            ex.push(base + i..base + i + len);
            i += len.max(1);
            continue;
        }
        if b[i] == b'@' && i > 0 && is_word_char(line[..i].chars().next_back().unwrap_or(' ')) {
            // an e-mail address: from its local part's start to the domain's end
            let start = line[..i].rfind(|c: char| c.is_whitespace() || matches!(c, '<' | '(' | '[')).map_or(0, |p| p + 1);
            let len = rest.find(|c: char| c.is_whitespace() || matches!(c, '>' | ')' | ']')).unwrap_or(rest.len());
            ex.push(base + start..base + i + len);
            i += len.max(1);
            continue;
        }
        // @mentions of people and teams ("Thanks to @matklad and @rust-lang/libs"): handles, not words.
        if b[i] == b'@' && b.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric()) {
            let len = 1 + rest[1..].find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/'))).unwrap_or(rest.len() - 1);
            ex.push(base + i..base + i + len);
            i += len;
            continue;
        }
        // ](link target) and <tag ...>
        if rest.starts_with("](") {
            if let Some(close) = rest.find(')') {
                ex.push(base + i + 1..base + i + close + 1);
                i += close + 1;
                continue;
            }
        }
        if b[i] == b'<' && b.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'/' || *c == b'!') {
            if let Some(close) = rest.find('>') {
                ex.push(base + i..base + i + close + 1);
                i += close + 1;
                continue;
            }
        }
        // \latex commands
        if b[i] == b'\\' && b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            let len = 1 + rest[1..].bytes().take_while(u8::is_ascii_alphabetic).count();
            ex.push(base + i..base + i + len);
            i += len;
            continue;
        }
        // A bare identifier or path outside backticks ("fill_uninit", "kv_unstable feature",
        // "tmikus/ahocorasick_rs", "std::io"): a run of the characters names and paths are made
        // of, starting a word,
        // with an underscore or "::" between two letters or digits. Its pieces are names, as in
        // inline code (see [`code_pieces`]).
        let starts_word =
            i == 0 || line[..i].chars().next_back().is_some_and(|c| c.is_whitespace() || matches!(c, '(' | '[' | '"' | '\'' | '“' | '‘'));
        if starts_word && b[i].is_ascii_alphanumeric() {
            let run = rest.find(|c: char| !(c.is_alphanumeric() || "_:/.-()<>&*#".contains(c))).unwrap_or(rest.len());
            let run = rest[..run].trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '"', '\'', '”', '’']);
            if is_bare_identifier(run) {
                ex.push(base + i..base + i + run.len());
                i += run.len();
                continue;
            }
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
}

/// Whether `run` (no whitespace) is an identifier or a path written without backticks: an
/// underscore or "::" with a letter or digit on each side. A URL is not one (it is masked whole).
fn is_bare_identifier(run: &str) -> bool {
    let b = run.as_bytes();
    let joined = |k: usize, n: usize| k > 0 && b[k - 1].is_ascii_alphanumeric() && b.get(k + n).is_some_and(u8::is_ascii_alphanumeric);
    !run.contains("://") && !run.contains('@') && (0..b.len()).any(|k| (b[k] == b'_' && joined(k, 1)) || (b[k..].starts_with(b"::") && joined(k, 2)))
}

/// Whether the cursor at byte `at` is in prose (completions are offered only there).
pub fn is_prose_at(text: &str, at: usize) -> bool {
    let at = at.min(text.len());
    let mask = prose_mask(text);
    // An inline code span or math still open on the cursor's line (`cargo |) is not prose.
    let line = &text[text[..at].rfind('\n').map_or(0, |i| i + 1)..at];
    let open = |m: char| line.chars().filter(|&c| c == m).count() % 2 == 1;
    if open('`') || (open('$') && line.rsplit('$').next().is_some_and(|t| !t.starts_with(' '))) {
        return false;
    }
    // The cursor sits after the character it follows: look at the byte before it too.
    mask.contains(at) && (at == 0 || mask.contains(at - 1) || text[..at].ends_with([' ', '\n']))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excluded(t: &str) -> Vec<&str> {
        prose_mask(t).excluded().iter().map(|r| &t[r.clone()]).collect()
    }

    #[test]
    fn code_pieces_split_identifiers_in_inline_code_and_bare_ones() {
        let t = "Use `TokenStream` and `HTTPServer::new(my_value)` on `aarch64`.\n```\nlet Rectagle = 1;\n```\n";
        let got: Vec<&str> = code_pieces(t, &prose_mask(t)).into_iter().map(|(s, e)| &t[s..e]).collect();
        assert_eq!(got, ["Token", "Stream", "HTTP", "Server", "new", "my", "value"]);
        let t = "Implement fill_uninit (see tmikus/ahocorasick_rs and std::io::Read), and/or the _emph_ one.";
        let got: Vec<&str> = code_pieces(t, &prose_mask(t)).into_iter().map(|(s, e)| &t[s..e]).collect();
        assert_eq!(got, ["fill", "uninit", "tmikus", "ahocorasick", "rs", "std", "io", "Read"]);
    }

    #[test]
    fn bare_identifiers_and_paths_are_not_prose() {
        assert_eq!(excluded("the kv_unstable feature, and (fill_uninit)."), ["kv_unstable", "fill_uninit"]);
        assert_eq!(excluded("Use std::io::Read; see tmikus/ahocorasick_rs."), ["std::io::Read", "tmikus/ahocorasick_rs"]);
        // Not identifiers: words joined by a slash or a hyphen, emphasis, an e-mail address.
        assert_eq!(excluded("read and/or write a well-known _word_ to bob_s@exmaple.org"), ["bob_s@exmaple.org"]);
        assert!(!is_prose_at("Call fill_un", 12));
        assert_eq!(excluded("We’ve held up—that is, café_au_lait—and “x::y”."), ["café_au_lait", "x::y"]);
    }

    #[test]
    fn words_skip_quotes_and_punctuation() {
        let t = "'Hello,' she said. Don't-go l’été";
        let w: Vec<&str> = words(t).into_iter().map(|(s, e)| &t[s..e]).collect();
        assert_eq!(w, ["Hello", "she", "said", "Don't", "go", "l’été"]);
    }

    #[test]
    fn code_math_urls_and_front_matter_are_not_prose() {
        assert_eq!(excluded("Use `cargo tset` now"), ["`cargo tset`"]);
        assert_eq!(excluded("See https://exmaple.com/x. Then"), ["https://exmaple.com/x."]);
        assert_eq!(excluded("Mail bob@exmaple.org today"), ["bob@exmaple.org"]);
        assert_eq!(excluded("Thanks to @matklad, @oli-obk and @rust-lang/libs. At @ noon"), ["@matklad", "@oli-obk", "@rust-lang/libs"]);
        assert_eq!(excluded("Let $x_i$ be; it costs $5 and $6."), ["$x_i$"]);
        assert_eq!(excluded("---\ntitle: x\n---\nText"), ["---\ntitle: x\n---\n"]);
        assert_eq!(excluded("a\n```\nfn mian() {}\n```\nb"), ["```\nfn mian() {}\n```\n"]);
        assert_eq!(excluded("[link](http://x.y/z) here"), ["(http://x.y/z)"]);
        assert_eq!(excluded("A <span class=x>b</span>"), ["<span class=x>", "</span>"]);
        assert_eq!(excluded("\\emph{word}"), ["\\emph"]);
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        let t = "a\n```\ncode";
        assert!(!prose_mask(t).contains(t.len() - 1));
        assert!(!is_prose_at(t, t.len()));
        assert!(is_prose_at("plain text", 10));
        assert!(!is_prose_at("Run `cargo ", 11));
        assert!(is_prose_at("Run `cargo` now ", 16));
    }
}
