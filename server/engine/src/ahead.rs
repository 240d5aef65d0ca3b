//! Work for idle time between keystrokes: the ghost text for a space after a known word
//! ([`Worker::speculate`]), the first steps of the likeliest next letters or marks
//! ([`Worker::letter_ahead`]), and the settled words of the paragraph being typed
//! ([`Worker::check_ahead`]). Each only fills caches the next job reads (see the rule on
//! [`Worker`]'s `ahead` field).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Instant;

use laya_decide::{Ghost, GhostOptions};

use crate::pace::Work;
use crate::worker::{model_of_doc, Worker};

/// Most letters of the next keystroke whose first step is worked out while idle.
pub(crate) const LETTERS_AHEAD: usize = 3;

/// Whether `g` completes the word at the cursor. It is then at least its bar likely (0.55 by
/// default for a six-letter word, 0.38 at the least for a long one), so the word likely goes on
/// rather than ends: the idle time goes to its next letters, not to the ghost text after a space
/// ([`Speculation`]).
pub(crate) fn completes_word(g: &Ghost) -> bool {
    g.replace == 0 && g.insert.starts_with(laya_text::is_word_char)
}

/// The steps the next keystroke needs if it is one more letter of the word at the cursor, or a
/// mark that ends it (",", ".").
pub(crate) struct Letters {
    pub(crate) doc: String,
    pub(crate) version: i32,
    pub(crate) before: String,
    pub(crate) after: String,
    pub(crate) opts: GhostOptions,
    /// The letter the shown suggestion goes on with (typing it needs no model).
    pub(crate) skip: Option<char>,
    /// Planned, once the document's cache holds the context ([`laya_decide::letters_ahead`]).
    pub(crate) plan: Option<VecDeque<laya_decide::LetterStep>>,
}

/// The paragraph being typed (`text[from..]`, after the window's earlier text), whose settled
/// words a spelling check will ask about.
pub(crate) struct CheckAhead {
    pub(crate) doc: String,
    pub(crate) version: i32,
    pub(crate) text: String,
    pub(crate) from: usize,
}

/// The ghost text a document will likely ask for next: the same text and a space, after a word
/// the lexicon knows (the word may be finished).
pub(crate) struct Speculation {
    pub(crate) doc: String,
    pub(crate) version: i32,
    pub(crate) before: String,
    pub(crate) after: String,
    pub(crate) opts: GhostOptions,
}

impl Worker {
    /// Runs a [`Speculation`] and keeps only what it leaves in the document's cache: the kept
    /// steps make the real keystroke's ghost text a lookup ([`laya_model::KvCache::lookahead`]),
    /// the same suggestion without the forward. It runs only when no job waits, and not for a
    /// document that changed meanwhile; a job that arrives during it waits for its end (one
    /// forward or two).
    pub(crate) fn speculate(&mut self, s: Speculation) {
        if self.versions.get(&s.doc).is_none_or(|v| *v != s.version) || !self.caches.contains_key(&s.doc) {
            return;
        }
        let Some(f0) = model_of_doc(&self.loaded, &self.multilingual, &self.doc_models, &s.doc).map(|l| l.model.forward_count().0) else { return };
        let mut cache = self.doc_cache(&s.doc);
        let loaded = model_of_doc(&self.loaded, &self.multilingual, &self.doc_models, &s.doc).expect("checked above");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // Without the writer's words: only the model's steps it leaves in the cache count.
            laya_decide::ghost(&loaded.model, &loaded.vocab, self.speller.as_ref(), None, &mut cache, &s.before, &s.after, &s.opts)
        }));
        self.stats.speculations += 1;
        self.stats.speculative_forwards += loaded.model.forward_count().0 - f0;
        match r {
            Ok(_) => self.put_cache(s.doc, cache),
            Err(_) => tracing::error!("speculative ghost text panicked; the document's cache was dropped"),
        }
    }

    /// Runs one step of the next letter's search, or of a mark after the word
    /// ([`laya_decide::step_ahead`]), likeliest key first, and leaves the rest for the next idle
    /// moment. It runs only when no job waits, for the same document version, and only when the
    /// step should end well before the writer's next key is due (a job that arrives during it
    /// waits for it).
    pub(crate) fn letter_ahead(&mut self, mut l: Letters) {
        if self.versions.get(&l.doc).is_none_or(|v| *v != l.version) || !self.caches.contains_key(&l.doc) {
            return;
        }
        if !self.pace.fits(Work::Step) {
            self.stats.letter_steps_skipped += l.plan.as_ref().map_or(1, |p| p.len()) as u64;
            return;
        }
        let Some(loaded) = model_of_doc(&self.loaded, &self.multilingual, &self.doc_models, &l.doc) else { return };
        let Some(cache) = self.caches.get_mut(&l.doc).map(|d| &mut d.cache) else { return };
        if l.plan.is_none() {
            let plan = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                laya_decide::letters_ahead(&loaded.model, &loaded.vocab, cache, &l.before, &l.after, &l.opts, LETTERS_AHEAD, l.skip)
            }));
            match plan {
                Ok(Ok(p)) => l.plan = Some(p.into()),
                Ok(Err(e)) => return tracing::warn!("planning the next letter's steps failed: {e}"),
                Err(_) => return tracing::error!("planning the next letter's steps panicked"),
            }
        }
        let Some(step) = l.plan.as_mut().and_then(VecDeque::pop_front) else { return };
        let t = Instant::now();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| laya_decide::step_ahead(&loaded.model, cache, &step)));
        match r {
            Ok(Ok(true)) => {
                self.pace.note_cost(Work::Step, t.elapsed().as_secs_f64() * 1e3);
                self.stats.letter_steps += 1;
            }
            Ok(Ok(false)) => {}
            Ok(Err(e)) => return tracing::warn!("a step ahead for the next letter failed: {e}"),
            Err(_) => {
                self.caches.remove(&l.doc);
                return tracing::error!("a step ahead for the next letter panicked; the document's cache was dropped");
            }
        }
        if l.plan.as_ref().is_some_and(|p| !p.is_empty()) {
            self.letters = Some(l);
        }
    }

    /// Scores the settled words of the paragraph being typed ([`Speller::check_ahead`]) on a
    /// fork of the document's cache, so that the spelling check after the writer's pause finds
    /// them scored. It runs only when no job waits, not for a document that changed meanwhile,
    /// and only while a word's forward (a few rows of several tokens, longer than a letter's
    /// step) fits before the next key: mostly where the writer stops at the end of a sentence.
    /// A job that arrives, or the time running out, stops it after the word it is scoring; what
    /// is left waits for the next moment it fits.
    pub(crate) fn check_ahead(&mut self, c: CheckAhead) {
        if self.versions.get(&c.doc).is_none_or(|v| *v != c.version) {
            return;
        }
        // The check's words are English: scored ahead only on a cache of the default model.
        if self.doc_models.get(&c.doc).is_some_and(|&m| m != laya_model::ModelChoice::Default) {
            return;
        }
        let (Some(loaded), Some(speller), Some(d)) = (self.loaded.as_ref(), self.speller.as_ref(), self.caches.get(&c.doc)) else { return };
        let mut fork = d.cache.fork();
        let f0 = loaded.model.forward_count().0;
        let t = Instant::now();
        let (urgent, pace) = (&self.urgent, &self.pace);
        let interrupt = || urgent.load(Ordering::Acquire) > 0 || !pace.fits(Work::Check);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| speller.check_ahead(&loaded.model, &mut fork, &c.text, c.from, &interrupt)));
        let forwards = loaded.model.forward_count().0 - f0;
        self.stats.check_ahead_forwards += forwards;
        if forwards > 0 {
            self.pace.note_cost(Work::Check, t.elapsed().as_secs_f64() * 1e3 / forwards as f64);
        }
        match r {
            Ok(Ok(n)) => self.stats.checked_ahead += n as u64,
            Ok(Err(laya_decide::DecideError::Interrupted)) => self.check_ahead = Some(c),
            Ok(Err(e)) => tracing::warn!("scoring words ahead of the spelling check failed: {e}"),
            Err(_) => tracing::error!("scoring words ahead of the spelling check panicked"),
        }
    }
}
