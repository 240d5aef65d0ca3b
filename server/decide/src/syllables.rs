//! Toneless pinyin as typed, cut into syllables: case-insensitive, with or without spaces,
//! apostrophes as separators ("xi'an"), ü typed as v or ü ("lv", "lüe"; "lue" and "nue" read as
//! lve and nve): every way to cut it ("xian" = xian | xi an), and clear errors for what is not
//! pinyin.

use crate::{DecideError, Result};

/// The syllables of Mandarin as toneless pinyin (ü as v), from pypinyin's readings of the
/// GB2312 characters (interjections m, n, ng, hm, hng included).
const SYLLABLES: &[&str] = &[
    "a", "ai", "an", "ang", "ao", "ba", "bai", "ban", "bang", "bao", "bei", "ben", "beng", "bi", "bian", "biao", "bie", "bin", "bing", "bo", "bu",
    "ca", "cai", "can", "cang", "cao", "ce", "cen", "ceng", "cha", "chai", "chan", "chang", "chao", "che", "chen", "cheng", "chi", "chong", "chou",
    "chu", "chua", "chuai", "chuan", "chuang", "chui", "chun", "chuo", "ci", "cong", "cou", "cu", "cuan", "cui", "cun", "cuo", "da", "dai", "dan",
    "dang", "dao", "de", "dei", "den", "deng", "di", "dia", "dian", "diao", "die", "ding", "diu", "dong", "dou", "du", "duan", "dui", "dun", "duo",
    "e", "ei", "en", "eng", "er", "fa", "fan", "fang", "fei", "fen", "feng", "fo", "fou", "fu", "ga", "gai", "gan", "gang", "gao", "ge", "gei",
    "gen", "geng", "gong", "gou", "gu", "gua", "guai", "guan", "guang", "gui", "gun", "guo", "ha", "hai", "han", "hang", "hao", "he", "hei", "hen",
    "heng", "hm", "hng", "hong", "hou", "hu", "hua", "huai", "huan", "huang", "hui", "hun", "huo", "ji", "jia", "jian", "jiang", "jiao", "jie",
    "jin", "jing", "jiong", "jiu", "ju", "juan", "jue", "jun", "ka", "kai", "kan", "kang", "kao", "ke", "kei", "ken", "keng", "kong", "kou", "ku",
    "kua", "kuai", "kuan", "kuang", "kui", "kun", "kuo", "la", "lai", "lan", "lang", "lao", "le", "lei", "len", "leng", "li", "lia", "lian", "liang",
    "liao", "lie", "lin", "ling", "liu", "lo", "long", "lou", "lu", "luan", "lun", "luo", "lv", "lve", "m", "ma", "mai", "man", "mang", "mao", "me",
    "mei", "men", "meng", "mi", "mian", "miao", "mie", "min", "ming", "miu", "mo", "mou", "mu", "n", "na", "nai", "nan", "nang", "nao", "ne", "nei",
    "nen", "neng", "ng", "ni", "nian", "niang", "niao", "nie", "nin", "ning", "niu", "nong", "nou", "nu", "nuan", "nuo", "nv", "nve", "o", "ou",
    "pa", "pai", "pan", "pang", "pao", "pei", "pen", "peng", "pi", "pian", "piao", "pie", "pin", "ping", "po", "pou", "pu", "qi", "qia", "qian",
    "qiang", "qiao", "qie", "qin", "qing", "qiong", "qiu", "qu", "quan", "que", "qun", "ran", "rang", "rao", "re", "ren", "reng", "ri", "rong",
    "rou", "ru", "rua", "ruan", "rui", "run", "ruo", "sa", "sai", "san", "sang", "sao", "se", "sen", "seng", "sha", "shai", "shan", "shang", "shao",
    "she", "shei", "shen", "sheng", "shi", "shou", "shu", "shua", "shuai", "shuan", "shuang", "shui", "shun", "shuo", "si", "song", "sou", "su",
    "suan", "sui", "sun", "suo", "ta", "tai", "tan", "tang", "tao", "te", "tei", "teng", "ti", "tian", "tiao", "tie", "ting", "tong", "tou", "tu",
    "tuan", "tui", "tun", "tuo", "wa", "wai", "wan", "wang", "wei", "wen", "weng", "wo", "wu", "xi", "xia", "xian", "xiang", "xiao", "xie", "xin",
    "xing", "xiong", "xiu", "xu", "xuan", "xue", "xun", "ya", "yan", "yang", "yao", "ye", "yi", "yin", "ying", "yo", "yong", "you", "yu", "yuan",
    "yue", "yun", "za", "zai", "zan", "zang", "zao", "ze", "zei", "zen", "zeng", "zha", "zhai", "zhan", "zhang", "zhao", "zhe", "zhei", "zhen",
    "zheng", "zhi", "zhong", "zhou", "zhu", "zhua", "zhuai", "zhuan", "zhuang", "zhui", "zhun", "zhuo", "zi", "zong", "zou", "zu", "zuan", "zui",
    "zun", "zuo",
];

/// The longest syllable, in letters ("chuang", "shuang", "zhuang").
const LONGEST: usize = 6;

/// Interjections with no vowel (呣 m, 嗯 n, ng, 噷 hm, 哼 hng): a syllable only when typed apart,
/// else every "n" would end a syllable ("xian" as xia n) and every "ng" start one.
const BARE_NASALS: &[&str] = &["hm", "hng", "m", "n", "ng"];

/// A syllable's canonical spelling: itself, or lve/nve for the lue/nue people type.
fn canonical(s: &str) -> Option<&'static str> {
    match s {
        "lue" => Some("lve"),
        "nue" => Some("nve"),
        _ => SYLLABLES.binary_search(&s).ok().map(|i| SYLLABLES[i]),
    }
}

/// Whether `s` is a toneless syllable (canonical spelling).
pub fn is_syllable(s: &str) -> bool {
    SYLLABLES.binary_search(&s).is_ok()
}

/// One syllable of the input: its letters' place, and its canonical spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syllable {
    pub start: usize,
    pub end: usize,
    pub text: &'static str,
}

/// Typed pinyin, normalised: its letters (lower case, ü as v) with the places where the writer
/// put a separator, and the syllables that can start at each place.
#[derive(Debug, Clone)]
pub struct Pinyin {
    letters: Vec<u8>,
    /// For each letter place, the syllables starting there that can be part of a full cut.
    from: Vec<Vec<Syllable>>,
}

impl Pinyin {
    /// Reads typed pinyin: letters a-z (any case), ü or v for ü, spaces and apostrophes between
    /// syllables. An error names the first thing that is not pinyin.
    pub fn parse(input: &str) -> Result<Self> {
        let mut letters = Vec::new();
        let mut breaks = vec![true]; // breaks[i]: a separator (or the start) before letter i
        let mut sep = true;
        for (at, c) in input.chars().enumerate() {
            match c {
                ' ' | '\t' | '\'' | '\u{2019}' => sep = true,
                'a'..='z' | 'A'..='Z' | 'ü' | 'Ü' => {
                    let c = if matches!(c, 'ü' | 'Ü') { 'v' } else { c.to_ascii_lowercase() };
                    if letters.is_empty() {
                        breaks.clear();
                    }
                    letters.push(c as u8);
                    breaks.push(sep);
                    sep = false;
                }
                _ => return Err(DecideError::Input(format!("{input:?} is not pinyin: {c:?} (character {}) is not a letter or separator", at + 1))),
            }
        }
        if letters.is_empty() {
            return Err(DecideError::Input("the pinyin is empty".into()));
        }
        breaks.push(true); // the end
        let n = letters.len();
        // Syllables from each place, then only those from which the end can be reached.
        let mut from: Vec<Vec<Syllable>> = vec![vec![]; n];
        for (start, list) in from.iter_mut().enumerate() {
            for end in start + 1..=(start + LONGEST).min(n) {
                if (start + 1..end).any(|i| breaks[i]) {
                    break;
                }
                let s = std::str::from_utf8(&letters[start..end]).expect("ascii");
                if let Some(text) = canonical(s).filter(|t| !BARE_NASALS.contains(t) || (breaks[start] && breaks[end])) {
                    list.push(Syllable { start, end, text });
                }
            }
        }
        let mut reaches_end = vec![false; n + 1];
        reaches_end[n] = true;
        for start in (0..n).rev() {
            from[start].retain(|s| reaches_end[s.end]);
            reaches_end[start] = !from[start].is_empty();
        }
        if !reaches_end[0] {
            // The first place, from the start, that no cut gets past: name the chunk it is in.
            let mut reach = vec![false; n + 1];
            reach[0] = true;
            let mut furthest = 0;
            for start in 0..n {
                if !reach[start] {
                    continue;
                }
                furthest = furthest.max(start);
                for end in start + 1..=(start + LONGEST).min(n) {
                    if (start + 1..end).any(|i| breaks[i]) {
                        break;
                    }
                    let s = std::str::from_utf8(&letters[start..end]).expect("ascii");
                    if canonical(s).is_some_and(|t| !BARE_NASALS.contains(&t) || (breaks[start] && breaks[end])) {
                        reach[end] = true;
                    }
                }
            }
            let rest = String::from_utf8_lossy(&letters[furthest..]);
            return Err(DecideError::Input(format!("{input:?} is not pinyin: no syllables make up {rest:?}")));
        }
        Ok(Self { letters, from })
    }

    /// The number of letter places (the lattice's last node).
    pub fn len(&self) -> usize {
        self.letters.len()
    }

    pub fn is_empty(&self) -> bool {
        self.letters.is_empty()
    }

    /// The syllables starting at letter place `at` that lead to a full cut.
    pub fn syllables_from(&self, at: usize) -> &[Syllable] {
        self.from.get(at).map_or(&[], Vec::as_slice)
    }

    /// Every way to cut the input into syllables, fewest syllables first, at most `limit`.
    pub fn segmentations(&self, limit: usize) -> Vec<Vec<&'static str>> {
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.walk(0, &mut path, &mut out, limit);
        out.sort_by_key(Vec::len);
        out
    }

    fn walk(&self, at: usize, path: &mut Vec<&'static str>, out: &mut Vec<Vec<&'static str>>, limit: usize) {
        if out.len() >= limit {
            return;
        }
        if at == self.letters.len() {
            out.push(path.clone());
            return;
        }
        for s in &self.from[at] {
            path.push(s.text);
            self.walk(s.end, path, out, limit);
            path.pop();
        }
    }
}

/// Every way to cut typed pinyin into syllables ("xian" -> [xian], [xi, an]), fewest syllables
/// first, at most `limit`; an error for input that is not pinyin.
pub fn segment(input: &str, limit: usize) -> Result<Vec<Vec<&'static str>>> {
    Ok(Pinyin::parse(input)?.segmentations(limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuts(s: &str) -> Vec<String> {
        segment(s, 100).unwrap().iter().map(|c| c.join(" ")).collect()
    }

    #[test]
    fn the_table_is_sorted_for_binary_search() {
        assert!(SYLLABLES.windows(2).all(|w| w[0] < w[1]));
        assert!(SYLLABLES.iter().all(|s| s.len() <= LONGEST));
    }

    #[test]
    fn an_ambiguous_run_has_every_cut() {
        assert_eq!(cuts("xian"), ["xian", "xi an"]);
        assert_eq!(cuts("fangan"), ["fan gan", "fang an"]);
        // A bare nasal is a syllable only typed apart.
        assert_eq!(cuts("n"), ["n"]);
        assert_eq!(cuts("en ng"), ["en ng"]);
    }

    #[test]
    fn spaces_and_apostrophes_separate_and_case_does_not_matter() {
        assert_eq!(cuts("xi'an"), ["xi an"]);
        assert_eq!(cuts("Xi An"), ["xi an"]);
        assert_eq!(cuts("  jin tian  "), ["jin tian", "jin ti an"]);
        assert_eq!(cuts("JinTian")[0], "jin tian");
        assert_eq!(cuts("jin'tian'")[0], "jin tian");
        assert!(cuts("jintiantianqizhenhao").contains(&"jin tian tian qi zhen hao".to_string()));
    }

    #[test]
    fn u_umlaut_is_v_and_lue_is_lve() {
        assert_eq!(cuts("lü"), ["lv"]);
        assert_eq!(cuts("nv"), ["nv"]);
        assert_eq!(cuts("lue")[0], "lve");
        assert_eq!(cuts("lüe"), ["lve", "lv e"]);
    }

    #[test]
    fn what_is_not_pinyin_is_named() {
        let err = |s: &str| segment(s, 10).unwrap_err().to_string();
        assert!(err("ni3 hao").contains("'3'"), "{}", err("ni3 hao"));
        assert!(err("").contains("empty"));
        assert!(err(" ' ").contains("empty"));
        assert!(err("ni hqo").contains("\"hqo\""), "{}", err("ni hqo"));
        assert!(err("你好").contains("not pinyin"));
        // A separator may not fall inside a syllable: "zh ong" is not "zhong".
        assert!(err("zh ong").contains("not pinyin"));
    }

    #[test]
    fn segmentations_are_bounded() {
        assert_eq!(segment("xianxianxianxianxian", 5).unwrap().len(), 5);
    }
}
