//! Real-word slips: the words a correct-looking word may have been meant as (the confusion sets,
//! a/an, its other grammatical number) and the words writers double on purpose.

use crate::lexicon::Lexicon;

/// Shortest word whose other grammatical number is a candidate (see [`inflections`]).
const INFLECTION_LETTERS: usize = 4;
/// The least ln prior of another number to be offered ("datas" is in the lexicon, but rare).
const INFLECTION_PRIOR: f32 = -16.0;

/// Real-word confusions: each word of a set may have been meant as any other. The first
/// COMMON_SETS are the slips writers make all the time; the rest are rarer.
pub(crate) const CONFUSION_SETS: &[&[&str]] = &[
    &["their", "there", "they're"],
    &["then", "than"],
    &["its", "it's"],
    &["your", "you're"],
    &["whose", "who's"],
    &["form", "from"],
    &["loose", "lose"],
    &["affect", "effect"],
    &["accept", "except"],
    &["to", "too", "two"],
    &["lead", "led"],
    &["quite", "quiet"],
    &["weather", "whether"],
    &["were", "where", "we're"],
    &["passed", "past"],
    &["principal", "principle"],
    &["advice", "advise"],
    &["breath", "breathe"],
    &["choose", "chose"],
    &["desert", "dessert"],
    &["compliment", "complement"],
    &["stationary", "stationery"],
    &["discrete", "discreet"],
    &["brake", "break"],
    &["peace", "piece"],
    &["lightening", "lightning"],
    &["cite", "site", "sight"],
    &["of", "off"],
    &["though", "through", "thorough"],
    &["now", "know"],
    &["no", "know"],
    &["weak", "week"],
    &["hear", "here"],
    &["wear", "where"],
    &["buy", "by"],
    &["new", "knew"],
    &["right", "write"],
    &["dose", "does"],
    &["are", "our"],
    &["an", "and"],
    &["adverse", "averse"],
    &["council", "counsel"],
    &["elicit", "illicit"],
    &["everyday", "every day"],
    &["fair", "fare"],
    &["hole", "whole"],
    &["lay", "lie"],
    &["personal", "personnel"],
    &["sense", "since"],
    &["threw", "through"],
    &["waist", "waste"],
    &["which", "witch"],
    &["though", "thought"],
    &["wander", "wonder"],
    &["poor", "pour", "pore"],
    &["course", "coarse"],
    &["access", "excess"],
    &["role", "roll"],
    &["later", "latter"],
    &["allowed", "aloud"],
    &["decent", "descent"],
    &["ensure", "insure"],
    &["below", "bellow"],
    &["plain", "plane"],
    &["bare", "bear"],
    &["wait", "weight"],
    &["tail", "tale"],
    &["sole", "soul"],
    &["meat", "meet"],
    &["board", "bored"],
    &["lesson", "lessen"],
    &["conscience", "conscious"],
    &["precede", "proceed"],
    &["eminent", "imminent"],
    &["male", "mail"],
    &["flour", "flower"],
    &["morning", "mourning"],
    &["patience", "patients"],
    &["presence", "presents"],
    &["idle", "idol"],
    &["dairy", "diary"],
    &["angel", "angle"],
    &["casual", "causal"],
    &["moral", "morale"],
    &["trail", "trial"],
    &["cloths", "clothes"],
    &["envelop", "envelope"],
    &["device", "devise"],
    &["assent", "ascent"],
    &["hanger", "hangar"],
    &["rain", "reign", "rein"],
    &["a", "an"],
];

/// How many of CONFUSION_SETS, from the top, are common slips.
const COMMON_SETS: usize = 5;

/// Whether `typed` for `meant` is one of the common slips (both words of one of the first
/// COMMON_SETS; lower case).
pub(crate) fn common_slip(typed: &str, meant: &str) -> bool {
    CONFUSION_SETS[..COMMON_SETS].iter().any(|set| set.contains(&typed) && set.contains(&meant))
}

/// Words writers double on purpose: intensifiers and interjections.
pub(crate) const REDUPLICATED: &[&str] = &[
    "very", "really", "many", "much", "more", "so", "far", "long", "bye", "no", "yes", "yeah", "oh", "ha", "ho", "hey", "well", "now", "again",
    "knock", "tick", "tock", "go", "night", "there", "boo", "chop", "blah", "bla", "ta", "la", "na", "wow", "please", "quick",
];

/// The other grammatical number of a known lowercase word, where the lexicon knows it and it
/// is not rare: "variables" <-> "variable", "gives" <-> "give", "classes" <-> "class",
/// "properties" <-> "property", "parentheses" <-> "parenthesis". Words of fewer than
/// INFLECTION_LETTERS letters and words ending in -ss/-us/-is as a plural have none ("this",
/// "status", "class" -> "clas").
pub(crate) fn inflections(lexicon: &Lexicon, word: &str) -> Vec<String> {
    if word.chars().count() < INFLECTION_LETTERS || !word.chars().all(|c| c.is_ascii_lowercase()) {
        return vec![];
    }
    let mut forms = Vec::new();
    if let Some(stem) = word.strip_suffix("ies") {
        forms.push(format!("{stem}y"));
    }
    if let Some(stem) = word.strip_suffix("es") {
        forms.push(stem.to_string());
        forms.push(format!("{stem}is")); // parentheses -> parenthesis
    }
    if let Some(stem) = word.strip_suffix('s').filter(|_| !(word.ends_with("ss") || word.ends_with("us") || word.ends_with("is"))) {
        forms.push(stem.to_string());
    }
    if let Some(stem) = word.strip_suffix("is") {
        forms.push(format!("{stem}es")); // parenthesis -> parentheses
    }
    if let Some(stem) = word.strip_suffix('y').filter(|s| s.ends_with(|c: char| !"aeiou".contains(c))) {
        forms.push(format!("{stem}ies"));
    }
    if !word.ends_with('s') {
        forms.push(format!("{word}s"));
        forms.push(format!("{word}es"));
    }
    let mut out: Vec<String> = Vec::new();
    for f in forms {
        let common = lexicon.log_prior(&f).is_some_and(|p| p > INFLECTION_PRIOR);
        if f != word && f.chars().count() >= INFLECTION_LETTERS - 1 && common && !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// Determiners that ask for a singular noun after them ("a previous variables" is a slip).
/// Not "one": "one finds that" is no slip. "that" only after a preposition (THAT_AFTER).
const SINGULAR_DETERMINERS: &[&str] = &["a", "an", "another", "each", "every", "this", "either", "neither"];
/// Prepositions after which "that" is a determiner or a pronoun, never a conjunction or a
/// relative pronoun: "After that lines" is a slip, "the code that lines up" and "so that lines
/// wrap" are not. Not "in": "in that lines are cheap" is a conjunction ("because").
const THAT_AFTER: &[&str] =
    &["after", "before", "from", "with", "without", "of", "for", "on", "at", "by", "into", "about", "under", "over", "through"];
/// Determiners that ask for a plural noun ("multiple part of the program", "these primitive").
/// "some" asks for one too, before a count noun ("some parenthesis"); before a mass noun ("some
/// code", "some time") or one thing unnamed ("some function") the model keeps the singular.
const PLURAL_DETERMINERS: &[&str] =
    &["these", "those", "many", "several", "multiple", "few", "both", "various", "numerous", "two", "three", "four", "five", "some"];
/// Words between a determiner and its noun that end the search: they start or end a phrase of
/// their own ("each of the", "that is", "a lot").
const NOT_MODIFIERS: &[&str] = &[
    "of", "the", "to", "in", "on", "for", "with", "at", "by", "from", "and", "or", "but", "is", "are", "was", "were", "be", "been", "it", "its",
    "as", "not", "no", "lot", "so", "than", "then", "more", "most", "other", "same", "such", "we", "you", "they", "he", "she",
];
/// Most words between a determiner and the noun it agrees with ("a previous variables": one).
pub(crate) const MODIFIERS: usize = 2;

/// The other grammatical number of the word at `spans[i]` when a determiner before it asks for
/// that number and the word has the wrong one: "lines" after "after that", "part" after "multiple",
/// "variables" after "a previous". Only lowercase words, with nothing but spaces and up to
/// MODIFIERS lowercase words between them (which may be adjectives) and no word that starts a
/// phrase of its own. These are the agreement slips a determiner makes visible; the model
/// still decides whether the other number reads better (see `SpellerOptions::agreement_margin`).
pub(crate) fn agreement_forms(lexicon: &Lexicon, text: &str, spans: &[(usize, usize)], i: usize) -> Vec<String> {
    let word = &text[spans[i].0..spans[i].1];
    if !word.chars().all(|c| c.is_ascii_lowercase()) {
        return vec![];
    }
    let mut want_plural = None;
    for j in words_left(text, spans, i) {
        let prev = text[spans[j].0..spans[j].1].to_ascii_lowercase();
        let that_determiner = prev == "that"
            && j > 0
            && text[spans[j - 1].1..spans[j].0] == *" "
            && THAT_AFTER.contains(&text[spans[j - 1].0..spans[j - 1].1].to_ascii_lowercase().as_str());
        if SINGULAR_DETERMINERS.contains(&prev.as_str()) || that_determiner {
            want_plural = Some(false);
            break;
        }
        if PLURAL_DETERMINERS.contains(&prev.as_str()) {
            // "some" that starts a sentence or follows a comma is most often "a certain": "Some
            // user reported that". Not after "and": "its name and some parenthesis".
            if prev == "some" && after_a_break(text, spans, j) {
                return vec![];
            }
            want_plural = Some(true);
            break;
        }
        if !modifier(&prev) {
            break;
        }
    }
    let Some(want_plural) = want_plural else { return vec![] };
    inflections(lexicon, word).into_iter().filter(|f| if want_plural { plural_of(word, f) } else { plural_of(f, word) }).collect()
}

/// Whether `word` (lower case) may stand between a determiner and its noun, as an adjective
/// would: lowercase, not a plural noun itself ("previous", "various" and "less" are no plurals),
/// and no word that starts a phrase of its own (NOT_MODIFIERS).
fn modifier(word: &str) -> bool {
    let singular = !word.ends_with('s') || ["ous", "ss", "us", "is"].iter().any(|e| word.ends_with(e));
    word.chars().all(|c| c.is_ascii_lowercase()) && singular && !NOT_MODIFIERS.contains(&word)
}

/// Determiners that leave a noun's number to the verb after it ("The signatures starts").
const NEUTRAL_DETERMINERS: &[&str] = &["the", "my", "our", "your", "their", "his", "her"];
/// Words that may start a clause before its subject: after them "the files contains" is a
/// subject and its verb. After any other word it may not be: in "a list of the files contains"
/// the verb agrees with "list".
const CLAUSE_OPENERS: &[&str] = &[
    "if", "when", "whenever", "while", "because", "since", "that", "how", "where", "and", "but", "so", "until", "unless", "once", "though",
    "although", "why", "whether", "then",
];
/// A verb's -s forms that no rule makes from a base form.
const THIRD_FORMS: &[&str] = &["is", "was", "has", "does"];

/// The singular of the word at `spans[i]` when it is the plural noun of a clause's subject and
/// the verb right after it has the -s form of a singular subject: "The signatures starts" ->
/// "signature". The subject starts the clause (a sentence, a comma, or a word of
/// CLAUSE_OPENERS before its determiner) with a determiner that does not fix its number, and
/// up to MODIFIERS modifiers between. Only the noun is asked about here; the model decides.
pub(crate) fn subject_forms(lexicon: &Lexicon, text: &str, spans: &[(usize, usize)], i: usize) -> Vec<String> {
    let word = &text[spans[i].0..spans[i].1];
    let Some(&(vs, ve)) = spans.get(i + 1) else { return vec![] };
    let verb = &text[vs..ve];
    if !word.chars().all(|c| c.is_ascii_lowercase()) || text[spans[i].1..vs] != *" " || !verb.chars().all(|c| c.is_ascii_lowercase()) {
        return vec![];
    }
    let known = |w: &str| lexicon.log_prior(w).is_some_and(|p| p > INFLECTION_PRIOR);
    let third = THIRD_FORMS.contains(&verb)
        || (verb.len() > 3
            && !["ss", "us", "is"].iter().any(|e| verb.ends_with(e))
            && inflections(lexicon, verb).iter().any(|b| plural_of(b, verb) && known(b)));
    if !third || !opens_clause(text, spans, i, NEUTRAL_DETERMINERS) {
        return vec![];
    }
    inflections(lexicon, word).into_iter().filter(|f| plural_of(f, word)).collect()
}

/// The -s form of the word at `spans[i]` when it is a verb in its base form right after the
/// singular noun of a clause's subject: "The function use the macro" -> "uses", "Each
/// thread have its own" -> "has". The subject opens its clause as in [`subject_forms`], after a
/// determiner that does not ask for a plural (the, this, each, a, ...); its noun is a lowercase
/// word that does not look plural and is no participle, and no auxiliary follows the verb. Only
/// the verb is asked about; the model decides (the noun may be a modifier of a noun that is the
/// word: "The error message").
pub(crate) fn subject_verb_forms(lexicon: &Lexicon, text: &str, spans: &[(usize, usize)], i: usize) -> Vec<String> {
    let verb = &text[spans[i].0..spans[i].1];
    if i == 0 || !verb.chars().all(|c| c.is_ascii_lowercase()) || verb.len() < 3 || text[spans[i - 1].1..spans[i].0] != *" " {
        return vec![];
    }
    let noun = &text[spans[i - 1].0..spans[i - 1].1];
    // A participle before the word is its modifier ("the following item"), and a word before an
    // auxiliary is the subject's noun itself ("the following item should").
    let participle = noun.ends_with("ing") || noun.ends_with("ed");
    // Plurals without an s take the base form: "the data show", "the people want".
    let classical = noun.strip_suffix('a').is_some_and(|s| lexicon.contains(&format!("{s}um")) || lexicon.contains(&format!("{s}on")));
    if classical || IRREGULAR_PLURALS.contains(&noun) {
        return vec![];
    }
    let next = spans.get(i + 1).map_or("", |&(s, e)| &text[s..e]);
    if !modifier(noun) || participle || DETERMINERS.iter().any(|d| d.contains(&noun)) || auxiliary(&next.to_ascii_lowercase()) {
        return vec![];
    }
    if !opens_clause(text, spans, i - 1, NEUTRAL_DETERMINERS) && !opens_clause(text, spans, i - 1, SINGULAR_DETERMINERS) {
        return vec![];
    }
    singular_verb_form(lexicon, verb)
}

/// The -s form of `verb` after a noun that is its singular subject, where the lexicon knows it
/// ("need" -> "needs"); none for a verb whose past is its base form, which may be past after a
/// noun ("The server set the flag"). Not by `inflections`, which leaves out short words ("use",
/// "run", "add").
fn singular_verb_form(lexicon: &Lexicon, verb: &str) -> Vec<String> {
    if SAME_PAST.contains(&verb) {
        return vec![];
    }
    let known = |w: &str| lexicon.log_prior(w).is_some_and(|p| p > INFLECTION_PRIOR);
    third_person_forms(verb).into_iter().filter(|f| known(f)).take(1).collect()
}

/// Words that make "X of the <plural>" a singular subject: "Each of the tests needs".
const PARTITIVES: &[&str] = &["each", "one", "either", "neither"];

/// The -s form of the word at `spans[i]` when it is a verb in its base form after a plural noun
/// that is the complement of a singular subject opening its clause: "Each of the tests need" ->
/// "needs", "One of these files contain" -> "contains", "Neither of the builds have" -> "has".
/// Between "of" and the noun, a determiner and modifiers as in [`agreement_forms`]. Only the verb
/// is asked about; the model decides ("One of the things people want": "peoples" is asked and
/// loses).
pub(crate) fn partitive_verb_forms(lexicon: &Lexicon, text: &str, spans: &[(usize, usize)], i: usize) -> Vec<String> {
    let verb = &text[spans[i].0..spans[i].1];
    if i == 0
        || !verb.chars().all(|c| c.is_ascii_lowercase())
        || verb.len() < 3
        || NOT_MODIFIERS.contains(&verb)
        || text[spans[i - 1].1..spans[i].0] != *" "
    {
        return vec![];
    }
    let noun = &text[spans[i - 1].0..spans[i - 1].1];
    if modifier(noun) || !noun.chars().all(|c| c.is_ascii_lowercase()) {
        return vec![]; // no plural
    }
    let mut of = None;
    for j in words_left(text, spans, i - 1) {
        let prev = text[spans[j].0..spans[j].1].to_ascii_lowercase();
        if prev == "of" {
            of = Some(j);
            break;
        }
        if !(NEUTRAL_DETERMINERS.contains(&prev.as_str()) || ["these", "those"].contains(&prev.as_str()) || modifier(&prev)) {
            return vec![];
        }
    }
    let Some(of) = of.filter(|&j| j > 0 && text[spans[j - 1].1..spans[j].0] == *" ") else { return vec![] };
    let head = text[spans[of - 1].0..spans[of - 1].1].to_ascii_lowercase();
    if !PARTITIVES.contains(&head.as_str()) || !clause_start(text, spans, of - 1) {
        return vec![];
    }
    singular_verb_form(lexicon, verb)
}

/// Whether the word at `spans[i]` is plainly the noun its determiner asks a number of: the
/// determiner right before it ("these", "a"; no word between that might be a noun itself: in
/// "each command ensures that" the noun is "command"), and right after it an auxiliary ("These
/// option are"), a preposition that starts the phrase's complement ("a variables of the"), or
/// the end of a clause (a comma, a full stop), so that it is no modifier of a noun after it
/// ("These option flags"). [`agreement_forms`]' slips are asked about at a lower margin there.
pub(crate) fn heads_its_phrase(text: &str, spans: &[(usize, usize)], i: usize) -> bool {
    let Some(&(ds, de)) = i.checked_sub(1).map(|j| &spans[j]) else { return false };
    let determiner = text[ds..de].to_ascii_lowercase();
    // Not "some", which takes a singular too: "make some change in my size".
    let asks = SINGULAR_DETERMINERS.contains(&determiner.as_str()) || (PLURAL_DETERMINERS.contains(&determiner.as_str()) && determiner != "some");
    if text[de..spans[i].0] != *" " || !asks {
        return false;
    }
    let after = &text[spans[i].1..];
    if after.starts_with([',', '.', ';', ':', '?', '!']) {
        return true;
    }
    let Some(&(s, e)) = spans.get(i + 1) else { return false };
    let next = text[s..e].to_ascii_lowercase();
    text[spans[i].1..s] == *" " && (auxiliary(&next) || PHRASE_AFTER.contains(&next.as_str()))
}

/// Whether the word at `spans[i]`, asked about as a verb after its subject ([`subject_verb_forms`]),
/// is plainly a verb: an object starts right after it ("The server send a notification", "Each
/// thread have its own"), so it is no noun of a compound ("The server send buffer").
pub(crate) fn takes_an_object(text: &str, spans: &[(usize, usize)], i: usize) -> bool {
    let Some(&(s, e)) = spans.get(i + 1) else { return false };
    text[spans[i].1..s] == *" " && OBJECT_STARTS.contains(&text[s..e].to_ascii_lowercase().as_str())
}

/// Words after a noun that start its complement: the noun before them heads its phrase.
const PHRASE_AFTER: &[&str] = &["of", "in", "on", "for", "with", "from", "at", "by"];
/// Words that start a verb's object.
const OBJECT_STARTS: &[&str] =
    &["a", "an", "the", "this", "these", "those", "its", "their", "his", "her", "our", "your", "my", "it", "them", "us", "me", "him"];
/// Verbs whose past tense is their base form: "The server set the flag" may be past, so their
/// -s form is not asked about after a noun ([`singular_verb_form`]), and after a pronoun only at
/// the verb margin ("it read and executes a script").
pub(crate) const SAME_PAST: &[&str] = &[
    "set",
    "put",
    "let",
    "cut",
    "hit",
    "read",
    "shut",
    "split",
    "spread",
    "cast",
    "cost",
    "hurt",
    "quit",
    "bet",
    "burst",
    "fit",
    "upset",
    "broadcast",
];

/// The forms of a verb's base form `base` for a third-person singular subject, unchecked
/// against the lexicon: "have" -> "has", "use" -> "uses", "fix" -> "fixs", "fixes", "copy" ->
/// "copies"; none for a word that ends in s.
pub(crate) fn third_person_forms(base: &str) -> Vec<String> {
    if let Some(&(_, s)) = PERSON_PAIRS.iter().find(|(b, _)| *b == base) {
        return vec![s.to_string()];
    }
    if base.ends_with('s') {
        return vec![];
    }
    let mut out = vec![format!("{base}s"), format!("{base}es"), format!("{}ies", base.strip_suffix('y').unwrap_or(""))];
    out.retain(|f| plural_of(base, f));
    out
}

/// Plurals that do not end in s.
const IRREGULAR_PLURALS: &[&str] = &["people", "children", "men", "women", "police", "feet", "teeth", "mice", "geese"];
/// After these a verb takes its base form: "can returns", "will used", "couldn't works" (a
/// negative contraction is read as its verb and "not", see [`uncontracted`]). "do", "does" and
/// "did" only before "not" (as main verbs they take objects: "does tests").
pub(crate) const BASE_AFTER: &[&str] = &["can", "could", "will", "would", "shall", "should", "may", "might", "must", "cannot"];
/// These ask for the base form only with "not" after them.
pub(crate) const DO: &[&str] = &["do", "does", "did"];
/// After these a verb takes its past participle: "is use", "has change", "been add".
pub(crate) const PARTICIPLE_AFTER: &[&str] = &["is", "are", "was", "were", "be", "been", "being", "has", "have", "had"];
/// Whether `word` (lower case) is a verb that comes before a main verb (every word of the three
/// lists above): the word before one is no verb ("the item should").
fn auxiliary(word: &str) -> bool {
    [BASE_AFTER, DO, PARTICIPLE_AFTER].iter().any(|l| l.contains(&word))
}
/// The verbs whose forms for a third-person singular subject are not the -s rule's.
pub(crate) const PERSON_PAIRS: &[(&str, &str)] = &[("have", "has"), ("do", "does"), ("are", "is"), ("were", "was")];
/// Every determiner the agreement rules know: none of them is a subject's noun.
const DETERMINERS: &[&[&str]] = &[NEUTRAL_DETERMINERS, SINGULAR_DETERMINERS, PLURAL_DETERMINERS];

/// Whether the noun at `spans[noun]` heads a subject that opens its clause: one of
/// `determiners` before it, up to MODIFIERS modifiers between, and before the determiner the
/// start of the text, punctuation, a blank line or a word of CLAUSE_OPENERS.
fn opens_clause(text: &str, spans: &[(usize, usize)], noun: usize, determiners: &[&str]) -> bool {
    for j in words_left(text, spans, noun) {
        let prev = text[spans[j].0..spans[j].1].to_ascii_lowercase();
        if determiners.contains(&prev.as_str()) {
            return clause_start(text, spans, j);
        }
        if !modifier(&prev) {
            return false;
        }
    }
    false
}

/// Whether the word at `spans[j]` starts a clause: [`after_a_break`], or a word of
/// CLAUSE_OPENERS before it ("so it", "if the").
pub(crate) fn clause_start(text: &str, spans: &[(usize, usize)], j: usize) -> bool {
    let opener = j > 0
        && text[spans[j - 1].1..spans[j].0] == *" "
        && CLAUSE_OPENERS.contains(&text[spans[j - 1].0..spans[j - 1].1].to_ascii_lowercase().as_str());
    opener || after_a_break(text, spans, j)
}

/// Whether the word at `spans[j]` has the start of the text, punctuation or a blank line before it.
fn after_a_break(text: &str, spans: &[(usize, usize)], j: usize) -> bool {
    let before = &text[if j == 0 { 0 } else { spans[j - 1].1 }..spans[j].0];
    j == 0 || before.trim().chars().any(|c| ".!?:;,(".contains(c)) || before.contains("\n\n")
}

/// The words a noun's determiner and modifiers may be, nearest first: the indices of the words
/// left of `spans[i]` while only spaces or inline code stand between, of MODIFIERS + 1 items at
/// most (a code span counts as one and is not given).
fn words_left<'a>(text: &'a str, spans: &'a [(usize, usize)], i: usize) -> impl Iterator<Item = usize> + 'a {
    let mut at = (i, spans[i].0);
    (0..=MODIFIERS)
        .map_while(move |_| {
            let (j, start, code) = left_item(text, spans, at.0, at.1)?;
            at = (j, start);
            Some((j, code))
        })
        .filter(|&(_, code)| !code)
        .map(|(j, _)| j)
}

/// The item of a noun phrase just left of the one that starts at byte `start` with span
/// `first`, only spaces between: the word `spans[j]` as `(j, its start, false)`, or an inline
/// code span, which stands where a modifier would ("the `IpAddr` enum", "a `Vec<T>` value"), as
/// `(its first span, its opening backtick, true)`. None for anything else between them.
fn left_item(text: &str, spans: &[(usize, usize)], first: usize, start: usize) -> Option<(usize, usize, bool)> {
    let j = first.checked_sub(1)?;
    let gap = &text[spans[j].1..start];
    if !gap.is_empty() && gap.bytes().all(|c| c == b' ') {
        return Some((j, spans[j].0, false));
    }
    let close = text[..start].strip_suffix("` ")?.len();
    let open = text[..close].rfind('`')?;
    if open + 1 == close || text[open..close].contains('\n') || !text[..open].ends_with(' ') {
        return None;
    }
    let inside = spans[..first].iter().position(|s| s.0 > open).unwrap_or(first);
    Some((inside, open, true))
}

/// Whether `plural` is a plural of `singular` that adds to it ("line" -> "lines", "property" ->
/// "properties"); "basis" -> "bases" and "parenthesis" -> "parentheses" swap an ending instead.
pub(crate) fn plural_of(singular: &str, plural: &str) -> bool {
    let sibilant = |w: &str| ["s", "x", "z", "ch", "sh", "o"].iter().any(|e| w.ends_with(e));
    plural.strip_suffix('s') == Some(singular)
        || plural.strip_suffix("es") == Some(singular) && sibilant(singular)
        || plural.strip_suffix("ies").is_some_and(|s| singular.strip_suffix('y') == Some(s))
        || plural.strip_suffix("es").is_some_and(|s| singular.strip_suffix("is") == Some(s))
}

/// Possessives a confusion set holds, each of which a writer may have typed for a contraction
/// or an adverb of its set ("its" for "it's", "their" for "there").
const POSSESSIVES: &[&str] = &["its", "their", "your", "whose"];

/// Whether `word`, followed by `next`, is a possessive that no other word of its set could
/// replace: only a possessive goes before "own" ("its own", "their own"). The small model
/// reads "it's own" as likelier than "its own" in some sentences, having seen that slip often.
pub(crate) fn possessive_fixed(word: &str, next: &str) -> bool {
    POSSESSIVES.contains(&word.to_lowercase().as_str()) && next.eq_ignore_ascii_case("own")
}

/// Whether "and" is no candidate for `word` followed by `next`: "an" before a word that starts
/// with a vowel letter is an article that fits ("an overflow panic", "an Arg trait", "an
/// insert_sorted method"), and the model, reading lists everywhere in changelogs, took it for
/// "and" three times in 37,240 clean words. "an" for "and" is asked about before other words
/// ("promptly an correctly") and before "I".
pub(crate) fn article_fits(word: &str, next: &str) -> bool {
    word.eq_ignore_ascii_case("an") && next != "I" && next.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U'])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `f(text, its words' spans, the index of `word`)`: what a rule says of `word` in `text`.
    pub(crate) fn on_word<T>(text: &str, word: &str, f: impl Fn(&str, &[(usize, usize)], usize) -> T) -> T {
        let spans = laya_text::words(text);
        let i = spans.iter().position(|&(s, e)| &text[s..e] == word).unwrap();
        f(text, &spans, i)
    }

    /// What the subject rules ask the model about (it decides): the verb's -s form after a
    /// singular subject that opens its clause, nothing where the word is no verb after a noun.
    #[test]
    fn a_singular_subject_asks_about_the_verbs_s_form() {
        let lex = Lexicon::from_counts(
            [
                "thread", "have", "has", "function", "use", "uses", "item", "items", "data", "datum", "show", "shows", "server", "crash", "crashes",
                "enum", "allow", "allows", "value", "values", "set", "sets",
            ]
            .map(|w| (w.to_string(), 1000u64)),
        );
        let forms = |text: &str, word: &str| on_word(text, word, |t, s, i| subject_verb_forms(&lex, t, s, i));
        assert_eq!(forms("Each thread have its own stack.", "have"), ["has"]);
        assert_eq!(forms("The function use the macro.", "use"), ["uses"], "a verb of three letters");
        assert_eq!(forms("If the server crash, we restart it.", "crash"), ["crashes"]);
        assert!(forms("The server set the flag.", "set").is_empty(), "a past tense like the base form");
        assert!(forms("The following item here is new.", "item").is_empty(), "not after a participle");
        assert!(forms("Then the thread use should stop.", "use").is_empty(), "not before an auxiliary");
        assert!(forms("The data show that it works.", "show").is_empty(), "a plural without an s");
        assert!(forms("We saw the function use the macro.", "use").is_empty(), "not a clause's subject");
        assert_eq!(forms("We saw how the `IpAddr` enum allow us to say it.", "allow"), ["allows"], "inline code as a modifier");
        assert_eq!(forms("Then the `Vec<T>` type use it.", "use"), ["uses"], "code that ends in a symbol");
        assert!(forms("We saw the `IpAddr` enum allow us to say it.", "allow").is_empty(), "still not a clause's subject");
        assert!(forms("`IpAddr` enum allow us to say it.", "allow").is_empty(), "code with no determiner before it");
    }

    /// A singular subject with a plural complement ("Each of the tests") asks for the verb's -s
    /// form; a plural subject or one inside a clause does not.
    #[test]
    fn each_of_the_tests_asks_for_the_verbs_s_form() {
        let lex = Lexicon::from_counts(["need", "needs", "have", "has", "contain", "contains"].map(|w| (w.to_string(), 1000u64)));
        let forms = |text: &str, word: &str| on_word(text, word, |t, s, i| partitive_verb_forms(&lex, t, s, i));
        assert_eq!(forms("Each of the tests need a name.", "need"), ["needs"]);
        assert_eq!(forms("So one of these large files contain it.", "contain"), ["contains"]);
        assert_eq!(forms("Neither of the builds have it.", "have"), ["has"]);
        assert!(forms("Some of the tests need a name.", "need").is_empty(), "a plural subject");
        assert!(forms("We wrote one of the tests need.", "need").is_empty(), "not a clause's subject");
        assert!(forms("Each of the test need a name.", "need").is_empty(), "no plural before the verb");
    }

    /// The shapes that leave a form no other reading: a noun before an auxiliary, a preposition or
    /// the clause's end heads its phrase; a verb before an object's first word is a verb.
    #[test]
    fn a_sentences_shape_can_make_a_slip_plain() {
        let at = |text: &str, word: &str, f: fn(&str, &[(usize, usize)], usize) -> bool| on_word(text, word, f);
        assert!(at("These option are read once.", "option", heads_its_phrase));
        assert!(at("Many user of the library", "user", heads_its_phrase));
        assert!(at("We read several file, then stop.", "file", heads_its_phrase));
        assert!(!at("These option flags are read once.", "option", heads_its_phrase), "a modifier of the noun after it");
        assert!(!at("Each command ensures that it runs.", "ensures", heads_its_phrase), "a word between it and its determiner");
        assert!(!at("It will make some change in size.", "change", heads_its_phrase), "\"some\" takes a singular too");
        assert!(at("The server send a notification.", "send", takes_an_object));
        assert!(at("Each thread have its own stack.", "have", takes_an_object));
        assert!(!at("The server send buffer is full.", "send", takes_an_object), "a compound noun");
    }

    /// A determiner asks for its noun's number across inline code as across an adjective.
    #[test]
    fn a_determiner_asks_for_the_number_of_its_noun_across_inline_code() {
        let lex = Lexicon::from_counts(["value", "values", "thread", "threads"].map(|w| (w.to_string(), 1000u64)));
        let forms = |text: &str, word: &str| on_word(text, word, |t, s, i| agreement_forms(&lex, t, s, i));
        assert_eq!(forms("It takes a `u32` values here.", "values"), ["value"]);
        assert_eq!(forms("Spawn several `std::sync` thread now.", "thread"), ["threads"]);
        assert!(forms("It takes a `u32`, values here.", "values").is_empty(), "not across a comma");
        assert_eq!(forms("It takes a name and some value.", "value"), ["values"]);
        assert!(forms("Some value was wrong.", "value").is_empty(), "\"some\" opening a clause: a certain one");
        assert!(forms("It failed; some thread hung.", "thread").is_empty(), "after punctuation too");
    }
}
