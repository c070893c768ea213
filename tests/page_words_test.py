#!/usr/bin/env python3
"""Every word of the pages' furniture has its Chinese (report/page_words.cpp).

Reads the English keys of page_words.cpp's kWords, then every literal the
pages ask for: page_word(lang, "…") in harness/report/*.cpp (adjacent string
literals joined, as the compiler does) and T('…') in story_page.js; each must
be a key, else the zh page would show it in English. Prints one line per word
without Chinese.

    page_words_test.py SOURCE_DIR
Exit 0 when every word has its Chinese, 1 otherwise.
"""
import glob
import os
import re
import sys

LITERALS = r'((?:"(?:[^"\\]|\\.)*"\s*)+)'


def joined(literals):
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', literals))


def main():
    root = sys.argv[1]
    report = os.path.join(root, "harness", "report")
    table = open(os.path.join(report, "page_words.cpp"), encoding="utf-8").read()
    keys = {joined(m.group(1)) for m in re.finditer(r"\{\s*" + LITERALS + r",\s*" + LITERALS + r"\}", table)}
    asked = []
    for path in sorted(glob.glob(os.path.join(report, "*.cpp"))):
        text = open(path, encoding="utf-8").read()
        asked += [(path, joined(m.group(1))) for m in re.finditer(r"page_word\(\s*[\w.]+,\s*" + LITERALS, text)]
        # Named constants given to page_word (kCountsNote): their literal.
        for name in re.findall(r"page_word\(\s*[\w.]+,\s*(k\w+)", text):
            found = re.search(r"\b" + name + r"\s*=\s*" + LITERALS + ";", text)
            if found:
                asked.append((path, joined(found.group(1))))
        # legend_item(lang, swatch, "english")
        asked += [(path, joined(m.group(1))) for m in re.finditer(r'legend_item\(lang, "[^"]*",\s*' + LITERALS, text)]
    script = open(os.path.join(report, "story_page.js"), encoding="utf-8").read()
    asked += [("story_page.js", m.group(1).replace("\\'", "'")) for m in re.finditer(r"\bT\('((?:[^'\\]|\\.)*)'", script)]
    asked += [("story_page.js", m.group(1)) for m in re.finditer(r'\bT\("((?:[^"\\]|\\.)*)"', script)]
    missing = [(path, word) for path, word in asked if word not in keys]
    for path, word in missing:
        print("FAIL %s: no Chinese for %r" % (os.path.basename(path), word))
    if not asked:
        print("FAIL: found no page_word() or T() call: the test reads nothing")
        return 1
    print("%s: %d words asked for, %d without Chinese" % ("FAIL" if missing else "PASS", len(asked), len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
