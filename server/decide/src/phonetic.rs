//! How an English word sounds, roughly: a consonant skeleton ("apocryphal" and "apocraful" are
//! both APKRFL) that finds the words a writer spelled by ear, too far in letters for the edit
//! search ("burocratic" for "bureaucratic", "benj" for "binge", "assfalts" for "asphalts").
//! Our own rules in the spirit of Metaphone: letters that sound alike map to one symbol, vowels
//! count only at the start, silent letters drop, doubled sounds collapse.

/// The sound key of `word` (ASCII letters; anything else is ignored), or None when it has no
/// letters or other than ASCII ones (the rules are English).
pub fn sound_key(word: &str) -> Option<String> {
    if !word.is_ascii() {
        return None;
    }
    let w: Vec<u8> = word.bytes().filter(u8::is_ascii_alphabetic).map(|b| b.to_ascii_lowercase()).collect();
    if w.is_empty() {
        return None;
    }
    let at = |i: usize| w.get(i).copied().unwrap_or(0);
    let vowel = |c: u8| matches!(c, b'a' | b'e' | b'i' | b'o' | b'u' | b'y');
    let front = |c: u8| matches!(c, b'e' | b'i' | b'y');
    // Silent first letters: knee, gnome, pneumatic, write, psalm; x sounds like z at the start.
    let mut i = match (at(0), at(1)) {
        (b'k' | b'g' | b'p', b'n') | (b'w', b'r') | (b'p', b's') => 1,
        _ => 0,
    };
    let mut out: Vec<u8> = Vec::with_capacity(w.len());
    let push = |s: &[u8], out: &mut Vec<u8>| {
        for &c in s {
            if out.last() != Some(&c) {
                out.push(c);
            }
        }
    };
    if i == 0 && at(0) == b'x' {
        push(b"S", &mut out);
        i = 1;
    }
    while i < w.len() {
        let c = w[i];
        let (next, after) = (at(i + 1), at(i + 2));
        // Doubled letters sound once (but "cc" before e/i is "ks": accept).
        if i > 0 && w[i - 1] == c && c != b'c' {
            i += 1;
            continue;
        }
        let mut step = 1;
        match c {
            _ if vowel(c) && i == 0 => push(b"A", &mut out),
            _ if vowel(c) => {}
            b'b' if !(i + 1 == w.len() && i > 0 && w[i - 1] == b'm') => push(b"P", &mut out), // not lamb
            b'c' => {
                if next == b'h' {
                    push(b"X", &mut out);
                    step = 2;
                } else if next == b'i' && after == b'a' {
                    push(b"X", &mut out);
                } else if front(next) {
                    push(b"S", &mut out);
                } else {
                    push(b"K", &mut out);
                }
            }
            b'd' => {
                if next == b'g' && front(after) {
                    push(b"J", &mut out);
                    step = 2;
                } else {
                    push(b"T", &mut out);
                }
            }
            b'g' => {
                if next == b'h' && !vowel(after) {
                    step = 2; // light, though: silent
                } else if next == b'n' && (i + 2 == w.len() || (after == b'e' && at(i + 3) == b'd')) {
                    // sign, signed: silent
                } else if front(next) {
                    push(b"J", &mut out);
                } else {
                    push(b"K", &mut out);
                }
            }
            b'h' => {
                let after_quiet = i > 0 && matches!(w[i - 1], b'c' | b's' | b'p' | b't' | b'g' | b'w');
                if vowel(next) && !after_quiet {
                    push(b"H", &mut out);
                }
            }
            b'k' if !(i > 0 && w[i - 1] == b'c') => push(b"K", &mut out),
            b'p' => {
                if next == b'h' {
                    push(b"F", &mut out);
                    step = 2;
                } else {
                    push(b"P", &mut out);
                }
            }
            b'q' => push(b"K", &mut out),
            b's' => {
                if next == b'h' || (next == b'i' && matches!(after, b'o' | b'a')) {
                    push(b"X", &mut out);
                    step = if next == b'h' { 2 } else { 1 };
                } else if next == b'c' && at(i + 2) == b'h' {
                    push(b"SK", &mut out);
                    step = 3;
                } else {
                    push(b"S", &mut out);
                }
            }
            b't' => {
                if next == b'i' && matches!(after, b'o' | b'a') {
                    push(b"X", &mut out);
                } else if next == b'h' {
                    push(b"0", &mut out);
                    step = 2;
                } else if next == b'c' && after == b'h' {
                    // match: the t is silent
                } else {
                    push(b"T", &mut out);
                }
            }
            b'v' | b'f' => push(b"F", &mut out),
            b'w' if vowel(next) => push(b"W", &mut out),
            b'x' => push(b"KS", &mut out),
            b'z' => push(b"S", &mut out),
            b'j' => push(b"J", &mut out),
            b'l' => push(b"L", &mut out),
            b'm' => push(b"M", &mut out),
            b'n' => push(b"N", &mut out),
            b'r' => push(b"R", &mut out),
            _ => {}
        }
        i += step;
    }
    Some(String::from_utf8(out).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::sound_key;

    #[test]
    fn words_spelled_by_ear_sound_like_the_word_meant() {
        for (typed, meant) in [
            ("apocraful", "apocryphal"),
            ("burocratic", "bureaucratic"),
            ("benj", "binge"),
            ("assfalts", "asphalts"),
            ("canews", "canoes"),
            ("fisical", "physical"),
            ("nolege", "knowledge"),
            ("rite", "write"),
            ("sertain", "certain"),
            ("tommorow", "tomorrow"),
            ("lite", "light"),
        ] {
            assert_eq!(sound_key(typed), sound_key(meant), "{typed} / {meant}");
        }
    }

    #[test]
    fn words_that_sound_different_have_different_keys() {
        for (a, b) in [("cat", "hat"), ("bread", "breath"), ("ship", "sip"), ("gem", "game"), ("pan", "fan")] {
            assert_ne!(sound_key(a), sound_key(b), "{a} / {b}");
        }
        assert_eq!(sound_key("naïve"), None);
        assert_eq!(sound_key("42"), None);
    }
}
