//! The spelling check over the real default model and lexicon: words scored ahead, as a writer
//! types, are the words a check of the paragraph then asks about, with the same answers.

use std::sync::Mutex;

use laya_decide::{Lexicon, Speller};
use laya_model::{KvCache, Model};

mod common;
use common::{default_lexicon_path, default_model_path};

static MLX: Mutex<()> = Mutex::new(());

fn speller() -> Speller {
    let path = default_lexicon_path();
    Speller::new(Lexicon::load(&path).unwrap_or_else(|e| panic!("the lexicon at {} loads: {e}; run `make model`", path.display())))
}

#[test]
fn words_scored_while_typing_leave_the_check_nothing_to_compute_and_the_same_issues() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let path = default_model_path();
    assert!(path.exists(), "the default model is missing at {}: run `make model`", path.display());
    let model = Model::load(&path).expect("the default model loads");
    let window = "We moved last spring.\n\n";
    let para = "My house is bigger then yours, and I want to go their tomorrow.";
    let text = format!("{window}{para}");
    let (ahead, fresh) = (speller(), speller());
    let no_skip = |_: &str| false;
    let never = || false;

    // Typed key by key: after each, the document's cache holds the text so far and the words
    // whose right context is finished are scored on a fork of it.
    let mut doc = KvCache::new();
    let mut scored = 0;
    let mut scored_at_then = None;
    for end in (window.len() + 1..=text.len()).filter(|&i| text.is_char_boundary(i)) {
        let typed = &text[..end];
        let ids = model.tokenizer.encode_document(typed).unwrap();
        model.prefill(&mut doc, &ids).unwrap();
        let mut fork = doc.fork();
        scored += ahead.check_ahead(&model, &mut fork, typed, window.len(), &never).unwrap();
        if typed.ends_with("bigger then yours") {
            // "then" is followed by words still being typed: nothing about it is scored yet.
            scored_at_then = Some(scored);
        }
    }
    assert_eq!(scored_at_then, Some(0), "a word was scored before the text after it was settled");
    assert!(scored >= 2, "\"then\" and \"their\" were not scored ahead ({scored})");

    // The check after the pause: the same issues as a check that nothing was scored for, and
    // no forward of its own.
    let f0 = model.forward_count().0;
    let mut fork = doc.fork();
    let issues = ahead.check(Some(&model), &mut fork, &text, window.len(), &no_skip, &never).unwrap();
    assert_eq!(model.forward_count().0, f0, "the check ran a forward after everything was scored ahead");
    let expected = fresh.check(Some(&model), &mut KvCache::new(), &text, window.len(), &no_skip, &never).unwrap();
    assert_eq!(issues.len(), expected.len(), "{issues:?} against {expected:?}");
    for (a, b) in issues.iter().zip(&expected) {
        assert_eq!((a.start, a.end, &a.word, a.kind), (b.start, b.end, &b.word, b.kind));
        let words = |i: &laya_decide::Issue| i.suggestions.iter().map(|c| c.word.clone()).collect::<Vec<_>>();
        assert_eq!(words(a), words(b));
        for (x, y) in a.suggestions.iter().zip(&b.suggestions) {
            assert!((x.score - y.score).abs() < 1e-2, "{x:?} against {y:?}");
        }
    }
    let words: Vec<&str> = issues.iter().map(|i| i.word.as_str()).collect();
    assert_eq!(words, ["then", "their"], "{issues:?}");

    // A check ahead that is told to stop leaves what it has not scored to the check.
    let other = speller();
    let mut fork = doc.fork();
    let stop = || true;
    assert!(matches!(other.check_ahead(&model, &mut fork, &text, window.len(), &stop), Err(laya_decide::DecideError::Interrupted)));
    assert!(other.check_ahead(&model, &mut KvCache::new(), "né", 2, &never).is_err(), "a context length inside a character is refused");
}

/// Words alone are ranked by the lexicon's prior and the learned error model: a doubled letter
/// written once or a dropped letter is a likelier slip than a different word's worth of change.
#[test]
fn words_alone_rank_the_likelier_slip_first() {
    let s = speller();
    for (typed, meant) in [("analogicaly", "analogically"), ("annoint", "anoint"), ("recieve", "receive"), ("seperate", "separate")] {
        let got = s.suggest(typed, 5);
        assert_eq!(got.first().map(|c| c.word.as_str()), Some(meant), "{typed}: {got:?}");
    }
}

/// A word spelled by ear, too many letters away for the edit search, is found by its sound, or
/// by a sound one away ("enuf": ANF, "enough": AN).
#[test]
fn words_spelled_by_ear_find_the_word_meant() {
    let s = speller();
    for (typed, meant) in
        [("burocratic", "bureaucratic"), ("apocraful", "apocryphal"), ("nolij", "knowledge"), ("fisical", "physical"), ("enuf", "enough")]
    {
        let got = s.suggest(typed, 5);
        assert!(got.iter().any(|c| c.word == meant), "{typed}: {got:?}");
    }
}

/// The issues `speller` finds in `text` with the default model: (word, first suggestion).
fn flags(model: &Model, text: &str) -> Vec<(String, String)> {
    let issues = speller().check(Some(model), &mut KvCache::new(), text, 0, &|_: &str| false, &|| false).unwrap();
    issues.into_iter().map(|i| (i.word, i.suggestions.first().map_or(String::new(), |c| c.word.clone()))).collect()
}

/// Asserts that each text of `cases` is flagged once, at its typo, with `meant` first.
fn assert_flagged_once(model: &Model, cases: &[(&str, &str, &str)]) {
    for &(text, typo, meant) in cases {
        assert_eq!(flags(model, text), [(typo.to_string(), meant.to_string())], "{text}");
    }
}

/// The real-word slips `speller` finds in `text`: (word, first suggestion).
fn real_word_flags(model: &Model, speller: &Speller, text: &str) -> Vec<(String, String)> {
    let issues = speller.check(Some(model), &mut KvCache::new(), text, 0, &|_: &str| false, &|| false).unwrap();
    issues
        .into_iter()
        .filter(|i| i.kind == laya_decide::IssueKind::RealWord)
        .map(|i| (i.word, i.suggestions.first().map_or(String::new(), |c| c.word.clone())))
        .collect()
}

fn model() -> Model {
    let path = default_model_path();
    assert!(path.exists(), "the default model is missing at {}: run `make model`", path.display());
    Model::load(&path).expect("the default model loads")
}

/// A word missing from the lexicon one likely slip from a word (the learned error model) is
/// flagged even where the model finds it predictable in context; a word no likely slip explains
/// is a name or a term, however unpredictable (issue 25).
#[test]
fn a_likely_slip_is_flagged_in_context_and_a_coined_name_is_not() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    assert_flagged_once(
        &model,
        &[
            ("This is an important point. Vectors are homogenous: they may store many values,", "homogenous", "homogeneous"),
            ("authenication.  See SourceForge bug 1234 for details.", "authenication", "authentication"),
            ("iterator cleanup is often a desireable feature", "desireable", "desirable"),
        ],
    );
    for text in [
        "The ref ban applies to noclobber mode as well.",
        "This release reduces the overhead of callsite registration by using new tracing-core APIs.",
    ] {
        assert_eq!(flags(&model, text), [], "{text}");
    }
}

/// Two words typed as one, one of them a function word, are flagged with the two words first;
/// two content words run together are left alone, as a compound the writer may mean.
#[test]
fn two_words_typed_as_one_are_split() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    assert_flagged_once(
        &model,
        &[
            ("They help eachother when they can.", "eachother", "each other"),
            ("You need atleast two cores to build it.", "atleast", "at least"),
            ("Alot of people use it every day.", "Alot", "A lot"),
        ],
    );
    assert_eq!(flags(&model, "The datastructure keeps its keys sorted."), [], "two content words");
}

/// A flagged misspelling's first suggestion is the word a writer's slip most likely came from,
/// where the sentence alone would prefer another near word ("clause" for "clousre", "receive" for
/// "recived", "bugger" for "bufer": the noisy channel, `SpellerOptions::context_channel_weight`).
#[test]
fn a_misspellings_first_suggestion_is_the_word_the_slip_came_from() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    assert_flagged_once(
        &model,
        &[
            ("What kind of clousre do we pass to the iterator here?", "clousre", "closure"),
            ("We recived the data from the sensor an hour ago.", "recived", "received"),
            ("The bufer grows as needed.", "bufer", "buffer"),
        ],
    );
}

/// One word typed as two ("in to", "some one") is flagged with the one word; the same two words
/// where they are meant apart ("log in to", "every one of") are left alone.
#[test]
fn one_word_typed_as_two_is_joined() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    assert_flagged_once(
        &model,
        &[
            ("She walked in to the room and sat down.", "in to", "into"),
            ("Some one left the door open again.", "Some one", "Someone"),
            ("The variable is defined out side the loop.", "out side", "outside"),
            // "a" is part of "across": it asks for no singular "thread".
            ("The data is shared a cross threads.", "a cross", "across"),
        ],
    );
    for text in ["Log in to your account with the new password.", "Every one of these tests passes now.", "There is a way to do it."] {
        assert_eq!(flags(&model, text), [], "{text}");
    }
}

/// A word Markdown emphasis cuts in pieces ("**s**ubstitution") is judged whole, and the last
/// word of a text cut off mid-sentence is not taken for another word of its set: nothing after
/// it says which was meant.
#[test]
fn pieces_of_a_word_and_a_sentence_cut_short_raise_no_false_alarm() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    let got = flags(&model, "**s**ubstitution of the pattren `foo` for `bar`, and that you are doing this");
    assert_eq!(got, [("pattren".to_string(), "pattern".to_string())]);
    let got = flags(&model, "because they are preceded by a return statement, a call to panic, an");
    assert_eq!(got, [], "the last word has nothing after it");
    let got = flags(&model, "Look at the clouds. I think its going to rain.");
    assert_eq!(got, [("its".to_string(), "it's".to_string())], "a finished sentence is still checked");
}

/// Real words that are slips: the other number where a determiner asks for it ("a previous
/// variables", "after that lines", "some nice feature"), the noun or the verb of a subject that
/// do not agree ("the tests passes", "each thread have"), and a common word one slip from the
/// one meant ("there many be"). Meant uses of the same words, a determiner's noun read as a
/// modifier ("each command ensures"), a noun before a noun ("the function call returns"), a
/// verb that agrees with a noun further back ("a list of the files contains") and "some"
/// before a mass noun or one thing unnamed are left alone.
#[test]
fn real_word_slips_beyond_the_confusion_sets_are_found() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    let s = speller();
    let flagged = |text: &str| real_word_flags(&model, &s, text);
    let pair = |a: &str, b: &str| vec![(a.to_string(), b.to_string())];
    assert_eq!(flagged("This is the same name as a previous variables, and the new one wins."), pair("variables", "variable"));
    assert_eq!(flagged("It is a domain that multiple part of the program might need to share."), pair("part", "parts"));
    assert_eq!(flagged("This API is suggested, though in some cases there many be open questions."), pair("many", "may"));
    assert_eq!(flagged("This is because it wold be impossible to implement the trait."), pair("wold", "would"));
    assert_eq!(flagged("The parser reads the header first. After that lines, it reads the body."), pair("lines", "line"));
    assert_eq!(flagged("If the tests passes, the build is published."), pair("tests", "test"));
    assert_eq!(flagged("It has some nice feature that the old one lacked."), pair("feature", "features"));
    assert_eq!(flagged("Each thread have its own stack and its own name."), pair("have", "has"));
    assert_eq!(flagged("If the server crash, we restart it."), pair("crash", "crashes"));
    assert_eq!(flagged("This method return the first value."), pair("return", "returns"));
    // Where the sentence's shape leaves no other reading, less evidence will do.
    assert_eq!(flagged("These option are read once at startup."), pair("option", "options"));
    assert_eq!(flagged("The server send a notification when it is done."), pair("send", "sends"));
    for clean in [
        "These option flags are read once at startup.",
        "The server set the flag when it started.",
        "It will surely make some change in my size.",
        "A list of the files contains every name we saw.",
        "It takes some time and some care to learn.",
        "Some user reported that the button is broken.",
        "When the users log in, the server checks it.",
        "Each command ensures that the work done is the same.",
        "I read the lines that lines up with the others.",
        "We print the total. After that lines are read one at a time.",
        "Each of these functions takes a value, and many of them return one.",
        "She has a few friends and two cats, and they may be home soon.",
        "The error message says what went wrong.",
        "The function call returns early when the list is empty.",
        "The data show that the cache helps.",
    ] {
        assert_eq!(flagged(clean), vec![], "{clean}");
    }
}

/// A verb in the form the word before it does not take ("can sees", "it contain", "is call",
/// "as show in") is flagged with the form it asks for; the same words where the form is right,
/// and a pronoun that is a verb's object ("make it work", "let it run"), are left alone.
#[test]
fn verb_forms_the_words_before_them_ask_for_are_found() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    let s = speller();
    let flagged = |text: &str| real_word_flags(&model, &s, text);
    let pair = |a: &str, b: &str| vec![(a.to_string(), b.to_string())];
    assert_eq!(flagged("As you can sees, the finally clause runs last."), pair("sees", "see"));
    assert_eq!(flagged("In general it contain a stack traceback listing the calls."), pair("contain", "contains"));
    assert_eq!(flagged("The function is call when the list is empty."), pair("call", "called"));
    assert_eq!(flagged("Try replacing join! with join_all as show in Listing 17-15."), pair("show", "shown"));
    for clean in [
        "We can make it work with a few changes.",
        "Does it return a value when the list is empty?",
        "Let it run for a while, then see if they return.",
        "The parser is open to extension and it has access to the tree.",
        "It is used by many people and has been tested well.",
    ] {
        assert_eq!(flagged(clean), vec![], "{clean}");
    }
}

/// A pronoun that opens its clause, "there" before a plural and a modal before "of" ask for the
/// form they take, on less evidence where the shape is plain ("We has", "There is several",
/// "should of known"); "Each of the tests" asks for the verb's -s form. The same shapes where
/// the form is right, a pronoun that is an object, a wish ("If I were") and "of" before a noun
/// are left alone. These slips stand at a text's start, after the paragraph break the model
/// reads there (without it, "They was not sure" read better to it than "They were").
#[test]
fn pronoun_there_and_modal_slips_are_found() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    let s = speller();
    let flagged = |text: &str| real_word_flags(&model, &s, text);
    let pair = |a: &str, b: &str| vec![(a.to_string(), b.to_string())];
    assert_eq!(flagged("We has a test for every parser in the crate."), pair("has", "have"));
    assert_eq!(flagged("They was not sure which version of the compiler to pin."), pair("was", "were"));
    assert_eq!(flagged("It make sense to cache the tokenizer between runs."), pair("make", "makes"));
    assert_eq!(flagged("There is several ways to configure the server."), pair("is", "are"));
    assert_eq!(flagged("You should of checked the return value first."), pair("of", "have"));
    assert_eq!(flagged("I is not sure this flag does anything on Windows."), pair("is", "am"));
    assert_eq!(flagged("One of these files contain the old settings."), pair("contain", "contains"));
    for clean in [
        "There is some code that handles this case.",
        "There is both a cost and a benefit to caching.",
        "The tests make it work on every platform.",
        "If I were you, I would pin the version.",
        "The might of the old design was its simplicity.",
        "It no longer needs the second pass.",
        "One of the things people want is a fast start.",
    ] {
        assert_eq!(flagged(clean), vec![], "{clean}");
    }
}

/// A word of a confusion set that is more than one token ("it's": " it" and "'s") is scored
/// against its set even where its first token leads by far (" it" covers "it is", "it was"),
/// and even where a member of its set is also one slip away; a possessive before "own" is left
/// alone, though the small model likes "it's own" in some sentences.
#[test]
fn contractions_are_scored_against_their_set_and_a_possessive_before_own_stands() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    let got = flags(&model, "As we said above, it's job is to turn things into iterators.");
    assert_eq!(got, [("it's".to_string(), "its".to_string())]);
    // The slip after it ("it's address") made the model read "it's own" as likelier here.
    let text = "If company chooses to use its own server, it's address can be used as well.";
    assert!(flags(&model, text).iter().all(|(w, _)| w != "its"), "{text}");
    assert_eq!(flags(&model, "They keep their own copy of it."), []);
}

/// A piece of an identifier in inline code that is one likely slip from a common word is
/// flagged ("`Rectagle`", "`_Initialze`"); the names code is full of are not, nor letters next to
/// a digit ("`aarch64`"). A word a term list spells in lowercase is suggested in lowercase
/// ("struct", not "STRUCT").
#[test]
fn slips_in_inline_code_are_found_and_names_are_left_alone() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    let got = flags(&model, "We add the other `Rectagle`, respectively, and rename `_Initialze` to `XInitialize` so it works.");
    assert_eq!(got, [("Rectagle".to_string(), "Rectangle".to_string()), ("Initialze".to_string(), "Initialize".to_string())]);
    let clean = "Call `tokio::spawn` with `serde_json::Value`, build for `aarch64` and set `RUST_LOG=debug` in `Cargo.toml`.";
    assert_eq!(flags(&model, clean), []);
    let got = flags(&model, "It takes two arguments, with an options truct for additional request fields.");
    assert_eq!(got, [("truct".to_string(), "struct".to_string())]);
}

/// The regular plural of a word the lexicon knows is no slip, though the lexicon lacks it
/// ("intrinsics", "deques", "usizes"); a plural that breaks the rule still is ("valuess",
/// "fetchs").
#[test]
fn regular_plurals_of_known_words_are_known() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    assert_eq!(flags(&model, "The intrinsics and the deques are fast, and so are the usizes."), []);
    assert_eq!(flags(&model, "Finite automata are flipped through like lexica and memoranda."), []);
    // Capitalized too, and a plural is no neighbour of its singular.
    assert_eq!(flags(&model, "It assumed too much of Hashers, and fixed incorrect memory orderings on RwLock."), []);
    let got = flags(&model, "The valuess are kept, and the fetchs are retried later.");
    assert_eq!(got, [("valuess".to_string(), "values".to_string()), ("fetchs".to_string(), "fetches".to_string())]);
}

/// Identifiers written without backticks are code too: a snake_case name or a path is read as
/// inline code is, piece by piece ("fill_uninit" is no slip of "unit", "from_bits_unchecked" no
/// "form"), while a likely slip in one is still found.
#[test]
fn bare_identifiers_are_read_as_code() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    let clean = "Then you may provide implementations for fill_uninit, u32, and/or u64 with a macro. \
                 The unsafe from_bits_unchecked method is now safe, under the kv_unstable feature gate.";
    assert_eq!(flags(&model, clean), []);
    let got = flags(&model, "Call the make_rectagle function on it.");
    assert_eq!(got, [("rectagle".to_string(), "rectangle".to_string())]);
}

/// A capitalized word next to a part of a name is a name unless it is one likely slip from a
/// common word: the model cannot tell a surname from a misspelling.
#[test]
fn names_next_to_names_are_left_alone() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    let clean = "For example, Jean Baronas reviewed the standards with the Demonstration Lab, Prosser Gifford, \
                 and Theodore Brunner with George Thoma.";
    assert_eq!(flags(&model, clean), []);
    let got = flags(&model, "The Python Sofware Foundation holds the trademark.");
    assert_eq!(got, [("Sofware".to_string(), "Software".to_string())]);
}

/// "an" before a word that starts with a vowel is an article that fits, never read as "and";
/// before other words the slip is still found.
#[test]
fn an_before_a_vowel_is_an_article() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    let clean = "Fixed an overflow panic on high-contention workloads, and added an insert_sorted method, \
                 with an Arg trait for any type.";
    assert_eq!(flags(&model, clean), []);
    let got = flags(&model, "This makes sure they are always cleaned up promptly an correctly after the statement.");
    assert_eq!(got, [("an".to_string(), "and".to_string())]);
}

/// A word joined to another by a hyphen is most often a name of its own making ("aho-corasick",
/// "hardware-rng"): read as a piece of code is, a slip only where a common word is one likely
/// slip away ("non-determinstic").
#[test]
fn hyphenated_names_are_left_alone_and_slips_in_compounds_found() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    let clean = "Enabling the hardware-rng optional dependency lets env-logger find miri-reported bugs with aho-corasick, \
                 as in C++ and Modula-3.";
    assert_eq!(flags(&model, clean), []);
    let got = flags(&model, "We made the scheduler non-determinstic and checked its thread-saftey again.");
    assert_eq!(got, [("determinstic".to_string(), "deterministic".to_string()), ("saftey".to_string(), "safety".to_string())]);
}

/// A known word capitalized inside a sentence is a name (a type, a trait, a title's word) and
/// is not weighed against its confusion set; at a sentence's or a list item's start it is.
#[test]
fn capitalized_words_inside_a_sentence_are_names() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = model();
    assert_eq!(flags(&model, "Implemented Weight trait from rand crate for f16 and bf16 with rand optional."), []);
    let got = flags(&model, "The changes are these:\n- Their are now two ways to build the tree.");
    assert_eq!(got, [("Their".to_string(), "There".to_string())]);
}
