//! Pinyin conversion over the real default model and a small dictionary: every candidate is a
//! whole conversion of the input, read by the dictionary's own readings, best first.

use std::collections::HashMap;

use laya_decide::{convert, PinyinDict};
use laya_model::{KvCache, Model};

mod common;
use common::default_model_path;

const DICT: &str = "jin\t今\t50\njin\t金\t40\ntian\t天\t90\ntian\t田\t10\njin tian\t今天\t80\nqi\t气\t30\nqi\t其\t40\n\
tian qi\t天气\t60\nxi an\t西安\t20\nxian\t先\t30\nxian\t现\t25\nxi\t西\t20\nan\t安\t20\n";

#[test]
fn conversions_are_whole_readings_of_the_input_best_first() {
    let path = default_model_path();
    assert!(path.exists(), "the default model is missing at {}: run `make model`", path.display());
    let model = Model::load(&path).expect("the default model loads");
    let dict = PinyinDict::parse(DICT).unwrap();
    // Each character's readings, to check a candidate against the input.
    let mut readings: HashMap<char, Vec<String>> = HashMap::new();
    for line in DICT.lines() {
        let mut f = line.split('\t');
        let (r, w) = (f.next().unwrap(), f.next().unwrap());
        for (c, s) in w.chars().zip(r.split(' ')) {
            readings.entry(c).or_default().push(s.to_string());
        }
    }
    let mut cache = KvCache::new();
    for (input, syllables) in [("jin tian tian qi", "jin tian tian qi"), ("JinTiantianqi", "jin tian tian qi"), ("xian", "")] {
        let got = convert(&model, &mut cache, &dict, input, "", 4).unwrap();
        assert!(!got.is_empty() && got.len() <= 4, "{input}: {got:?}");
        assert!(got.windows(2).all(|w| w[0].score >= w[1].score), "best first: {got:?}");
        for c in &got {
            assert!(c.logprob < 0.0 && c.logprob.is_finite(), "{c:?}");
            assert_eq!(c.text.chars().count(), c.reading.split(' ').count(), "{c:?}");
            for (ch, syl) in c.text.chars().zip(c.reading.split(' ')) {
                assert!(readings[&ch].iter().any(|r| r == syl), "{ch} is not read {syl}: {c:?}");
            }
            if !syllables.is_empty() {
                assert_eq!(c.reading, syllables, "{c:?}");
            }
        }
        let texts: Vec<&str> = got.iter().map(|c| c.text.as_str()).collect();
        let unique: std::collections::HashSet<_> = texts.iter().collect();
        assert_eq!(unique.len(), texts.len(), "no text twice: {texts:?}");
    }
    // Both cuts of "xian" are offered.
    let xian: Vec<String> = convert(&model, &mut cache, &dict, "xian", "", 5).unwrap().into_iter().map(|c| c.text).collect();
    assert!(xian.contains(&"西安".to_string()) && xian.contains(&"先".to_string()), "{xian:?}");
    // Bad input is an error, not a panic.
    let e = convert(&model, &mut cache, &dict, "jin1 tian", "", 3).unwrap_err().to_string();
    assert!(e.contains("not pinyin"), "{e}");
    let e = convert(&model, &mut cache, &dict, "zhong", "", 3).unwrap_err().to_string();
    assert!(e.contains("no words"), "{e}");
}
