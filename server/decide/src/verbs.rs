//! Verb-form slips: the form of a verb that the word before it asks for ("it return" for "it
//! returns", "will returns", "does not works", "is use" for "is used", "as show in" for "as
//! shown in"), as candidates for the model to weigh.
//!
//! These rules only say which other form to ask about; whether the text reads better with it is
//! the model's call, at `SpellerOptions::verb_margin`. A rule that proposes a form the sentence
//! does not want ("make it work" asked about "works") costs a scoring, not a false alarm.

use crate::lexicon::Lexicon;
use crate::slips::{third_person_forms, BASE_AFTER, DO, PARTICIPLE_AFTER, PERSON_PAIRS};

/// The least ln prior of a form to be offered (as for the other grammatical number).
const FORM_PRIOR: f32 = -16.0;
/// Shortest word asked about, but for the irregular verbs' bases ("is do" for "is done").
const LETTERS: usize = 3;

/// "as" asks for a participle before these: "as show in Listing 17-15", "as describe below".
const AS_BEFORE: &[&str] = &["in", "below", "above", "earlier", "before", "previously", "later", "here", "there", "by"];
/// Subjects that take a verb's -s form ("it return" for "it returns").
const THIRD_SINGULAR: &[&str] = &["he", "she", "it"];
/// Subjects that take its base form ("they returns" for "they return").
const OTHER_PERSONS: &[&str] = &["they", "we", "you"];
/// Words after which a pronoun is an object, and a bare verb after it is right: "make it work",
/// "let it run", "does it return", "will it fit".
const OBJECT_AFTER: &[&str] = &[
    "let", "lets", "make", "makes", "made", "making", "help", "helps", "see", "saw", "watch", "have", "has", "had", "hear", "do", "does", "did",
    "can", "could", "will", "would", "shall", "should", "may", "might", "must", "to", "bid", "letting", "helped", "watched",
];
/// Adverbs that may stand between the word that asks and the verb: "will also returns", "it
/// then return", "is not use".
const ADVERBS: &[&str] = &[
    "not", "also", "only", "always", "never", "still", "just", "then", "now", "often", "usually", "actually", "really", "even", "simply", "first",
    "already", "all",
];

/// Irregular verbs: base, past, past participle.
const IRREGULAR: &[(&str, &str, &str)] = &[
    ("begin", "began", "begun"),
    ("bind", "bound", "bound"),
    ("bite", "bit", "bitten"),
    ("break", "broke", "broken"),
    ("bring", "brought", "brought"),
    ("build", "built", "built"),
    ("buy", "bought", "bought"),
    ("catch", "caught", "caught"),
    ("choose", "chose", "chosen"),
    ("come", "came", "come"),
    ("do", "did", "done"),
    ("draw", "drew", "drawn"),
    ("drive", "drove", "driven"),
    ("eat", "ate", "eaten"),
    ("fall", "fell", "fallen"),
    ("feel", "felt", "felt"),
    ("fight", "fought", "fought"),
    ("find", "found", "found"),
    ("fly", "flew", "flown"),
    ("forbid", "forbade", "forbidden"),
    ("forget", "forgot", "forgotten"),
    ("freeze", "froze", "frozen"),
    ("get", "got", "gotten"),
    ("give", "gave", "given"),
    ("go", "went", "gone"),
    ("grow", "grew", "grown"),
    ("hang", "hung", "hung"),
    ("hide", "hid", "hidden"),
    ("hold", "held", "held"),
    ("keep", "kept", "kept"),
    ("know", "knew", "known"),
    ("lead", "led", "led"),
    ("leave", "left", "left"),
    ("lose", "lost", "lost"),
    ("make", "made", "made"),
    ("mean", "meant", "meant"),
    ("meet", "met", "met"),
    ("override", "overrode", "overridden"),
    ("pay", "paid", "paid"),
    ("rewrite", "rewrote", "rewritten"),
    ("ride", "rode", "ridden"),
    ("rise", "rose", "risen"),
    ("run", "ran", "run"),
    ("say", "said", "said"),
    ("see", "saw", "seen"),
    ("seek", "sought", "sought"),
    ("sell", "sold", "sold"),
    ("send", "sent", "sent"),
    ("shake", "shook", "shaken"),
    ("show", "showed", "shown"),
    ("sing", "sang", "sung"),
    ("sit", "sat", "sat"),
    ("speak", "spoke", "spoken"),
    ("spend", "spent", "spent"),
    ("stand", "stood", "stood"),
    ("steal", "stole", "stolen"),
    ("swim", "swam", "swum"),
    ("take", "took", "taken"),
    ("teach", "taught", "taught"),
    ("tell", "told", "told"),
    ("think", "thought", "thought"),
    ("throw", "threw", "thrown"),
    ("understand", "understood", "understood"),
    ("undo", "undid", "undone"),
    ("wake", "woke", "woken"),
    ("wear", "wore", "worn"),
    ("win", "won", "won"),
    ("withdraw", "withdrew", "withdrawn"),
    ("write", "wrote", "written"),
];

/// The forms of the word at `spans[i]` that the words before it ask for, where it has another
/// form: its base form after a modal ("can returns" -> "return", "will used" -> "use"), its past
/// participle after "be" or "have" ("is use" -> "used", "has show" -> "shown"), its -s form after
/// "he", "she" or "it" as a subject, its base form after "they", "we" or "you". Lowercase words
/// only, with nothing but spaces between, and up to one adverb ("will also returns").
pub(crate) fn verb_forms(lexicon: &Lexicon, text: &str, spans: &[(usize, usize)], i: usize) -> Vec<String> {
    let word = &text[spans[i].0..spans[i].1];
    let short = word.len() < LETTERS && !IRREGULAR.iter().any(|(base, _, _)| *base == word);
    if short || !word.chars().all(|c| c.is_ascii_lowercase() || c == '\'' || c == '’') {
        return vec![];
    }
    let joined = |j: usize| {
        let gap = &text[spans[j].1..spans[j + 1].0];
        !gap.is_empty() && gap.chars().all(|c| c == ' ')
    };
    let lower = |j: usize| uncontracted(&text[spans[j].0..spans[j].1].to_lowercase());
    // The word that asks, past one adverb; whether "not" came between or after it.
    let mut asker = None;
    let mut negated = false;
    for j in (i.saturating_sub(2)..i).rev() {
        if !joined(j) {
            break;
        }
        let (w, not) = lower(j);
        if j + 1 == i && ADVERBS.contains(&w.as_str()) {
            negated = w == "not";
            continue;
        }
        negated |= not;
        asker = Some((j, w));
        break;
    }
    let Some((j, asker)) = asker else { return vec![] };
    let next = spans.get(i + 1).map(|&(s, e)| &text[s..e]);
    let mut out: Vec<String> = Vec::new();
    if BASE_AFTER.contains(&asker.as_str()) || (negated && DO.contains(&asker.as_str())) {
        out.extend(base_forms(word));
    } else if PARTICIPLE_AFTER.contains(&asker.as_str()) || (asker == "as" && j + 1 == i && next.is_some_and(|n| AS_BEFORE.contains(&n))) {
        out.extend(participles(word));
    } else if THIRD_SINGULAR.contains(&asker.as_str()) || OTHER_PERSONS.contains(&asker.as_str()) {
        // A pronoun after a verb that takes a bare infinitive is its object ("make it work").
        if j > 0 && joined(j - 1) && OBJECT_AFTER.contains(&lower(j - 1).0.as_str()) {
            return vec![];
        }
        let third = THIRD_SINGULAR.contains(&asker.as_str());
        let (verb, not) = uncontracted(word);
        if let Some(&(base, s)) = PERSON_PAIRS.iter().find(|(b, s)| if third { *b == verb } else { *s == verb }) {
            let form = if third { s } else { base };
            // "it don't" -> "doesn't", written with the apostrophe the writer used.
            out.push(if not { format!("{form}{}", &word[verb.len()..]) } else { form.to_string() });
        } else if third {
            out.extend(third_person_forms(word));
        } else if !third && word.ends_with('s') && !word.ends_with("ss") {
            out.extend(base_forms(word));
        }
    }
    let mut kept: Vec<String> = Vec::new();
    for f in out {
        if f != word && lexicon.log_prior(&f).is_some_and(|p| p > FORM_PRIOR) && !kept.contains(&f) {
            kept.push(f);
        }
    }
    kept
}

/// A negative contraction as its verb and whether it was one: "doesn't" -> ("does", true),
/// "won’t" -> ("will", true), "can't" -> ("can", true), "will" -> ("will", false).
fn uncontracted(word: &str) -> (String, bool) {
    let w = word.replace('’', "'");
    match w.strip_suffix("n't") {
        Some("wo") => ("will".into(), true),
        Some("ca") => ("can".into(), true),
        Some("sha") => ("shall".into(), true),
        Some(verb) if !verb.is_empty() => (verb.to_string(), true),
        _ => (w, false),
    }
}

/// The base forms `word` may be an inflection of: "returns" -> "return", "used" -> "use",
/// "stopped" -> "stop", "copied" -> "copy", "wrote" -> "write" (unchecked against the lexicon).
fn base_forms(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (base, past, participle) in IRREGULAR {
        if word == *past || word == *participle {
            out.push(base.to_string());
        }
    }
    if let Some(stem) = word.strip_suffix("ies") {
        out.push(format!("{stem}y"));
    }
    if let Some(stem) = word.strip_suffix("es") {
        out.push(stem.to_string());
    }
    if let Some(stem) = word.strip_suffix('s').filter(|_| !word.ends_with("ss")) {
        out.push(stem.to_string());
    }
    if let Some(stem) = word.strip_suffix("ied") {
        out.push(format!("{stem}y"));
    }
    if let Some(stem) = word.strip_suffix("ed") {
        out.push(stem.to_string());
        out.push(format!("{stem}e"));
        let b = stem.as_bytes();
        if b.len() >= 2 && b[b.len() - 1] == b[b.len() - 2] {
            out.push(stem[..stem.len() - 1].to_string());
        }
    }
    out.retain(|f| f.len() >= 2);
    out
}

/// The past participles of `word` as a base form: "use" -> "used", "stop" -> "stopped", "copy"
/// -> "copied", "show" -> "shown" (unchecked against the lexicon). None for a word that is
/// already a past form or ends in -s or -ing.
fn participles(word: &str) -> Vec<String> {
    if word.ends_with("ed") || word.ends_with("ing") || word.ends_with('s') {
        return vec![];
    }
    if let Some((_, _, p)) = IRREGULAR.iter().find(|(b, _, _)| *b == word) {
        return vec![p.to_string()];
    }
    if IRREGULAR.iter().any(|(_, past, p)| *past == word || *p == word) {
        return vec![];
    }
    let mut out = Vec::new();
    if word.ends_with('e') {
        out.push(format!("{word}d"));
    } else if let Some(stem) = word.strip_suffix('y').filter(|s| s.ends_with(|c: char| !"aeiou".contains(c))) {
        out.push(format!("{stem}ied"));
    } else {
        out.push(format!("{word}ed"));
        if let Some(last) = word.chars().last().filter(|c| !"aeiouwxy".contains(*c)) {
            out.push(format!("{word}{last}ed"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_forms_undo_the_common_endings() {
        assert!(base_forms("returns").contains(&"return".to_string()));
        assert!(base_forms("used").contains(&"use".to_string()));
        assert!(base_forms("stopped").contains(&"stop".to_string()));
        assert!(base_forms("copied").contains(&"copy".to_string()));
        assert!(base_forms("wrote").contains(&"write".to_string()));
        assert!(base_forms("matches").contains(&"match".to_string()));
    }

    #[test]
    fn negative_contractions_are_their_verb_and_not() {
        assert_eq!(uncontracted("doesn't"), ("does".to_string(), true));
        assert_eq!(uncontracted("won’t"), ("will".to_string(), true));
        assert_eq!(uncontracted("can't"), ("can".to_string(), true));
        assert_eq!(uncontracted("will"), ("will".to_string(), false));
    }

    #[test]
    fn participles_of_regular_and_irregular_verbs() {
        assert_eq!(participles("show"), ["shown"]);
        assert_eq!(participles("use"), ["used"]);
        assert_eq!(participles("copy"), ["copied"]);
        assert!(participles("stop").contains(&"stopped".to_string()));
        assert!(participles("added").is_empty());
        assert!(participles("written").is_empty());
    }
}
