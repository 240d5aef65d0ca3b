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
