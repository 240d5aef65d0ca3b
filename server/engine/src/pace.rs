//! The writer's pace: how long the gaps between keystrokes are (within a sentence, and after a
//! key that ends one, where writers stop to think), and whether idle work of a known cost ends
//! before the next key is due. The inference thread runs one thing at a time: a keystroke that
//! arrives during idle work waits for it.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Most recent gaps of each kind the pace is taken from, and the fewest it needs.
const GAPS: usize = 16;
const FEWEST: usize = 4;
/// Idle work must end by this share of the expected gap (gaps vary around their median).
const SLACK: f64 = 0.8;
/// Gaps over this are pauses, not typing.
const PAUSE_MS: f64 = 2000.0;
/// The gap after a sentence's end before any has been seen: writers stop there to think.
const SENTENCE_PAUSE_MS: f64 = 400.0;

/// What idle work costs, per kind: a running mean of its forwards' times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// One step of the next letter's search: a forward of one row.
    Step,
    /// One word scored ahead of the spelling check: a forward of its alternatives with the words
    /// after them (a few rows of several tokens, two to four times a step).
    Check,
}

#[derive(Default)]
pub struct Pace {
    /// Recent gaps (ms) after keys inside a sentence, and after keys that end one.
    within: VecDeque<f64>,
    after_end: VecDeque<f64>,
    /// The last key: its document, when it came, whether it ended a sentence, and a hash of the
    /// text before the cursor (a client may ask for ghost text and completion items on one key).
    last: Option<(String, Instant, bool, u64)>,
    step_ms: Option<f64>,
    check_ms: Option<f64>,
}

/// Whether the key just typed ended a sentence or a line: the next gap is likely long (the space
/// after a period is not: the next word follows it at the usual pace).
fn ends_sentence(before: &str) -> bool {
    before.trim_end_matches(['"', '\'', ')', '’', '”']).ends_with(['.', '!', '?', '\n', ':'])
}

fn median(v: &VecDeque<f64>) -> Option<f64> {
    if v.len() < FEWEST {
        return None;
    }
    let mut g: Vec<f64> = v.iter().copied().collect();
    g.sort_by(f64::total_cmp);
    Some(g[g.len() / 2])
}

impl Pace {
    /// A keystroke in `doc`, with `before` the text before the cursor after it; a second request
    /// for the same text is the same keystroke.
    pub fn note_key(&mut self, doc: &str, before: &str, now: Instant) {
        let text = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            before.hash(&mut h);
            h.finish()
        };
        if self.last.as_ref().is_some_and(|(d, _, _, t)| d == doc && *t == text) {
            return;
        }
        if let Some((d, t, end, _)) = &self.last {
            let gap = now.duration_since(*t).as_secs_f64() * 1e3;
            if d == doc && gap < PAUSE_MS {
                let gaps = if *end { &mut self.after_end } else { &mut self.within };
                gaps.push_back(gap);
                if gaps.len() > GAPS {
                    gaps.pop_front();
                }
            }
        }
        self.last = Some((doc.to_string(), now, ends_sentence(before), text));
    }

    /// The usual gap after the last key (ms): the median of recent gaps of its kind. After the
    /// end of a sentence with too few such gaps seen yet, [`SENTENCE_PAUSE_MS`] or the gap
    /// within a sentence if that is longer.
    fn expected_gap(&self) -> Option<f64> {
        let (_, _, end, _) = self.last.as_ref()?;
        let within = median(&self.within)?;
        Some(if *end { median(&self.after_end).unwrap_or(within.max(SENTENCE_PAUSE_MS)) } else { within })
    }

    /// Whether work of kind `w`, started now, should end well before the next key is due.
    pub fn fits(&self, w: Work) -> bool {
        self.fits_after(w) == Some(Duration::ZERO)
    }

    /// How long from now until work of kind `w` fits before the next key: zero when it fits
    /// now, None when only another key can change that. Nothing runs before the pace is known;
    /// work whose cost is not known yet runs once, to learn it; work that does not fit waits
    /// until the gap has run twice its usual length (the writer has paused).
    pub fn fits_after(&self, w: Work) -> Option<Duration> {
        let (Some((_, at, _, _)), Some(gap)) = (&self.last, self.expected_gap()) else { return None };
        let since = at.elapsed().as_secs_f64() * 1e3;
        let cost = match w {
            Work::Step => self.step_ms,
            Work::Check => self.check_ms,
        };
        match cost {
            Some(c) if since + c > SLACK * gap => Some(Duration::from_secs_f64((2.0 * gap - since).max(0.0) / 1e3)),
            _ => Some(Duration::ZERO),
        }
    }

    /// Whether the last key ended a sentence or a line.
    pub fn after_sentence_end(&self) -> bool {
        self.last.as_ref().is_some_and(|l| l.2)
    }

    /// How long one forward of work `w` just took.
    pub fn note_cost(&mut self, w: Work, ms: f64) {
        let c = match w {
            Work::Step => &mut self.step_ms,
            Work::Check => &mut self.check_ms,
        };
        *c = Some(c.map_or(ms, |s| 0.7 * s + 0.3 * ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys `gap_ms` apart (the clock moved back, not slept), the last one now.
    fn typed(p: &mut Pace, keys: &[(&str, f64)]) {
        let now = Instant::now();
        let mut at = keys.iter().map(|k| k.1).sum::<f64>();
        for (before, gap) in keys {
            at -= gap;
            p.note_key("doc", before, now - Duration::from_secs_f64(at / 1e3));
        }
    }

    #[test]
    fn work_fits_the_gap_its_key_is_followed_by() {
        let mut p = Pace::default();
        assert!(!p.fits(Work::Step), "no pace known yet");
        let mut keys = vec![];
        for _ in 0..6 {
            keys.extend([("It rains", 100.0), ("It rains.", 100.0), ("It rains. ", 600.0)]);
        }
        keys.push(("It rains", 100.0));
        typed(&mut p, &keys);
        assert!(p.fits(Work::Check), "a cost not known yet runs once");
        p.note_cost(Work::Step, 30.0);
        p.note_cost(Work::Check, 90.0);
        // Inside a sentence the next key comes in about 100 ms: a step fits, a check does not.
        assert!(p.fits(Work::Step));
        assert!(!p.fits(Work::Check));
        // After a sentence's end the writer stops to think: both fit.
        p.note_key("doc", "It rains.", Instant::now());
        assert!(p.fits(Work::Step) && p.fits(Work::Check));
    }

    #[test]
    fn a_late_key_means_a_pause() {
        let mut p = Pace::default();
        let keys: Vec<(&str, f64)> = ["I", "It", "It ", "It r", "It ra", "It rai", "It rain", "It rains"].iter().map(|t| (*t, 100.0)).collect();
        typed(&mut p, &keys);
        p.note_cost(Work::Check, 90.0);
        assert!(!p.fits(Work::Check));
        let wait = p.fits_after(Work::Check).unwrap();
        assert!(wait > Duration::from_millis(150) && wait <= Duration::from_millis(200), "{wait:?}");
        p.last.as_mut().unwrap().1 -= Duration::from_millis(250);
        assert!(p.fits(Work::Check));
        // No sentence has ended yet: the pause after one is guessed, not taken for a typing gap.
        p.note_key("doc", "It rains.", Instant::now());
        assert!(p.fits(Work::Check));
    }

    #[test]
    fn ghost_text_and_completion_items_for_one_key_are_one_gap() {
        let mut p = Pace::default();
        let keys: Vec<(&str, f64)> = ["I", "It", "It ", "It r", "It ra", "It rai"].iter().map(|t| (*t, 100.0)).collect();
        typed(&mut p, &keys);
        let at = p.last.as_ref().unwrap().1;
        p.note_key("doc", "It rai", Instant::now());
        assert_eq!(p.last.as_ref().unwrap().1, at);
        assert_eq!(p.expected_gap(), Some(100.0));
    }

    #[test]
    fn sentence_ends() {
        for t in ["It rains.", "Why?\"", "(It rains.)", "Done!\n", "A list:"] {
            assert!(ends_sentence(t), "{t:?}");
        }
        for t in ["It rains", "It rains,", "It rains. ", "e.g", "It "] {
            assert!(!ends_sentence(t), "{t:?}");
        }
    }
}
