#!/usr/bin/env python3
"""Builds the pinyin dictionary .deps/pinyin/zh.tsv: `reading<TAB>hanzi<TAB>count` per line, the
reading toneless, lower-case, its syllables joined by spaces, ü written v ("lv xing").

Words and their counts come from jieba's dict.txt (MIT; word, count, part of speech), readings
from pypinyin (MIT): its phrase dictionary for words (so polyphones read right: 银行 "yin hang",
行走 "xing zou"), every reading of pinyin_dict for a single character. Only simplified Chinese is
kept (what mainland writers type): words whose characters are all in GB2312, the simplified
character set. GB2312 characters jieba lacks are added with count 1, so that every syllable has
characters. Output sorted by reading, then count (highest first), then word: deterministic.

Usage: pinyin.py --pypinyin DIR --jieba DICT.txt --out zh.tsv
"""
import argparse
import os
import re
import sys

HANZI = re.compile(r"^[\u4e00-\u9fff]+$")
SYLLABLE = re.compile(r"^[a-z]+$")
MAX_CHARS = 8


def simplified(word):
    """All characters in GB2312, the simplified character set (traditional forms are not in it)."""
    try:
        word.encode("gb2312")
        return True
    except UnicodeEncodeError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pypinyin", required=True, help="folder holding the pypinyin package")
    ap.add_argument("--jieba", required=True, help="jieba's dict.txt")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    sys.path.insert(0, a.pypinyin)
    from pypinyin import Style, lazy_pinyin, pinyin_dict  # noqa: E402

    def toneless(readings):
        out = [r.lower() for r in readings]
        return out if all(SYLLABLE.match(r) for r in out) else None

    rows = {}  # (reading, word) -> count

    def add(reading, word, count):
        key = (reading, word)
        rows[key] = max(rows.get(key, 0), count)

    chars = {}  # single characters of jieba -> count, read once the words are in
    usage = {}  # (character, reading) -> summed counts of the words that read it so
    with open(a.jieba, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) < 2:
                continue
            word, count = parts[0], int(parts[1])
            if not HANZI.match(word) or len(word) > MAX_CHARS or not simplified(word) or count < 1:
                continue
            if len(word) == 1:
                chars[word] = count
                continue
            syl = toneless(lazy_pinyin(word, style=Style.NORMAL, errors="ignore"))
            if syl is None or len(syl) != len(word):
                continue
            add(" ".join(syl), word, count)
            for ch, r in zip(word, syl):
                usage[(ch, r)] = usage.get((ch, r), 0) + count
    # A character's count is shared among its readings by how often the words it is in read it
    # so (add-one smoothed): 见 is "jian" in nearly every word, so "xian" gets a sliver of it.
    for code in pinyin_dict.pinyin_dict:
        ch = chr(code)
        if not HANZI.match(ch) or not simplified(ch):
            continue
        readings = char_readings(ch, pinyin_dict.pinyin_dict, lazy_pinyin, Style)
        uses = [usage.get((ch, r), 0) + 1 for r in readings]
        total = sum(uses)
        for r, u in zip(readings, uses):
            add(r, ch, max(1, chars.get(ch, 1) * u // total))
    tmp = a.out + ".tmp"
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("# reading\thanzi\tcount — built by scripts/pinyin.py from pypinyin and jieba (MIT)\n")
        for (reading, word), count in sorted(rows.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1])):
            f.write(f"{reading}\t{word}\t{count}\n")
    os.replace(tmp, a.out)
    print(f"pinyin: {len(rows)} readings of {len({w for _, w in rows})} words -> {a.out}", file=sys.stderr)


def char_readings(ch, table, lazy_pinyin, Style):
    """Every toneless reading pypinyin knows for one character ("行": hang, xing, heng)."""
    from pypinyin.style import convert  # noqa: E402

    out = []
    for r in table.get(ord(ch), "").split(","):
        t = convert(r, Style.NORMAL, strict=True).lower() if r else ""
        if SYLLABLE.match(t) and t not in out:
            out.append(t)
    return out


if __name__ == "__main__":
    main()
