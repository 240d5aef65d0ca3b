//! Verb-form slips: the form of a verb that the word before it asks for ("it return" for "it
//! returns", "will returns", "does not works", "is use" for "is used", "as show in" for "as
//! shown in"), as candidates for the model to weigh.
//!
//! These rules only say which other form to ask about; whether the text reads better with it is
//! the model's call, at `SpellerOptions::verb_margin`. A rule that proposes a form the sentence
//! does not want ("make it work" asked about "works") costs a scoring, not a false alarm.

use crate::lexicon::Lexicon;
use crate::slips::{clause_start, third_person_forms, BASE_AFTER, DO, PARTICIPLE_AFTER, PERSON_PAIRS, SAME_PAST};

/// The least ln prior of a form to be offered (as for the other grammatical number).
const FORM_PRIOR: f32 = -16.0;
/// Shortest word asked about, but for the irregular verbs' bases ("is do" for "is done") and
/// "is" ("I is", "they is").
const LETTERS: usize = 3;

/// "as" asks for a participle before these: "as show in Listing 17-15", "as describe below".
const AS_BEFORE: &[&str] = &["in", "below", "above", "earlier", "before", "previously", "later", "here", "there", "by"];
/// Subjects that take a verb's -s form ("it return" for "it returns").
const THIRD_SINGULAR: &[&str] = &["he", "she", "it"];
/// Subjects that take its base form ("they returns" for "they return"); "I" too, but for "be".
const OTHER_PERSONS: &[&str] = &["they", "we", "you"];
/// Words after "there is" that make its subject plural: "There is several ways". Not "some"
/// ("there is some code") or "both" ("there is both a cost and a gain").
const PLURAL_AFTER_THERE: &[&str] = &["several", "many", "multiple", "numerous", "various", "these", "those", "two", "three", "four", "five", "few"];
/// Words that make the word after them a noun: "the might of", "its will of".
const DETERMINERS_BEFORE_NOUN: &[&str] = &["the", "a", "an", "its", "their", "his", "her", "our", "your", "my"];
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

/// The forms the words around a verb ask for ([`verb_forms`]), and whether the sentence's shape
/// leaves no other reading of them (`plain`), so that less of the model's evidence will do.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct VerbForms {
    pub words: Vec<String>,
    pub plain: bool,
}

/// The forms of the word at `spans[i]` that the words before it ask for, where it has another
/// form: its base form after a modal ("can returns" -> "return", "will used" -> "use"), its past
/// participle after "be" or "have" ("is use" -> "used", "has show" -> "shown"), its -s form after
/// "he", "she" or "it" as a subject, its base form after "they", "we" or "you", and after "I" the
/// forms of "be", "have" and "do" ("I is" -> "am", "I has" -> "have"); "have" for "of" between a
/// modal and a participle ("should of known"); "are" for "is" in "there is several". Lowercase
/// words only, with nothing but spaces between, and up to one adverb ("will also returns").
///
/// Plain (see `SpellerOptions::plain_agreement_margin`): "of" for "have", "there is" before a
/// plural determiner, and a pronoun that opens its clause ("We has", "So it make") before a form
/// of "be", "have" or "do" or, for "he", "she" and "it", before a verb's base form that is not
/// also its past ("it set", SAME_PAST). A pronoun inside a clause may be an object ("the tests
/// make it work").
pub(crate) fn verb_forms(lexicon: &Lexicon, text: &str, spans: &[(usize, usize)], i: usize) -> VerbForms {
    let word = &text[spans[i].0..spans[i].1];
    let joined = |j: usize| {
        let gap = &text[spans[j].1..spans[j + 1].0];
        !gap.is_empty() && gap.chars().all(|c| c == ' ')
    };
    let lower = |j: usize| uncontracted(&text[spans[j].0..spans[j].1].to_lowercase());
    if word == "of" {
        let words: Vec<String> = modal_of(text, spans, i).into_iter().collect();
        return VerbForms { plain: !words.is_empty(), words };
    }
    let short = word.len() < LETTERS && !IRREGULAR.iter().any(|(base, _, _)| *base == word) && !PERSON_PAIRS.iter().any(|(_, s)| *s == word);
    if short || !word.chars().all(|c| c.is_ascii_lowercase() || c == '\'' || c == '’') {
        return VerbForms::default();
    }
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
    let Some((j, asker)) = asker else { return VerbForms::default() };
    let next = spans.get(i + 1).map(|&(s, e)| &text[s..e]);
    let mut out: Vec<String> = Vec::new();
    let mut plain = false;
    if BASE_AFTER.contains(&asker.as_str()) || (negated && DO.contains(&asker.as_str())) {
        out.extend(base_forms(word));
    } else if PARTICIPLE_AFTER.contains(&asker.as_str()) || (asker == "as" && j + 1 == i && next.is_some_and(|n| AS_BEFORE.contains(&n))) {
        out.extend(participles(word));
    } else if asker == "there" && j + 1 == i {
        // "There is several ways": the determiner after the verb fixes the subject's number.
        let be = PERSON_PAIRS.iter().find(|(base, s)| *s == word && (*base == "are" || *base == "were"));
        if let Some((plural, _)) = be.filter(|_| next.is_some_and(|n| PLURAL_AFTER_THERE.contains(&n))) {
            out.push(plural.to_string());
            plain = true;
        }
    } else if THIRD_SINGULAR.contains(&asker.as_str()) || OTHER_PERSONS.contains(&asker.as_str()) || asker == "i" {
        // A pronoun after a verb that takes a bare infinitive is its object ("make it work").
        if j > 0 && joined(j - 1) && OBJECT_AFTER.contains(&lower(j - 1).0.as_str()) {
            return VerbForms::default();
        }
        let third = THIRD_SINGULAR.contains(&asker.as_str());
        let (verb, not) = uncontracted(word);
        let pair = PERSON_PAIRS.iter().find(|(b, s)| if third { *b == verb } else { *s == verb });
        if asker == "i" && (verb == "is" || verb == "are") {
            // "I is", "I are" -> "am" ("I were" may be a wish: "if I were"; "I isn't" has no "am").
            if !not {
                out.push("am".to_string());
                plain = true;
            }
        } else if let Some(&(base, s)) = pair.filter(|(b, _)| asker != "i" || *b == "have" || *b == "do") {
            // After "I" only "has" and "does" ("I was" is right, "I were" a wish).
            let form = if third { s } else { base };
            // "it don't" -> "doesn't", written with the apostrophe the writer used.
            out.push(if not { format!("{form}{}", &word[verb.len()..]) } else { form.to_string() });
            plain = true;
        } else if third {
            out.extend(third_person_forms(word));
            // "it set the flag" may be past: asked about, on the verb margin's evidence.
            plain = !SAME_PAST.contains(&word);
        } else if asker != "i" && word.ends_with('s') && !word.ends_with("ss") {
            // Not after "I", where a verb's -s form is dialect ("and up I goes") more often than a slip.
            out.extend(base_forms(word));
        }
        plain &= clause_start(text, spans, j);
    }
    let mut kept: Vec<String> = Vec::new();
    for f in out {
        if f != word && lexicon.log_prior(&f).is_some_and(|p| p > FORM_PRIOR) && !kept.contains(&f) {
            kept.push(f);
        }
    }
    VerbForms { plain: plain && !kept.is_empty(), words: kept }
}

/// "have" for the "of" at `spans[i]` when a modal comes right before it and a past participle
/// right after it: "should of known", "could of been", "would of used", "should of read". Not
/// after a determiner, where the modal is a noun ("the might of armed forces").
fn modal_of(text: &str, spans: &[(usize, usize)], i: usize) -> Option<String> {
    let space = |a: usize, b: usize| text[spans[a].1..spans[b].0] == *" ";
    let word = |j: usize| text[spans[j].0..spans[j].1].to_ascii_lowercase();
    let (m, n) = (i.checked_sub(1)?, i + 1);
    if n >= spans.len() || !space(m, i) || !space(i, n) || !BASE_AFTER.contains(&word(m).as_str()) {
        return None;
    }
    if m > 0 && space(m - 1, m) && DETERMINERS_BEFORE_NOUN.contains(&word(m - 1).as_str()) {
        return None;
    }
    let next = word(n);
    let participle = next == "been"
        || (next.len() > 4 && next.ends_with("ed"))
        || IRREGULAR.iter().any(|(_, _, p)| *p == next)
        || SAME_PAST.contains(&next.as_str());
    participle.then(|| "have".to_string())
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
    use crate::slips::tests::on_word;

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

    /// What a pronoun, "there" and a modal before "of" ask about, and when the shape is plain: a
    /// pronoun that opens its clause is its subject; after a verb it may be an object.
    #[test]
    fn pronouns_there_and_should_of_ask_for_their_forms() {
        let lex = Lexicon::from_counts(
            ["have", "has", "were", "was", "are", "is", "am", "make", "makes", "do", "does", "don't", "doesn't", "work", "works", "print", "prints"]
                .map(|w| (w.to_string(), 1000u64)),
        );
        let forms = |text: &str, word: &str| {
            let f = on_word(text, word, |t, s, i| verb_forms(&lex, t, s, i));
            (f.words.join(" "), f.plain)
        };
        let plain = |w: &str| (w.to_string(), true);
        assert_eq!(forms("We has a test.", "has"), plain("have"));
        assert_eq!(forms("So they was not sure.", "was"), plain("were"));
        assert_eq!(forms("It make sense.", "make"), plain("makes"));
        assert_eq!(forms("She don't use it.", "don't"), plain("doesn't"));
        assert_eq!(forms("I is not sure.", "is"), plain("am"));
        assert_eq!(forms("If I were you.", "were"), (String::new(), false), "a wish");
        assert_eq!(forms("I was not sure.", "was"), (String::new(), false), "no \"were\" after \"I\"");
        assert_eq!(forms("I has a test.", "has"), plain("have"));
        assert_eq!(forms("When the code runs it print a line.", "print"), ("prints".to_string(), false), "not at a clause's start");
        assert_eq!(forms("The tests make it work.", "work"), (String::new(), false), "an object after a causative");
        assert_eq!(forms("There is several ways.", "is"), plain("are"));
        assert_eq!(forms("There was many reports.", "was"), plain("were"));
        assert_eq!(forms("There is some code.", "is"), (String::new(), false));
        assert_eq!(forms("There is both a cost and a gain.", "is"), (String::new(), false));
        assert_eq!(forms("You should of checked it.", "of"), plain("have"));
        assert_eq!(forms("It could of been faster.", "of"), plain("have"));
        assert_eq!(forms("This would of saved us a day.", "of"), plain("have"), "a pronoun, not a determiner");
        assert_eq!(forms("You should of read the guide.", "of"), plain("have"), "a participle like its base form");
        assert_eq!(forms("The might of armed men.", "of"), (String::new(), false), "a noun after a determiner");
        assert_eq!(forms("You should of course check.", "of"), (String::new(), false), "no participle after it");
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
