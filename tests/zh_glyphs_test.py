#!/usr/bin/env python3
"""Chinese pages show glyphs, not boxes (issue 28, item 4): a screenshot test.

Each page given is rendered twice by Debian's headless Chromium at the same
size: once with the machine's fonts, once with a fontconfig (FONTCONFIG_FILE)
that is the machine's with every font that has Chinese glyphs rejected
(`fc-list :lang=zh`), so Latin text keeps its font and every Chinese
character is drawn as a box. The two screenshots must differ in enough pixels: a page
whose Chinese already falls back to boxes renders the same both ways.

The control: the same page's English twin, if given as EN=ZH (en.html=zh.html),
renders nearly alike both ways (its Latin text keeps its font; a seed
article's Chinese title, which English pages quote, changes); the Chinese
page must differ by more than three times the English page's difference, so a
difference that is not the Chinese (a font for Latin, a moving cursor) cannot
pass the test.

    zh_glyphs_test.py [--keep DIR] [EN.html=]ZH.html...

Exit 0 when every page shows its glyphs; 1 when one does not (or the machine
has no CJK font: scripts/setup installs fonts-wqy-microhei); 77 (ctest's skip)
with one line when Chromium is not installed.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

CHROMIUM = "/usr/bin/chromium"
SIZE = (1400, 900)
MIN_CHANGED = 0.002  # of the pixels: a handful of CJK characters change more than this


def png_pixels(path):
    """(width, height, rows of RGB bytes) of an 8-bit, non-interlaced RGB or RGBA PNG (Chromium's screenshots)."""
    data = open(path, "rb").read()
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError("%s: not an 8-bit RGB(A) PNG" % path)
            channels = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1: line[i] = (line[i] + a) & 255
            elif kind == 2: line[i] = (line[i] + b) & 255
            elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def changed(one, two):
    """The fraction of pixels whose colour differs between two screenshots of one size."""
    w, h, ch, a = png_pixels(one)
    w2, h2, ch2, b = png_pixels(two)
    if (w, h, ch) != (w2, h2, ch2):
        return 1.0
    differ = sum(1 for y in range(h) for x in range(0, w * ch, ch) if a[y][x:x + 3] != b[y][x:x + 3])
    return differ / float(w * h)


def screenshot(page, out, env, profile):
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                    "--disable-background-networking", "--user-data-dir=" + profile,
                    "--window-size=%d,%d" % SIZE, "--screenshot=" + out, "file://" + os.path.abspath(page)],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=False)
    if not os.path.exists(out):
        raise RuntimeError("Chromium wrote no screenshot of " + page)


def cjk_font_files():
    out = subprocess.run(["fc-list", ":lang=zh", "file"], capture_output=True, text=True).stdout
    return sorted({line.strip().rstrip(":") for line in out.splitlines() if line.strip()})


def box_only_env(work):
    """An environment whose fontconfig is the machine's with every font that has Chinese glyphs rejected:
    Latin text keeps its font, Chinese characters become boxes."""
    conf = os.path.join(work, "box-only.conf")
    rejected = "".join("<glob>%s</glob>" % path for path in cjk_font_files())
    with open(conf, "w") as f:
        f.write('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>'
                '<include ignore_missing="yes">/etc/fonts/fonts.conf</include>'
                '<selectfont><rejectfont>%s</rejectfont></selectfont><cachedir>%s</cachedir></fontconfig>\n'
                % (rejected, os.path.join(work, "fc-cache")))
    return dict(os.environ, FONTCONFIG_FILE=conf)


def both(page, work, name):
    """(changed fraction between the machine's fonts and box-only) of one page."""
    shots = []
    for kind, env in (("fonts", dict(os.environ)), ("boxes", box_only_env(work))):
        out = os.path.join(work, "%s-%s.png" % (name, kind))
        screenshot(page, out, env, os.path.join(work, "profile-" + kind))
        shots.append(out)
    return changed(*shots)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", help="keep the screenshots in this directory")
    parser.add_argument("pages", nargs="+", help="ZH.html or EN.html=ZH.html")
    options = parser.parse_args()
    if not os.access(CHROMIUM, os.X_OK):
        print("SKIP: %s is not installed (scripts/setup installs chromium)" % CHROMIUM)
        return 77
    cjk = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout.strip()
    if not cjk:
        print("FAIL: no font with Chinese glyphs on this machine (scripts/setup installs fonts-wqy-microhei)")
        return 1
    work = options.keep or tempfile.mkdtemp(prefix="zh-glyphs-")
    os.makedirs(work, exist_ok=True)
    failures = 0
    try:
        for i, spec in enumerate(options.pages):
            en, _, zh = spec.rpartition("=")
            zh_changed = both(zh, work, "zh%d" % i)
            en_changed = both(en, work, "en%d" % i) if en else 0.0
            need = max(MIN_CHANGED, 3 * en_changed)
            ok = zh_changed >= need
            failures += not ok
            print("%s %s: %.2f%% of the pixels change when the CJK font is taken away (need >= %.2f%%%s)" %
                  ("PASS" if ok else "FAIL", os.path.basename(zh), 100 * zh_changed, 100 * need,
                   "; its English twin: %.3f%%" % (100 * en_changed) if en else ""))
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
