//! Typo decisions: suggestions for a misspelled word on its own (lexicon prior + error model),
//! and the misspellings and real-word errors of a text in context (every candidate of a word
//! scored by the model in one batched forward over the cached text before it, with the text
//! after it appended to each candidate).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use laya_model::{KvCache, Model};
use laya_text::{code_pieces, prose_mask, words, ProseMask};

use crate::errors::ErrorModel;
use crate::lexicon::{match_case, Lexicon, SOUND_COST};
use crate::phonetic::sound_key;
use crate::slips::{
    agreement_forms, article_fits, common_slip, heads_its_phrase, inflections, partitive_verb_forms, plural_of, possessive_fixed, subject_forms,
    subject_verb_forms, takes_an_object, CONFUSION_SETS, MODIFIERS, REDUPLICATED,
};
use crate::verbs::verb_forms;
use crate::{DecideError, Result};

/// How many edits' worth of difference a suggestion may have from the typed word.
const MAX_COST: f32 = 2.0;
/// Nats a unit of edit cost is worth when a word is ranked on its own (prior + error model).
const LAMBDA_ALONE: f32 = 5.0;
/// The same beside the model's log-probability in context.
const LAMBDA_CONTEXT: f32 = 2.5;
/// A capitalized unknown word inside a sentence is taken for a name unless it has at least
/// NAME_SLIP_LETTERS letters and a lowercase word at most NAME_SLIP_COST away (one slip) and at
/// least NAME_SLIP_PRIOR common (ln prior; about the 25,000 commonest words) is near it. Short
/// ones are too often names one slip from a word ("Folyd", a user name in a changelog: "fold").
const NAME_SLIP_LETTERS: usize = 6;
const NAME_SLIP_COST: f32 = 1.0;
const NAME_SLIP_PRIOR: f32 = -14.0;
/// From LONG_NAME_SLIP_LETTERS letters on, any lowercase word of the lexicon one slip away will
/// do: names that long one slip from a word are rare, slips of rare words are not
/// ("Milimeters").
const LONG_NAME_SLIP_LETTERS: usize = 8;
const LONG_NAME_SLIP_PRIOR: f32 = -19.0;
/// Sound-alike words (see `phonetic.rs`) looked at for a misspelling, commonest first, and the
/// shortest misspelling they are looked for (a short word's key matches too many words).
const SOUND_CANDIDATES: usize = 200;
const SOUND_LETTERS: usize = 4;
/// Candidates of a misspelling the model scores in context.
const CONTEXT_CANDIDATES: usize = 10;
/// Shortest word whose common neighbours one slip away are candidates, the least ln prior of
/// such a neighbour, and how many of them (commonest first).
const NEIGHBOUR_LETTERS: usize = 3;
const NEIGHBOUR_PRIOR: f32 = -11.0;
const NEIGHBOURS: usize = 3;
/// Fewest words before a word for its neighbours to be asked about: on one word of context the
/// model reads "We and the other one" as 10 nats likelier than "We add the other one".
const NEIGHBOUR_LEFT_WORDS: usize = 2;
/// Shortest stem whose regular plural is taken as known (see [`Speller::plural_of_known`]).
const PLURAL_STEM_LETTERS: usize = 5;
/// A neighbour is scored only where its first token is less than this many nats behind the
/// written word's: a slip leaves a word less likely than the one meant, so where the written
/// word is far ahead before the text after it is read, the neighbour is not worth a forward.
const NEIGHBOUR_SLACK: f32 = 2.0;
/// Shortest piece of an identifier in inline code that is checked, and the least ln prior of
/// the word it may be a slip of (see [`Speller::code_slip`]).
const CODE_LETTERS: usize = 5;
const CODE_PRIOR: f32 = -13.0;
/// Words of right context appended to every candidate.
const RIGHT_WORDS: usize = 4;

/// Which splits of a word into two a ranking offers ([`Lexicon::splits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Joins {
    /// None: a piece of code is its own words run together ("isempty").
    None,
    /// A function word and its neighbour ("alot", "eachother"): in context.
    Slips,
    /// Any two common words ("callsite" too): a word on its own.
    All,
}

/// The margins of the real-word check, in nats. The defaults are what `laya check` and the
/// server use; `laya eval context` can override them to tune (the binary reads the overrides).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpellerOptions {
    /// How sure the model must be before a correct-looking word is flagged: the best
    /// alternative's log-probability (with the text after it) must beat the word's by this much.
    pub real_word_margin: f32,
    /// Taken off the margin between two words of a common set: a writer who typed "their"
    /// meant "they're" far more often than one who typed "angel" meant "angle", so less
    /// evidence from the model is needed (the prior of a noisy channel).
    pub common_prior_nats: f32,
    /// A correct-looking word is not scored against its alternatives when, right after the
    /// text before it, its first token is already this much likelier than every alternative's:
    /// the words after it would have to turn that round by this much and the margin more. The
    /// log-probs come free with the context's prefill; the batched forward they save is most of
    /// a re-check's time ("to", "of", "and" are in confusion sets). Infinite turns it off.
    pub uncontested_nats: f32,
    /// Weight of the learned error model's log-likelihood beside the word's log prior when a
    /// word is ranked on its own (see `errors.rs`); 0 ranks by the hand-set edit costs alone.
    pub channel_weight: f32,
    /// The margin for a word's other grammatical number ("variables" for "variable", "gives"
    /// for "give", "parenthesis" for "parentheses"; see [`crate::slips::inflections`]). Infinite (the
    /// default) asks about none: the default model does not tell agreement slips from meant
    /// forms well enough. On ../shared/data/dev-typo-fixes.jsonl (42 real-word slips, 2,885
    /// clean words), against none: margin 4 finds 4 more slips for 9 more false alarms, 5 finds
    /// 4 for 4, 6 finds 1 for 2, 8 finds 1 for 1; and every check takes about twice as long
    /// (most nouns and verbs become contested). Worth trying again with a larger model.
    pub inflection_margin: f32,
    /// The margin for the other grammatical number where a determiner before the word asks for
    /// it ("that lines", "multiple part", "a previous variables"; see
    /// [`crate::slips::agreement_forms`]). The determiner is evidence of its own, so this is
    /// lower than `inflection_margin`.
    pub agreement_margin: f32,
    /// The agreement margin where the sentence's shape makes the slip plain: the noun heads its
    /// phrase ("These option are"; [`crate::slips::heads_its_phrase`]) or the verb takes an
    /// object ("The server send a"; [`crate::slips::takes_an_object`]); for verb forms, where a
    /// pronoun that opens its clause, "there" or a modal asks for them ("We has", "There is
    /// several", "should of known"; [`crate::verbs::VerbForms`]).
    pub plain_agreement_margin: f32,
    /// The margin for the form of a verb that the word before it asks for ("it return" ->
    /// "returns", "will returns" -> "return", "is use" -> "used", "as show in" -> "shown";
    /// see [`crate::verbs::verb_forms`]). Infinite asks about none.
    pub verb_margin: f32,
    /// The margin for a common word one slip away from a correct-looking one ("many" for "may",
    /// "wold" for "would"), in no confusion set. Infinite asks about none. On the development
    /// sets (docs/benchmarks.md), against none: 10 finds 2 more of typo-fixes.jsonl's 42
    /// real-word slips for no more false alarms there, and adds 0.22 false alarms per 1,000
    /// words of clean prose (crate names such as "nom" and "syn" read as "now" and "sin"); 9
    /// finds one more for twice the false alarms; 8 and 7 add 0.6 and 1.0 per 1,000.
    /// A check takes about half as long again.
    pub neighbour_margin: f32,
    /// A word that sounds like what was typed (see `phonetic.rs`) is ranked as though the slip
    /// had at least this log-likelihood under the error model (ln): spelling by ear is a slip
    /// of its own, however many letters it changes. Negative infinity turns sound-alikes off.
    pub sound_loglik: f32,
    /// How much better (nats) the likeliest near word must explain the text than a word missing
    /// from the lexicon as written, for that word to be flagged; each unit of edit cost takes
    /// LAMBDA_FLAG nats off the near word.
    pub non_word_margin: f32,
    /// The least log-likelihood (ln, under the learned error model) of the slip from a near word
    /// to what was typed, for the context's preference for that word to flag it: below it no
    /// slip a writer makes explains the spelling, and the word is a coined name the model cannot
    /// predict ("noclobber" is not "clobber", "Condvar" not "Condor").
    pub slip_floor: f32,
    /// A word missing from the lexicon is also flagged when a near word's log-probability in
    /// context, less its own, plus the slip's log-likelihood under the error model reaches this
    /// (the noisy channel): a likely slip needs little or no help from the context. The model
    /// reads many misspellings as predictable ("often a desireable feature", "Vectors are
    /// homogenous"), and the margin above lets them through.
    pub likely_slip_margin: f32,
    /// The least log-likelihood (ln, under the learned error model) of the slip from a common
    /// word to a piece of an identifier in inline code ("Rectagle" in `Rectagle`), for the piece
    /// to be flagged (see [`Speller::code_slip`]). Negative infinity checks no code.
    pub code_slip: f32,
    /// The margin for two words typed apart where one was meant ("in to" -> "into", "some one"
    /// -> "someone"; see [`Lexicon::joined`]): the one word's log-probability with the text
    /// after it must beat the two words' by this much. Infinite asks about none. On
    /// data/dev/context/split-errors.jsonl (100 splits, 9,687 clean words), against none
    /// (0.05 found): 7 finds 0.33, 5 finds 0.38, neither with a false alarm there or in 37,240
    /// words of clean prose; meant pairs scored by hand ran to 4.8 nats ("log in to your
    /// account", "take a side").
    pub join_margin: f32,
    /// How a flagged misspelling's suggestions are ordered: by the model's log-probability plus
    /// this times the learned error model's log-likelihood of the slip (the noisy channel, as
    /// words alone are ranked with `channel_weight`), so that a slip writers make ("recived" for
    /// "received") outranks a word the sentence merely likes better ("receive"); 0 orders by the
    /// model less LAMBDA_CONTEXT nats an edit, as before. First suggestion right on the odd lines
    /// of ../shared/data/dev-typo-fixes.jsonl (tuned on): 0 0.920, 0.5 0.946, 1 to 3 0.964; 2 is
    /// the weight words alone have. Held out (the even lines): 0.930 -> 1.000.
    pub context_channel_weight: f32,
}

impl Default for SpellerOptions {
    fn default() -> Self {
        Self {
            real_word_margin: 4.0,
            common_prior_nats: 1.5,
            uncontested_nats: 8.0,
            channel_weight: 2.0,
            inflection_margin: f32::INFINITY,
            agreement_margin: 3.0,
            plain_agreement_margin: 1.0,
            verb_margin: 3.0,
            neighbour_margin: 10.0,
            sound_loglik: -12.0,
            non_word_margin: 2.0,
            slip_floor: -14.0,
            likely_slip_margin: -3.0,
            code_slip: -4.5,
            join_margin: 5.0,
            context_channel_weight: 2.0,
        }
    }
}

/// How much likelier (nats) the text must be with a doubled word said once ("the best" after
/// "He is the") than as written, for the second one to be flagged. The shorter text is always
/// likelier by what the extra word costs; a slip leaves nothing to offset that, a meant
/// repetition explains what follows. On 20 sentences written for it: slips ("the the",
/// "to to", "of of", "can can") 7.7-12.9 nats; meant ones ("had had" 4.2, "that that" 2.4 and
/// 6.1, "is is" 4.1) below 7. Words doubled on purpose for emphasis ("very very", "bye bye")
/// score like slips, so they are left alone by name (REDUPLICATED). At a text's very start the
/// model has little to go on: "I think it it will rain." leads by 5.9 nats after the paragraph
/// break it reads first, and is left alone; with a sentence before it, by 10.7.
const DOUBLED_MARGIN: f32 = 7.0;

/// Rounds of re-judging words next to flagged ones (see [`Speller::check`]).
const CLUSTER_ROUNDS: usize = 3;

/// Edit cost's weight when a near word is weighed against a word missing from the lexicon
/// (see [`SpellerOptions::non_word_margin`]).
const LAMBDA_FLAG: f32 = 1.0;

/// A suggested spelling with its score (higher is better; a log-probability up to a constant).
#[derive(Debug, Clone, PartialEq)]
pub struct Correction {
    pub word: String,
    pub score: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueKind {
    /// Not a word of the lexicon.
    Misspelling,
    /// A real word, but the model is sure another was meant ("then" for "than").
    RealWord,
    /// A word typed twice ("the the"): the issue covers the space before the second one and
    /// it, and its one suggestion is the empty text (delete them).
    Repeated,
}

/// A word the checker flags in a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    /// Byte range of the word in the text that was checked.
    pub start: usize,
    pub end: usize,
    pub word: String,
    pub kind: IssueKind,
    /// Replacements, best first (may be empty for a misspelling with no near word).
    pub suggestions: Vec<Correction>,
}

/// The lexicon, the confusion sets and the words a user keeps.
pub struct Speller {
    lexicon: Lexicon,
    confusions: HashMap<&'static str, Vec<&'static str>>,
    user: HashSet<String>,
    opts: SpellerOptions,
    /// Scores of candidates already ranked in the very same context (model, text before the
    /// word, candidates, text after it): re-checking an edited paragraph re-scores only the
    /// words whose context changed.
    memo: std::sync::Mutex<HashMap<u64, Vec<Correction>>>,
    /// Each word's common neighbours one slip away ([`Speller::neighbours`]): a trie walk per
    /// word, which a re-check of a paragraph would otherwise repeat for every word at every pause.
    neighbours: std::sync::Mutex<HashMap<String, Vec<String>>>,
    /// Each identifier piece's verdict ([`Speller::code_slip`]): ranking a word alone walks the
    /// lexicon (about 10 ms), and a check sees the same names at every pause.
    code_slips: std::sync::Mutex<HashMap<String, Option<Vec<Correction>>>>,
}

/// Entries the memo keeps before it starts over.
const MEMO_MAX: usize = 8192;

/// Keeps `value` under `key` in `memo`, which starts over at MEMO_MAX entries.
fn keep<K: std::hash::Hash + Eq, V>(memo: &std::sync::Mutex<HashMap<K, V>>, key: K, value: V) {
    if let Ok(mut m) = memo.lock() {
        if m.len() >= MEMO_MAX {
            m.clear();
        }
        m.insert(key, value);
    }
}

/// `key`'s value in `memo`, or `compute`'s, kept there (see [`keep`]).
fn remembered<V: Clone>(memo: &std::sync::Mutex<HashMap<String, V>>, key: &str, compute: impl FnOnce() -> V) -> V {
    if let Some(hit) = memo.lock().ok().and_then(|m| m.get(key).cloned()) {
        return hit;
    }
    let value = compute();
    keep(memo, key.to_string(), value.clone());
    value
}

impl Speller {
    pub fn new(lexicon: Lexicon) -> Self {
        Self::with_options(lexicon, SpellerOptions::default())
    }

    /// A speller with other margins than the defaults (for tuning: `laya eval context`).
    pub fn with_options(lexicon: Lexicon, opts: SpellerOptions) -> Self {
        let mut confusions: HashMap<&'static str, Vec<&'static str>> = HashMap::new();
        for set in CONFUSION_SETS {
            for w in set.iter() {
                let others = set.iter().copied().filter(|o| o != w && !o.contains(' '));
                confusions.entry(w).or_default().extend(others);
            }
        }
        Self {
            lexicon,
            confusions,
            user: HashSet::new(),
            opts,
            memo: Default::default(),
            neighbours: Default::default(),
            code_slips: Default::default(),
        }
    }

    pub fn lexicon(&self) -> &Lexicon {
        &self.lexicon
    }

    /// Words the user wants left alone (a user dictionary); case-insensitive.
    pub fn add_user_word(&mut self, word: &str) {
        self.user.insert(word.to_lowercase());
    }

    /// Replaces the user's words (another dictionary file was chosen).
    pub fn set_user_words(&mut self, words: &[String]) {
        self.user = words.iter().map(|w| w.to_lowercase()).collect();
    }

    pub fn is_user_word(&self, word: &str) -> bool {
        self.user.contains(&word.to_lowercase())
    }

    /// Whether `word` is spelled right: in the lexicon or the user's words, possessives
    /// ("log's", "users'") by their stem.
    pub fn is_known(&self, word: &str) -> bool {
        let known = |w: &str| self.lexicon.contains(w) || self.is_user_word(w);
        known(word) || ["'s", "’s", "'", "’"].iter().any(|s| word.strip_suffix(s).is_some_and(|stem| !stem.is_empty() && known(stem)))
    }

    /// Whether `word` may be offered as a suggestion: the lexicon knows it, or it is in a script
    /// the (English) lexicon has no say over (Chinese, Cyrillic, ...), where the model decides.
    pub fn may_offer(&self, word: &str) -> bool {
        self.is_known(word) || laya_text::has_other_script(word)
    }

    /// Whether a word a text uses `count` times is left alone for that: a spelling the lexicon
    /// does not know, used more than once, is meant (a name, a term); a known word is still
    /// checked (it can be the wrong one: "their" for "there"), and so is a word typed twice.
    pub fn meant_by_repetition(&self, word: &str, count: usize) -> bool {
        count > 1 && !self.is_known(word)
    }

    /// Suggestions for a word on its own, best first: the lexicon's prior and the error model.
    pub fn suggest(&self, typed: &str, n: usize) -> Vec<Correction> {
        self.ranked_alone(typed, n, Joins::All).into_iter().map(|(word, _, score)| Correction { word, score }).collect()
    }

    /// The `n` best words near `typed` on their own, written in its case: (word, edit cost,
    /// prior minus the error model's penalty), best first, each word once; with the two words
    /// `typed` may be, joined by slip, as `joins` says.
    fn ranked_alone(&self, typed: &str, n: usize, joins: Joins) -> Vec<(String, f32, f32)> {
        let w = self.opts.channel_weight;
        let key = sound_key(typed);
        let mut cands = self.lexicon.near(typed, MAX_COST);
        if joins != Joins::None {
            cands.extend(self.lexicon.splits(typed, joins == Joins::All));
        }
        if self.opts.sound_loglik.is_finite() && typed.chars().count() >= SOUND_LETTERS {
            let near: HashSet<String> = cands.iter().map(|c| c.word.clone()).collect();
            cands.extend(self.lexicon.sounding_like(typed, SOUND_CANDIDATES).into_iter().filter(|c| !near.contains(&c.word)));
        }
        let mut near: Vec<(String, f32, f32)> = cands
            .into_iter()
            .map(|c| {
                let ch = if w > 0.0 { w * self.slip_loglik(typed, key.as_deref(), &c.word) } else { -LAMBDA_ALONE * c.cost };
                (match_case(&c.word, typed), c.cost, c.log_prior + ch)
            })
            .collect();
        near.sort_by(|a, b| b.2.total_cmp(&a.2));
        let mut seen = HashSet::new();
        near.retain(|c| seen.insert(c.0.clone()));
        near.truncate(n);
        near
    }

    /// Misspellings and real-word errors in `text`, whose first `context_len` bytes are only
    /// context (the text before the part to check, e.g. the previous paragraph). `skip` says
    /// which words to leave alone besides the built-in rules (a per-document ignore list, words
    /// repeated in the document); `interrupt` is asked before each use of the model and stops
    /// the check with [`DecideError::Interrupted`] when it says so. Uses and moves `cache`.
    /// Without a model (not loaded, or failed to load) misspellings still get suggestions from
    /// the lexicon alone, and real-word errors are not looked for.
    ///
    /// The model's work is one prefill of the text up to the last word it is asked about (the
    /// log-probs before every earlier word come from the hidden states that prefill keeps),
    /// then one batched forward per word whose candidates it must score.
    pub fn check(
        &self,
        model: Option<&Model>,
        cache: &mut KvCache,
        text: &str,
        context_len: usize,
        skip: &dyn Fn(&str) -> bool,
        interrupt: &dyn Fn() -> bool,
    ) -> Result<Vec<Issue>> {
        let mut issues = Vec::new();
        let asks = self.asks(model.is_some(), text, context_len, skip, &mut issues)?;
        if let Some(model) = model {
            let (found, _) = self.judge(model, cache, text, &asks, interrupt)?;
            issues.extend(found.into_iter().flatten());
        }
        // An issue over two words typed apart ("in to") stands in for one found inside it. And
        // the other number of a word just after it rests on the text as written: in "shared a
        // cross threads" the "a" that asks for "thread" is part of "across".
        let joins: Vec<(usize, usize)> = issues.iter().filter(|i| i.word.contains(' ')).map(|i| (i.start, i.end)).collect();
        let after_join = |i: &Issue| {
            let number = |w: &str| plural_of(&i.word.to_lowercase(), w) || plural_of(w, &i.word.to_lowercase());
            i.kind == IssueKind::RealWord
                && i.suggestions.first().is_some_and(|c| number(&c.word.to_lowercase()))
                && joins.iter().any(|&(_, e)| e <= i.start && words(&text[e..i.start]).len() <= MODIFIERS)
        };
        let spans: Vec<(usize, usize)> = issues.iter().map(|i| (i.start, i.end)).collect();
        issues.retain(|i| !after_join(i) && !spans.iter().any(|&(s, e)| s <= i.start && i.end <= e && (s, e) != (i.start, i.end)));
        issues.sort_by_key(|i| i.start);
        Ok(issues)
    }

    /// Each ask's issue, or none, and how many asks were scored rather than read from the memo.
    /// Typos cluster ("I recieved teh letter"): a word judged with a slip in the words after it
    /// is judged on a text that is wrong either way, and may pass. So each word whose right
    /// context holds a flagged word is judged again with that word corrected (its best
    /// suggestion), until no more words are flagged; a word flagged already takes the
    /// suggestions ranked on that text. The text before a word is the document's,
    /// as written: the cache holds it, and a word is rarely hidden by an error before it (the
    /// model reads on past one).
    fn judge(
        &self,
        model: &Model,
        cache: &mut KvCache,
        text: &str,
        asks: &[Ask],
        interrupt: &dyn Fn() -> bool,
    ) -> Result<(Vec<Option<Issue>>, usize)> {
        let (scored, mut computed) = self.score_asks(model, cache, text, asks, interrupt)?;
        let mut found: Vec<Option<Issue>> = asks.iter().zip(scored).map(|(ask, scored)| self.decide(text, ask, scored)).collect();
        // The right context each ask was last judged with, where it was corrected.
        let mut judged_with: Vec<Option<String>> = vec![None; asks.len()];
        for _ in 0..CLUSTER_ROUNDS {
            let fixes: Vec<(usize, usize, &str)> =
                found.iter().flatten().filter_map(|i| i.suggestions.first().map(|c| (i.start, i.end, c.word.as_str()))).collect();
            // A word already flagged is judged again too: its suggestions are ranked on the
            // text it would have once the slip after it is fixed ("recieved" before "teh letter"
            // is "receive"; before "the letter", "received").
            let again: Vec<(usize, Ask)> = asks
                .iter()
                .enumerate()
                .filter_map(|(k, ask)| {
                    let right = corrected(text, ask.end, ask.reach, &fixes)?;
                    (judged_with[k].as_ref() != Some(&right))
                        .then(|| (k, Ask { right: Cow::Owned(right), cands: ask.cands.clone(), special: ask.special.clone(), ..*ask }))
                })
                .collect();
            if again.is_empty() {
                break;
            }
            let re_asks: Vec<Ask> = again.iter().map(|(_, a)| a.clone()).collect();
            let (scored, n) = self.score_asks(model, cache, text, &re_asks, interrupt)?;
            computed += n;
            let mut more = false;
            for ((k, ask), scored) in again.iter().zip(scored) {
                judged_with[*k] = Some(ask.right.to_string());
                if let Some(i) = self.decide(text, ask, scored) {
                    more |= found[*k].is_none();
                    found[*k] = Some(i);
                }
            }
            if !more {
                break;
            }
        }
        Ok((found, computed))
    }

    /// What to ask the model about `text` after `context_len`, word by word; misspellings that
    /// need no model (there is none) go straight into `issues`.
    fn asks<'t>(
        &self,
        with_model: bool,
        text: &'t str,
        context_len: usize,
        skip: &dyn Fn(&str) -> bool,
        issues: &mut Vec<Issue>,
    ) -> Result<Vec<Ask<'t>>> {
        if !text.is_char_boundary(context_len.min(text.len())) {
            return Err(DecideError::Input("context_len is not at a character boundary".into()));
        }
        let prose = prose_mask(text);
        let spans = words(text);
        let mut asks: Vec<Ask> = Vec::new();
        for (i, &(start, end)) in spans.iter().enumerate() {
            if start < context_len || !prose.contains(start) {
                continue;
            }
            let word = &text[start..end];
            let right = right_context(text, &spans, i);
            let reach = end + right.len();
            // Two words where one was meant ("in to", "some one", "with out"): the pair is
            // asked about against the word they make together, at a margin of its own. The
            // words are still asked about one by one below; where the pair is flagged, its
            // issue stands in for theirs (see [`Speller::check`]).
            if let Some(ask) = self.join_ask(with_model, text, &spans, i, &prose, right, skip) {
                asks.push(ask);
            }
            // The same word again after nothing but spaces ("the the"): one of the commonest
            // slips. Scored as the word against nothing at all (the text without it).
            if let Some(&(ps, pe)) = i.checked_sub(1).and_then(|j| spans.get(j)) {
                let gap = &text[pe..start];
                if with_model
                    && !gap.is_empty()
                    && gap.chars().all(|c| c == ' ' || c == '\t')
                    && text[ps..pe].eq_ignore_ascii_case(word)
                    && word.chars().any(char::is_alphabetic)
                    && !REDUPLICATED.contains(&word.to_lowercase().as_str())
                    && !skip(word)
                {
                    let cands = vec![(word.to_string(), 0.0), (String::new(), 0.0)];
                    asks.push(Ask {
                        start,
                        end,
                        kind: IssueKind::Repeated,
                        cands,
                        own: 0,
                        right: Cow::Borrowed(right),
                        reach,
                        uncontested: None,
                        special: vec![],
                    });
                    continue;
                }
            }
            if self.leave_alone(text, start, word) || skip(word) || self.known_across_emphasis(text, &spans, i) {
                continue;
            }
            let mut special: Vec<Special> = vec![];
            let (kind, cands, uncontested) = if !self.is_known(word) {
                if hyphen_joined(text, start, end, char::is_alphanumeric) {
                    // Part of a compound of its own making, most often a name ("aho-corasick",
                    // "regex-automata", "hardware-rng", "env-logger"): read as a piece of code
                    // is, a slip only where a common word is one likely slip away.
                    if hyphen_joined(text, start, end, |c| c.is_ascii_digit()) {
                        continue;
                    }
                    if let Some(suggestions) = self.code_slip(word) {
                        issues.push(Issue { start, end, word: word.to_string(), kind: IssueKind::Misspelling, suggestions });
                    }
                    continue;
                }
                if !with_model {
                    let suggestions = self.suggest(word, 5);
                    issues.push(Issue { start, end, word: word.to_string(), kind: IssueKind::Misspelling, suggestions });
                    continue;
                }
                // The word as written competes too: a name or term the model knows in this
                // context ("serde" in a changelog) is left alone.
                let mut cands = self.context_candidates(word);
                if cands.is_empty() {
                    continue; // nothing near it: a name or an identifier, not a slip
                }
                cands.push((word.to_string(), 0.0));
                (IssueKind::Misspelling, cands, None)
            } else {
                if !with_model {
                    continue;
                }
                // Capitalized inside a sentence, a word is a name: a type or a trait ("Implemented
                // Weight trait" is not "Wait"), a product, a word of a title.
                if word.starts_with(char::is_uppercase) && !sentence_start(text, start) {
                    continue;
                }
                // A word alone in quotes is mentioned, not used: it catches "than" for "then"; the
                // option "verbose". Grammar does not reach into it.
                if quoted_alone(text, start, end) {
                    continue;
                }
                let lower = word.to_lowercase();
                let next = spans.get(i + 1).map_or("", |&(s, e)| &text[s..e]);
                if possessive_fixed(&lower, next) {
                    continue;
                }
                let mut others: Vec<String> = self.confusions.get(lower.as_str()).map_or(vec![], |o| o.iter().map(|o| o.to_string()).collect());
                if article_fits(&lower, next) {
                    others.retain(|o| o != "and");
                }
                if self.opts.inflection_margin.is_finite() {
                    for form in inflections(&self.lexicon, &lower) {
                        if !others.contains(&form) {
                            others.push(form);
                        }
                    }
                }
                // Each form once, at the margin of the first rule that asks for it.
                let mut ask_forms = |forms: Vec<String>, margin: f32| {
                    for word in forms {
                        if !special.iter().any(|s| s.word == word) {
                            special.push(Special { word, margin, prune: false });
                        }
                    }
                };
                // Where the sentence's shape leaves no other reading, less evidence will do.
                let plain = |margin: f32, yes: bool| if yes { margin.min(self.opts.plain_agreement_margin) } else { margin };
                if self.opts.agreement_margin.is_finite() {
                    let margin = self.opts.agreement_margin;
                    ask_forms(agreement_forms(&self.lexicon, text, &spans, i), plain(margin, heads_its_phrase(text, &spans, i)));
                    ask_forms(subject_forms(&self.lexicon, text, &spans, i), margin);
                    let verb_margin = plain(margin, takes_an_object(text, &spans, i));
                    ask_forms(subject_verb_forms(&self.lexicon, text, &spans, i), verb_margin);
                    ask_forms(partitive_verb_forms(&self.lexicon, text, &spans, i), verb_margin);
                }
                if self.opts.verb_margin.is_finite() {
                    let forms = verb_forms(&self.lexicon, text, &spans, i);
                    ask_forms(forms.words, plain(self.opts.verb_margin, forms.plain));
                }
                if self.opts.neighbour_margin.is_finite() && lower.chars().count() >= NEIGHBOUR_LETTERS && lower == word && i >= NEIGHBOUR_LEFT_WORDS
                {
                    let margin = self.opts.neighbour_margin;
                    // A neighbour that is also in the word's confusion set is asked about as
                    // one of it, at its margin and never pruned: "its" one slip from "it's".
                    // Its other grammatical number is no neighbour: "memory orderings" is not
                    // "ordering" ("Fixed incorrect memory orderings"). Agreement with a
                    // determiner asks about that form on its own terms (agreement_forms).
                    let fresh = self.neighbours(&lower).into_iter().filter(|n| !others.contains(n) && !plural_of(&lower, n) && !plural_of(n, &lower));
                    special.extend(fresh.map(|word| Special { word, margin, prune: true }));
                }
                for form in special.iter().map(|s| &s.word) {
                    if !others.contains(form) {
                        others.push(form.clone());
                    }
                }
                // The last word of a text that stops mid-sentence (a line cut short, the word
                // the writer has just typed) has nothing after it to tell one word of a set from
                // another: "a call to panic, an" is not "and" yet. (A line's last word inside a
                // text has the next line after it.)
                if others.is_empty() || text[end..].trim().is_empty() {
                    continue;
                }
                let mut cands: Vec<(String, f32)> = vec![(word.to_string(), 0.0)];
                cands.extend(others.iter().map(|o| (match_case(o, word), 0.0)));
                (IssueKind::RealWord, cands, Some(self.opts.uncontested_nats))
            };
            let own = if kind == IssueKind::Misspelling { cands.len() - 1 } else { 0 };
            asks.push(Ask { start, end, kind, cands, own, right: Cow::Borrowed(right), reach, uncontested, special });
        }
        for (start, end) in code_pieces(text, &prose) {
            let piece = &text[start..end];
            if start < context_len || skip(piece) {
                continue;
            }
            if let Some(suggestions) = self.code_slip(piece) {
                issues.push(Issue { start, end, word: piece.to_string(), kind: IssueKind::Misspelling, suggestions });
            }
        }
        Ok(asks)
    }

    /// The ask for word `i` and the word before it typed apart where one word was meant
    /// ([`Lexicon::joined`]): one space between them, both prose and left to be checked, the
    /// first in lower case or starting a sentence, and text after the second (the writer may
    /// still be typing it). Its candidates are the two words as written and the one they make.
    #[allow(clippy::too_many_arguments)]
    fn join_ask<'t>(
        &self,
        with_model: bool,
        text: &'t str,
        spans: &[(usize, usize)],
        i: usize,
        prose: &ProseMask,
        right: &'t str,
        skip: &dyn Fn(&str) -> bool,
    ) -> Option<Ask<'t>> {
        let (start, end) = spans[i];
        let (ps, pe) = spans[i.checked_sub(1)?];
        if !with_model || !self.opts.join_margin.is_finite() || &text[pe..start] != " " || !prose.contains(ps) || text[end..].trim().is_empty() {
            return None;
        }
        let (first, second) = (&text[ps..pe], &text[start..end]);
        if skip(first) || skip(second) || (first.starts_with(char::is_uppercase) && !sentence_start(text, ps)) {
            return None;
        }
        if hyphen_joined(text, ps, pe, char::is_alphanumeric) || hyphen_joined(text, start, end, char::is_alphanumeric) {
            return None;
        }
        let whole = self.lexicon.joined(first, second)?;
        let special = vec![Special { word: whole.to_lowercase(), margin: self.opts.join_margin, prune: false }];
        Some(Ask {
            start: ps,
            end,
            kind: IssueKind::RealWord,
            cands: vec![(text[ps..end].to_string(), 0.0), (whole, 0.0)],
            own: 0,
            right: Cow::Borrowed(right),
            reach: end + right.len(),
            uncontested: None,
            special,
        })
    }

    /// Scores ahead, into the memo [`Speller::check`] reads, the correct-looking words of `text`
    /// (after `context_len`) whose text after them is settled: the words of their right context
    /// are finished, so typing on at the end of `text` cannot change what a check will ask. It
    /// is what a check of the paragraph will need, worked out as the writer types (one forward
    /// per contested word, [`DecideError::Interrupted`] between them when `interrupt` says so).
    /// Misspellings are left to the check: their dozen candidates make a forward too long to
    /// slip between keystrokes. Returns how many words it scored.
    pub fn check_ahead(&self, model: &Model, cache: &mut KvCache, text: &str, context_len: usize, interrupt: &dyn Fn() -> bool) -> Result<usize> {
        let mut asks = self.asks(true, text, context_len, &|w| !self.is_known(w), &mut Vec::new())?;
        asks.retain(|a| settled(text, a.reach));
        Ok(self.judge(model, cache, text, &asks, interrupt)?.1)
    }

    /// Each ask's candidates scored in context, best first (from the memo where it was asked
    /// before in the very same context), and how many were not in the memo. A long text is
    /// scored a stretch at a time (see [`stretch_bases`]), so no prefill outgrows the model.
    fn score_asks(
        &self,
        model: &Model,
        cache: &mut KvCache,
        text: &str,
        asks: &[Ask],
        interrupt: &dyn Fn() -> bool,
    ) -> Result<(Vec<Vec<Correction>>, usize)> {
        let bases = stretch_bases(text, asks, stretch_bytes(model));
        let mut out: Vec<Option<Vec<Correction>>> = vec![None; asks.len()];
        let mut todo = Vec::new(); // (ask, memo key, lead, left: the text from its base)
        for (k, ask) in asks.iter().enumerate() {
            let (lead, left) = split_lead(&text[bases[k]..ask.start]);
            let key = self.memo_key(model, lead, left, ask);
            match self.memo.lock().ok().and_then(|m| m.get(&key).cloned()) {
                Some(hit) => out[k] = Some(hit),
                None => todo.push((k, key, lead, left)),
            }
        }
        for stretch in todo.chunk_by(|a, b| bases[a.0] == bases[b.0]) {
            self.score_stretch(model, cache, text, bases[stretch[0].0], asks, stretch, &mut out, interrupt)?;
        }
        Ok((out.into_iter().map(Option::unwrap_or_default).collect(), todo.len()))
    }

    /// Scores the asks of one stretch, all of whose words have their context in the text from
    /// `base` on, into `out` and the memo.
    #[allow(clippy::too_many_arguments)]
    fn score_stretch(
        &self,
        model: &Model,
        cache: &mut KvCache,
        text: &str,
        base: usize,
        asks: &[Ask],
        todo: &[(usize, u64, &str, &str)],
        out: &mut [Option<Vec<Correction>>],
        interrupt: &dyn Fn() -> bool,
    ) -> Result<()> {
        if interrupt() {
            return Err(DecideError::Interrupted);
        }
        let text = &text[base..];
        let ids: Vec<Vec<u32>> = todo.iter().map(|t| model.tokenizer.encode_context(t.3)).collect::<std::result::Result<_, _>>()?;
        // One prefill, up to the end of the last word asked about and the text after it; every
        // word's context is a prefix of it (subword tokens carry their leading space, so text
        // cut before a space tokenizes as a prefix of the longer text: checked, not assumed).
        let upto = todo.iter().map(|t| asks[t.0].reach - base).max().unwrap_or(0);
        let full = model.tokenizer.encode_document(&text[..upto])?;
        let shared = ids.iter().any(|v| !v.is_empty()) && ids.iter().all(|v| full.starts_with(v));
        let mut forks = if shared {
            // A cache that already holds the text (the document's, typed further) needs nothing:
            // the log-probs come from its hidden states, not from a prefill's last position
            // (which would cut it back and run the last token again).
            if !(cache.rows() == 1 && cache.tokens().starts_with(&full)) {
                model.prefill(cache, &full)?;
            }
            model.forks_at(cache, &ids.iter().map(Vec::len).collect::<Vec<_>>())?
        } else {
            vec![None; todo.len()]
        };
        for (j, (k, key, lead, _)) in todo.iter().enumerate() {
            let ask = &asks[*k];
            if j > 0 && interrupt() {
                return Err(DecideError::Interrupted);
            }
            let scored = match forks[j].as_mut() {
                Some(fork) => self.in_context(model, fork, Some((&*cache, &full[ids[j].len()..])), lead, ask)?,
                None => {
                    model.prefill(cache, &ids[j])?;
                    self.in_context(model, cache, None, lead, ask)?
                }
            };
            keep(&self.memo, *key, scored.clone());
            out[*k] = Some(scored);
        }
        Ok(())
    }

    /// What an ask's scores say: an issue, or none.
    fn decide(&self, text: &str, ask: &Ask, scored: Vec<Correction>) -> Option<Issue> {
        let word = &text[ask.start..ask.end];
        let own = scored.iter().find(|c| c.word == word).map_or(f32::NEG_INFINITY, |c| c.score);
        let issue = |kind, suggestions| Some(Issue { start: ask.start, end: ask.end, word: word.to_string(), kind, suggestions });
        match ask.kind {
            IssueKind::Misspelling => {
                // Whether it is a slip at all: some near word explains the text better than the
                // word as written by the margin, with a lighter edit penalty than the one that
                // orders the corrections among themselves, and a slip a writer makes leads from
                // it to what was typed; or the slip is likely enough that the context need not
                // prefer the word by much (see SpellerOptions::likely_slip_margin).
                let cost_of = |w: &str| ask.cands.iter().find(|c| c.0 == w).map_or(0.0, |c| c.1);
                let channel = ErrorModel::builtin();
                let slip_of = |c: &Correction| {
                    // How much likelier the text is with the near word (nats), and how likely
                    // the slip from it to what was typed is.
                    let lift = c.score + LAMBDA_CONTEXT * cost_of(&c.word) - own;
                    let slip = channel.log_likelihood(word, &c.word);
                    (lift - LAMBDA_FLAG * cost_of(&c.word) >= self.opts.non_word_margin && slip >= self.opts.slip_floor)
                        || lift + slip >= self.opts.likely_slip_margin
                };
                if !scored.iter().filter(|c| c.word != word).any(slip_of) {
                    return None;
                }
                let mut suggestions: Vec<Correction> = scored.into_iter().filter(|c| c.word != word).collect();
                let w = self.opts.context_channel_weight;
                if w > 0.0 {
                    let key = sound_key(word);
                    let order = |c: &Correction| c.score + LAMBDA_CONTEXT * cost_of(&c.word) + w * self.slip_loglik(word, key.as_deref(), &c.word);
                    suggestions.sort_by(|a, b| order(b).total_cmp(&order(a)));
                }
                issue(IssueKind::Misspelling, suggestions)
            }
            IssueKind::Repeated => {
                let dropped = scored.iter().find(|c| c.word.is_empty())?;
                if dropped.score - own < DOUBLED_MARGIN {
                    return None;
                }
                // The issue spans the space before the word too: deleting it leaves one space.
                let from = text[..ask.start].trim_end_matches([' ', '\t']).len();
                Some(Issue {
                    start: from,
                    end: ask.end,
                    word: text[from..ask.end].to_string(),
                    kind: IssueKind::Repeated,
                    suggestions: vec![Correction { word: String::new(), score: dropped.score }],
                })
            }
            IssueKind::RealWord => {
                let best = scored.first()?;
                let (typed, meant) = (word.to_lowercase(), best.word.to_lowercase());
                let confused = self.confusions.get(typed.as_str()).is_some_and(|o| o.contains(&meant.as_str()));
                let special = ask.special.iter().filter(|s| s.word == meant).map(|s| s.margin).fold(f32::INFINITY, f32::min);
                let margin = if !confused && special.is_finite() {
                    special
                } else if !confused {
                    self.opts.inflection_margin
                } else if common_slip(&typed, &meant) {
                    self.opts.real_word_margin - self.opts.common_prior_nats
                } else {
                    self.opts.real_word_margin
                };
                if best.word == word || best.score - own < margin {
                    return None;
                }
                issue(IssueKind::RealWord, scored.into_iter().filter(|c| c.word != word).collect())
            }
        }
    }

    /// Suggestions for `piece`, a piece of an identifier in inline code (see
    /// [`laya_text::code_pieces`]), where it is a slip: a word of CODE_LETTERS letters or more
    /// that neither the lexicon nor the writer knows, whose likeliest word alone is a common word
    /// (ln prior over CODE_PRIOR) one likely slip away (`code_slip`). Code is no sentence, so
    /// the model has no say; and a name the writer coined is rarely that close to a common word
    /// ("Rectagle" and "Initialze" are; "Tokio", "Serde", "Vec" are not; "Corfig" is, but the
    /// term lists' "config" is too rare here, ln prior -19).
    fn code_slip(&self, piece: &str) -> Option<Vec<Correction>> {
        // The writer's words may change between checks; the lexicon's verdict does not.
        let letters = piece.chars().count();
        if !self.opts.code_slip.is_finite() || letters < CODE_LETTERS || piece.chars().all(|c| c.is_ascii_uppercase()) || self.is_known(piece) {
            return None;
        }
        remembered(&self.code_slips, piece, || {
            let best = self.ranked_alone(piece, 5, Joins::None);
            let (word, _, _) = best.first()?;
            let common = self.lexicon.log_prior(word).is_some_and(|p| p > CODE_PRIOR);
            if !common || ErrorModel::builtin().log_likelihood(piece, word) < self.opts.code_slip {
                return None;
            }
            Some(best.into_iter().map(|(word, _, score)| Correction { word, score }).collect())
        })
    }

    /// Up to NEIGHBOURS lowercase words one slip from `word` (lowercase) whose ln prior is over
    /// NEIGHBOUR_PRIOR, commonest first; remembered per word.
    fn neighbours(&self, word: &str) -> Vec<String> {
        remembered(&self.neighbours, word, || {
            let mut common: Vec<_> = self
                .lexicon
                .near(word, 1.0)
                .into_iter()
                .filter(|n| n.log_prior > NEIGHBOUR_PRIOR && n.word.chars().all(|c| c.is_ascii_lowercase()))
                .collect();
            common.sort_by(|a, b| b.log_prior.total_cmp(&a.log_prior));
            common.into_iter().take(NEIGHBOURS).map(|n| n.word).collect()
        })
    }

    /// The misspelling's candidates the model scores in context: (word, edit cost), the most
    /// likely on their own first.
    /// Nothing when no word is near it in letters, only in sound: in running text such a word
    /// is far more often a name or an identifier ("rwlock", "callsite") than spelled by ear.
    fn context_candidates(&self, word: &str) -> Vec<(String, f32)> {
        // Words one sound away are for words alone: in context they add false alarms (46 against
        // 43 on context-errors.jsonl) and find nothing more.
        let cands: Vec<(String, f32)> = self
            .ranked_alone(word, CONTEXT_CANDIDATES, Joins::Slips)
            .into_iter()
            .filter(|c| c.1 <= SOUND_COST)
            .map(|(w, cost, _)| (w, cost))
            .collect();
        if cands.iter().all(|c| c.1 > MAX_COST) {
            return vec![];
        }
        cands
    }

    /// The learned error model's log-likelihood of `typed` as a slip of `word`, raised to
    /// `sound_loglik` where the two sound alike (`typed_key` is `typed`'s [`sound_key`]).
    fn slip_loglik(&self, typed: &str, typed_key: Option<&str>, word: &str) -> f32 {
        let slip = ErrorModel::builtin().log_likelihood(typed, word);
        let floor = self.opts.sound_loglik;
        if floor.is_finite() && typed_key.is_some() && sound_key(word).as_deref() == typed_key {
            slip.max(floor)
        } else {
            slip
        }
    }

    /// Built-in rules for words that are not errors even when the lexicon lacks them: names
    /// (capitalized inside a sentence), acronyms, words with digits or underscores, the user's.
    fn leave_alone(&self, text: &str, start: usize, word: &str) -> bool {
        let letters = word.chars().filter(|c| c.is_alphabetic()).count();
        if (letters < 2 && !self.confusions.contains_key(word)) || word.chars().any(|c| c.is_ascii_digit() || c == '_') {
            return true;
        }
        // The lexicon is English: a word with letters of another script (Chinese, Cyrillic, ...)
        // is not for it to judge.
        if laya_text::has_other_script(word) {
            return true;
        }
        if self.is_user_word(word) {
            return true;
        }
        let upper = word.chars().filter(|c| c.is_uppercase()).count();
        if upper == letters || upper > 1 {
            return true; // NASA, iPhone-like, CamelCase
        }
        if !self.lexicon.contains(word) && self.plural_of_known(word) {
            return true; // "Hashers", capitalized or not
        }
        let first_upper = word.chars().next().is_some_and(char::is_uppercase);
        if first_upper && !self.lexicon.contains(word) && next_to_name(&self.lexicon, text, start, start + word.len()) {
            // Part of a name ("Jean Baronas", "Prosser Gifford", "Avra Michelson"): a slip only
            // where a slip in code would be one, a common word one likely slip away ("Pyton
            // Software"), and never a short one ("George Thoma"); the model cannot tell a
            // surname from a misspelling.
            return letters < NAME_SLIP_LETTERS || self.code_slip(word).is_none();
        }
        if first_upper && !self.lexicon.contains(word) && !sentence_start(text, start) {
            // A name, unless it is one slip from a common lowercase word: "Pacakges",
            // "Aquisition" are capitalized misspellings, not names.
            let floor = if letters >= LONG_NAME_SLIP_LETTERS { LONG_NAME_SLIP_PRIOR } else { NAME_SLIP_PRIOR };
            let slip_of_common = |n: &crate::lexicon::Near| n.log_prior > floor && n.word.chars().all(|c| !c.is_uppercase());
            return letters < NAME_SLIP_LETTERS || !self.lexicon.near(word, NAME_SLIP_COST).iter().any(slip_of_common);
        }
        // Non-ASCII words are outside an English lexicon's reach.
        !self.lexicon.contains(word) && !word.is_ascii()
    }

    /// Whether `word`, missing from the lexicon, is the regular plural of a word in it:
    /// "intrinsics", "deques", "usizes", "Hashers". Lists of words leave out most such forms of
    /// technical terms, and the plural rule a writer follows is no slip. Only where the rule
    /// holds: "s" after no s, x, z, ch, sh or consonant + y, "es" after those ("valuess" and
    /// "fetchs" stay slips), on a stem of PLURAL_STEM_LETTERS letters or more.
    fn plural_of_known(&self, word: &str) -> bool {
        let w = word.to_lowercase();
        let sibilant = |s: &str| ["s", "x", "z", "ch", "sh"].iter().any(|e| s.ends_with(e));
        let consonant_y = |s: &str| s.ends_with('y') && !s[..s.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
        let known = |s: &str| s.chars().count() >= PLURAL_STEM_LETTERS && self.lexicon.contains(s);
        // The classical plurals too ("automata", "lexica", "memoranda"): the lexicon has most of
        // them, not all; no misspelling in codespell's list of 40,000 takes either form.
        let classical =
            w.strip_suffix('a').is_some_and(|s| s.chars().count() >= PLURAL_STEM_LETTERS && (known(&format!("{s}on")) || known(&format!("{s}um"))));
        w.strip_suffix("es").is_some_and(|s| sibilant(s) && known(s))
            || w.strip_suffix('s').is_some_and(|s| !sibilant(s) && !consonant_y(s) && known(s))
            || classical
    }

    /// Whether word `i` is a piece of a longer word that Markdown emphasis cuts up
    /// ("**s**ubstitution", "sub*stitution*"), and the whole is a known word.
    fn known_across_emphasis(&self, text: &str, spans: &[(usize, usize)], i: usize) -> bool {
        let glued = |a: (usize, usize), b: (usize, usize)| {
            let gap = &text[a.1..b.0];
            !gap.is_empty() && gap.chars().all(|c| c == '*' || c == '_')
        };
        let (mut first, mut last) = (i, i);
        while first > 0 && glued(spans[first - 1], spans[first]) {
            first -= 1;
        }
        while last + 1 < spans.len() && glued(spans[last], spans[last + 1]) {
            last += 1;
        }
        first != last && self.is_known(&spans[first..=last].iter().map(|&(s, e)| &text[s..e]).collect::<String>())
    }

    /// The memo's key of an ask: the model, the text around the word, the candidates.
    fn memo_key(&self, model: &Model, lead: &str, left: &str, ask: &Ask) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&model.info.path, model.info.load_time, lead, left, &ask.right, ask.uncontested.map(f32::to_bits)).hash(&mut h);
        for (w, cost) in &ask.cands {
            (w, cost.to_bits()).hash(&mut h);
        }
        h.finish()
    }

    /// Scores an ask's candidates (word, edit cost) as the word after what `cache` holds (its
    /// context, with the next-token log-probs), each after `lead` and followed by its right
    /// context; best first. With `uncontested`: when the first candidate's first token leads
    /// every other's by that many nats, only it comes back (with that log-prob as its score).
    /// `written`: a cache holding the text as written, and its tokens from the word's start on.
    /// When the word and the text after it tokenize alike there, its score is read off that
    /// cache, and only the other candidates go through a forward.
    fn in_context(&self, model: &Model, cache: &mut KvCache, written: Option<(&KvCache, &[u32])>, lead: &str, ask: &Ask) -> Result<Vec<Correction>> {
        let toks = ask
            .cands
            .iter()
            // The empty candidate (a doubled word dropped) takes its leading space with it.
            .map(|(w, _)| model.tokenizer.encode(&if w.is_empty() { ask.right.to_string() } else { format!("{lead}{w}{}", ask.right) }))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        // Which candidates are scored: all, but where the first tokens already decide.
        let mut keep = vec![true; toks.len()];
        let neighbours = ask.special.iter().any(|s| s.prune);
        if ask.uncontested.is_some_and(f32::is_finite) || neighbours {
            let lp = model.next_logprobs(cache)?;
            let first = |t: &[u32]| t.first().and_then(|&id| lp.get(id as usize).copied()).unwrap_or(f32::NEG_INFINITY);
            let own = first(&toks[ask.own]);
            // Only a word that is one token is judged by its first: the first token of "it's"
            // is " it", which "it is", "it was" and every other "it" share, so its lead over
            // " its" says nothing of "it's job" against "its job".
            let one_token = || model.tokenizer.encode(&format!("{lead}{}", ask.cands[ask.own].0)).is_ok_and(|t| t.len() == 1);
            if let Some(nats) = ask.uncontested.filter(|n| n.is_finite() && one_token()) {
                let own_first = toks[ask.own].first();
                if toks.iter().enumerate().all(|(i, t)| i == ask.own || (t.first() != own_first && first(t) + nats <= own)) {
                    return Ok(vec![Correction { word: ask.cands[ask.own].0.clone(), score: own }]);
                }
            }
            // A common word one slip away is asked about only where its first token is about
            // as likely as the written word's (see NEIGHBOUR_SLACK).
            for (i, (w, _)) in ask.cands.iter().enumerate() {
                let pruned = ask.special.iter().any(|s| s.prune && s.word == w.to_lowercase());
                if pruned && toks[i].first() != toks[ask.own].first() && first(&toks[i]) + NEIGHBOUR_SLACK <= own {
                    keep[i] = false;
                }
            }
            if keep.iter().filter(|&&k| k).count() == 1 {
                return Ok(vec![Correction { word: ask.cands[ask.own].0.clone(), score: own }]);
            }
        }
        // The word as written: its log-probs read off the written text's cache, in the same head
        // matmul as its alternatives' forward.
        let own_toks = &toks[ask.own];
        let own_rows = match written {
            Some((full, after)) if after.starts_with(own_toks) => {
                let at: Vec<usize> = (cache.offset()..cache.offset() + own_toks.len()).collect();
                model.cached_rows(full, &at)?
            }
            _ => None,
        };
        let scored: Vec<usize> = (0..toks.len()).filter(|&i| keep[i]).collect();
        let mut totals = vec![f32::NEG_INFINITY; toks.len()];
        match own_rows {
            Some(rows) => {
                let others: Vec<Vec<u32>> = scored.iter().filter(|&&i| i != ask.own).map(|&i| toks[i].clone()).collect();
                let (scores, own_lp) = model.score_with_cached(cache, &others, rows)?;
                totals[ask.own] = own_lp.iter().sum();
                for (&i, s) in scored.iter().filter(|&&i| i != ask.own).zip(scores) {
                    totals[i] = s.total;
                }
            }
            None => {
                let these: Vec<Vec<u32>> = scored.iter().map(|&i| toks[i].clone()).collect();
                for (&i, s) in scored.iter().zip(model.score(cache, &these)?) {
                    totals[i] = s.total;
                }
            }
        }
        // Candidates dropped unscored are not suggestions.
        let mut out: Vec<Correction> = scored
            .iter()
            .map(|&i| {
                let (w, cost) = &ask.cands[i];
                Correction { word: w.clone(), score: totals[i] - LAMBDA_CONTEXT * cost }
            })
            .collect();
        out.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(out)
    }
}

/// A word to ask the model about: its candidates (word, edit cost; the word as written among
/// them) and the text after it.
#[derive(Clone)]
struct Ask<'a> {
    start: usize,
    end: usize,
    kind: IssueKind,
    cands: Vec<(String, f32)>,
    /// Which candidate is the word as written.
    own: usize,
    /// The text after the word (as written, or with a slip in it corrected: see [`Speller::check`]).
    right: Cow<'a, str>,
    /// Where the right context as written ends in the text.
    reach: usize,
    /// For a correct-looking word: see [`SpellerOptions::uncontested_nats`].
    uncontested: Option<f32>,
    /// Candidates of a correct-looking word that are in no confusion set, with the margin each
    /// must clear (lowercase): the other number where a determiner asks for it, common words
    /// one slip away.
    special: Vec<Special>,
}

/// A candidate of a correct-looking word with a margin of its own (see [`Ask::special`]).
#[derive(Clone)]
struct Special {
    /// Lowercase.
    word: String,
    margin: f32,
    /// Dropped unscored when its first token is well behind the written word's (NEIGHBOUR_SLACK).
    prune: bool,
}

/// How many bytes of text one stretch of a check may prefill: a quarter of the model's context
/// even at a token per byte (text the tokenizer cannot merge), and at most 6,000.
fn stretch_bytes(model: &Model) -> usize {
    (model.config.context_len / 4).clamp(256, 6000)
}

/// Where each ask's context starts. A text whose asks end (with the words after them) within
/// `limit` bytes is one stretch from its start, as it always was. A longer one (a whole file to
/// `laya check`) is cut into stretches: each starts at the beginning of a sentence up to a
/// quarter of `limit` before its first word, and takes the asks that end within `limit` of it.
fn stretch_bases(text: &str, asks: &[Ask], limit: usize) -> Vec<usize> {
    let reach = |a: &Ask| a.reach;
    let mut base = 0;
    asks.iter()
        .map(|a| {
            if reach(a) - base > limit {
                base = window_start(text, a.start, limit / 4);
            }
            base
        })
        .collect()
}

/// A place at most `max` bytes before `at` (and before it, where `at` > 0) to start a word's
/// context: the start of a sentence or line if there is one in reach, else of a word.
fn window_start(text: &str, at: usize, max: usize) -> usize {
    let mut from = at.saturating_sub(max);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let reach = &text[from..at];
    let starts = |sentence: bool| {
        reach.char_indices().find(|&(i, c)| {
            let before = &reach[..i];
            let after_space = before.ends_with(char::is_whitespace);
            !c.is_whitespace()
                && i > 0
                && if sentence { before.ends_with('\n') || (after_space && before.trim_end().ends_with(['.', '!', '?'])) } else { after_space }
        })
    };
    match starts(true).or_else(|| starts(false)) {
        Some((i, _)) if from > 0 => from + i,
        _ => from,
    }
}

/// `text[from..to]` with the `fixes` inside it applied (byte range, replacement), or None when
/// none is inside.
fn corrected(text: &str, from: usize, to: usize, fixes: &[(usize, usize, &str)]) -> Option<String> {
    let mut inside: Vec<&(usize, usize, &str)> = fixes.iter().filter(|f| f.0 >= from && f.1 <= to).collect();
    if inside.is_empty() {
        return None;
    }
    inside.sort_by_key(|f| f.0);
    let (mut out, mut at) = (String::new(), from);
    for &&(s, e, w) in &inside {
        if s < at {
            continue; // overlaps the one before
        }
        out.push_str(&text[at..s]);
        out.push_str(w);
        at = e;
    }
    out.push_str(&text[at..to]);
    Some(out)
}

/// Splits the text before a word into the context and the whitespace that leads the word:
/// subword tokens carry their leading space (" word"), so the space goes with the candidates.
fn split_lead(left: &str) -> (&str, &str) {
    let trimmed = left.trim_end_matches([' ', '\t']);
    let lead = &left[trimmed.len()..];
    // One space rides with the word; more stay in the context.
    match lead.len() {
        0 => ("", left),
        _ => (" ", &left[..left.len() - 1]),
    }
}

/// The text after word `i` up to RIGHT_WORDS words on, stopping at a sentence's or line's end.
fn right_context<'a>(text: &'a str, spans: &[(usize, usize)], i: usize) -> &'a str {
    let from = spans[i].1;
    let mut to = spans.get(i + RIGHT_WORDS).map_or(text.len(), |s| s.1);
    if let Some(stop) = text[from..to].find(['.', '!', '?', '\n']) {
        to = from + stop + 1;
    }
    &text[from..to]
}

/// Whether the right context ending at byte `end` of `text` is final: it ends a sentence or a
/// line, or a character that cannot continue its last word follows it.
fn settled(text: &str, end: usize) -> bool {
    text[..end].ends_with(['.', '!', '?', '\n']) || text[end..].chars().next().is_some_and(|c| !laya_text::is_word_char(c))
}

/// Whether the word at byte `start` begins a sentence (text start, or after . ! ? : or a blank line).
fn sentence_start(text: &str, start: usize) -> bool {
    let before =
        text[..start].trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '“' | '‘' | '(' | '*' | '_' | '#' | '-' | '>'));
    let gap = &text[before.len()..start];
    // A list item or a heading starts one too ("- Their", "# Weight").
    let marked_line = gap.contains('\n') && gap.rsplit('\n').next().is_some_and(|l| l.contains(['-', '*', '#', '>']));
    before.is_empty() || before.ends_with(['.', '!', '?', ':']) || gap.contains("\n\n") || marked_line
}

/// Whether the word at `text[start..end]` fills a pair of quotes by itself ("than", “than”,
/// 'than'), the opening one at the text's start or after a space or a bracket (so that an
/// apostrophe is none: "the users'") and the closing one before no letter or digit.
fn quoted_alone(text: &str, start: usize, end: usize) -> bool {
    let (Some(open), Some(close)) = (text[..start].chars().next_back(), text[end..].chars().next()) else { return false };
    let pair = matches!((open, close), ('"', '"') | ('\u{201c}', '\u{201d}') | ('\'', '\'') | ('\u{2018}', '\u{2019}'));
    let before = text[..start - open.len_utf8()].chars().next_back();
    let after = text[end + close.len_utf8()..].chars().next();
    pair && before.is_none_or(|c| c.is_whitespace() || "([{".contains(c)) && after.is_none_or(|c| !c.is_alphanumeric())
}

/// Whether the word at `text[start..end]` is joined by a hyphen to a character `joins` accepts:
/// to another word ("aho-corasick"), or to a number ("Modula-3", "x86-64": a name, as letters
/// next to a digit in code are).
fn hyphen_joined(text: &str, start: usize, end: usize, joins: impl Fn(char) -> bool) -> bool {
    let before = text[..start].strip_suffix('-').and_then(|t| t.chars().next_back());
    let after = text[end..].strip_prefix('-').and_then(|t| t.chars().next());
    before.is_some_and(&joins) || after.is_some_and(&joins)
}

/// Whether the word at `text[start..end]` stands next to another part of a name: a capitalized
/// word of two letters or more, one space away, that the lexicon does not know or knows only
/// capitalized ("Jean", "Michelson"; not "The", "Using", "I").
fn next_to_name(lexicon: &Lexicon, text: &str, start: usize, end: usize) -> bool {
    let name = |w: &str| {
        w.chars().count() >= 2
            && w.chars().next().is_some_and(char::is_uppercase)
            && w.chars().all(char::is_alphabetic)
            && lexicon.get(w).is_none_or(|e| e.word.starts_with(char::is_uppercase))
    };
    let before = text[..start].strip_suffix(' ').and_then(|t| t.rsplit(|c: char| !c.is_alphabetic()).next());
    let after = text[end..].strip_prefix(' ').and_then(|t| t.split(|c: char| !c.is_alphabetic()).next());
    before.is_some_and(name) || after.is_some_and(name)
}

/// Number of occurrences of each word (lower case) in a document: words used twice or more are
/// taken as intended.
pub fn word_counts(text: &str) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for (s, e) in words(text) {
        *m.entry(text[s..e].to_lowercase()).or_insert(0) += 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_space_goes_with_the_candidate() {
        assert_eq!(split_lead("I went to "), (" ", "I went to"));
        assert_eq!(split_lead("(x"), ("", "(x"));
        assert_eq!(split_lead(""), ("", ""));
    }

    #[test]
    fn a_long_text_is_scored_a_stretch_at_a_time_from_sentence_starts() {
        let text = "First one here. Second one. Third line\nfourth part is long";
        let at = text.find("long").unwrap();
        // The start of a sentence or line in reach, never the word itself.
        assert_eq!(&text[window_start(text, at, 20)..at], "fourth part is ");
        assert_eq!(&text[window_start(text, at, 30)..at], "Third line\nfourth part is ", "the earliest: the most context");
        assert_eq!(&text[window_start(text, at, 50)..at], "Second one. Third line\nfourth part is ");
        assert_eq!(window_start(text, at, 500), 0, "all of it is in reach");
        // No sentence start in reach: the start of a word; not even that: the reach itself.
        assert_eq!(&text[window_start(text, at, 12)..at], "part is ");
        let word = "x".repeat(40);
        assert_eq!(window_start(&format!("{word} y"), 41, 10), 31);
        assert_eq!(window_start("ééééé y", 11, 3), 8, "on a character boundary");

        let ask = |start: usize, end: usize| Ask {
            start,
            end,
            kind: IssueKind::RealWord,
            cands: vec![],
            own: 0,
            right: Cow::Borrowed(""),
            reach: end,
            uncontested: None,
            special: vec![],
        };
        let asks: Vec<Ask> = [(0, 5), (16, 22), (28, 33), (39, 45)].iter().map(|&(s, e)| ask(s, e)).collect();
        assert_eq!(stretch_bases(text, &asks, 100), [0, 0, 0, 0], "a short text is one stretch, as before");
        let bases = stretch_bases(text, &asks, 24);
        assert_eq!(bases, [0, 0, 23, 23]);
        for (a, &b) in asks.iter().zip(&bases) {
            assert!(b < a.start || a.start == 0, "{b} {}", a.start);
            assert!(a.end - b <= 24, "an ask ends beyond its stretch");
        }
    }

    #[test]
    fn a_right_context_is_corrected_by_the_fixes_inside_it() {
        let t = "I recieved teh letter. Then";
        let fixes = [(2, 10, "received"), (11, 14, "the"), (23, 27, "then")];
        assert_eq!(corrected(t, 10, 22, &fixes).as_deref(), Some(" the letter."));
        assert_eq!(corrected(t, 0, 2, &fixes), None, "no fix inside");
        // A doubled word's fix deletes the space before it and it.
        assert_eq!(corrected("the the best.", 3, 13, &[(3, 7, "")]).as_deref(), Some(" best."));
    }

    #[test]
    fn right_context_stops_at_the_sentence_end() {
        let t = "I saw then. Next one here";
        let s = words(t);
        assert_eq!(right_context(t, &s, 1), " then.");
    }

    #[test]
    fn a_word_alone_in_quotes_is_mentioned() {
        let at = |text: &str, word: &str| {
            let s = text.find(word).unwrap();
            quoted_alone(text, s, s + word.len())
        };
        assert!(at("it catches \"than\" for \"then\"", "than"));
        assert!(at("\u{201c}than\u{201d} is a word", "than"));
        assert!(at("the option 'verbose'.", "verbose"));
        assert!(!at("he said \"than we\" twice", "than"), "two words quoted");
        assert!(!at("the users'rights' here", "rights"), "an apostrophe is no opening quote");
        assert!(!at("x\"than\"y", "than"), "quotes inside a token");
    }

    #[test]
    fn sentence_starts() {
        let t = "Hi. Teh end\n\nFoo";
        assert!(sentence_start(t, 0));
        assert!(sentence_start(t, 4));
        assert!(!sentence_start(t, 8));
        assert!(sentence_start(t, 13));
        assert!(sentence_start("a list:\n- Their", 10));
        assert!(sentence_start("items\n- Their", 8));
        assert!(!sentence_start("wrapped\nTheir", 8));
    }

    #[test]
    fn isolated_suggestions_rank_by_prior_and_error_model() {
        let lex = Lexicon::from_counts([("the", 1000u64), ("tea", 10), ("ten", 20)].map(|(w, c)| (w.to_string(), c)));
        let s = Speller::new(lex);
        assert_eq!(s.suggest("teh", 3)[0].word, "the");
        assert_eq!(s.suggest("Teh", 3)[0].word, "The");
    }
}
