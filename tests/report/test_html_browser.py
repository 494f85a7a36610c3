#!/usr/bin/env python3
"""The --html reports rendered in a real headless browser (Debian's chromium).

Writes `plan --html` and `simulate --html` pages with the built meshplan, renders them with
`chromium --headless` and checks: no console message at all (the page has no script, so any
"CONSOLE" line, e.g. an "Uncaught" error, is a defect), the screenshot is not blank (decoded
here: enough distinct colours and non-white pixels), and the DOM holds every section.
Without chromium: exit 77 (skipped) on a developer's machine, a failure when CI=true.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
PLAN_SECTIONS = ["problem", "pareto", "candidates", "memory", "time", "timeline", "accuracy", "provenance"]
ONE_PLAN_SECTIONS = ["problem", "memory", "time", "timeline", "accuracy", "provenance"]


def decode_png(data):
    """(width, height, rows of RGB tuples) of an 8-bit, non-interlaced RGB/RGBA/grey PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"IDAT":
            idat += body
    width, height = int.from_bytes(ihdr[0:4], "big"), int.from_bytes(ihdr[4:8], "big")
    depth, colour, interlace = ihdr[8], ihdr[9], ihdr[12]
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    assert depth == 8 and interlace == 0, "unsupported PNG (depth %d, interlace %d)" % (depth, interlace)
    raw, stride, bpp = zlib.decompress(idat), width * channels, channels
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if channels >= 3:
            rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        else:
            rows.append([(line[x],) * 3 for x in range(0, stride, channels)])
    return width, height, rows


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_browser(browser, profile_dir, url, extra):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--enable-logging=stderr", "--v=0", "--user-data-dir=" + profile_dir] + extra + [url]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
    log = r.stderr.decode("utf-8", "replace")
    if r.returncode != 0:
        sys.exit("chromium exited %d:\n%s" % (r.returncode, log[-3000:]))
    return r.stdout.decode("utf-8", "replace"), log


def check_console(log, page):
    bad = [l for l in log.splitlines() if ":CONSOLE" in l or "Uncaught" in l]
    if bad:
        sys.exit("%s: console messages in the browser:\n%s" % (page, "\n".join(bad)))


def check_dom(dom, page, sections, min_svgs):
    missing = [s for s in sections if 'id="%s"' % s not in dom]
    if missing:
        sys.exit("%s: DOM lacks sections %s" % (page, missing))
    if dom.count("<svg") < min_svgs:
        sys.exit("%s: %d <svg> in the DOM, expected >= %d" % (page, dom.count("<svg"), min_svgs))


def check_screenshot(png_path, page):
    with open(png_path, "rb") as f:
        width, height, rows = decode_png(f.read())
    colours, non_white, total = set(), 0, 0
    for row in rows[::2]:
        for px in row[::2]:
            total += 1
            colours.add(px)
            non_white += px != (255, 255, 255)
    share = non_white / max(total, 1)
    print("%s: screenshot %dx%d, %d distinct colours, %.1f%% non-white" % (page, width, height, len(colours),
                                                                         100 * share))
    if len(colours) < 100 or share < 0.05:
        sys.exit("%s: the screenshot looks blank (%d colours, %.1f%% non-white)" % (page, len(colours), 100 * share))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--keep-screenshot", help="copy the plan page's screenshot here (docs/images/report.png)")
    a = ap.parse_args()
    browser = chromium_binary()
    if not browser:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            sys.exit("chromium is not installed (scripts/install-deps.sh installs it); CI must run this test")
        print("chromium not installed: skipped (apt-get install chromium)")
        return SKIP
    # README.md's --html example (its screenshot is docs/images/report.png).
    model = os.path.join(a.source, "examples/models/llama-2-70b.yaml")
    problem = ["--model", model, "--hardware", "a100-80gb-sxm", "--gpus", "32", "--global-batch", "64",
               "--seq", "4096"]
    with tempfile.TemporaryDirectory(prefix="meshplan-html-") as tmp:
        plan_html, sim_html = os.path.join(tmp, "plan.html"), os.path.join(tmp, "simulate.html")
        plan_json = os.path.join(tmp, "plan.json")
        subprocess.run([a.bin, "plan"] + problem + ["-q", "--output", plan_json, "--html", plan_html], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([a.bin, "simulate", "--plan", plan_json, "--html", sim_html], check=True,
                       stdout=subprocess.DEVNULL)
        png = os.path.join(tmp, "plan.png")
        _, log = run_browser(browser, os.path.join(tmp, "p1"), "file://" + plan_html,
                             ["--screenshot=" + png, "--window-size=1280,2560"])
        check_console(log, "plan.html")
        check_screenshot(png, "plan.html")
        dom, log = run_browser(browser, os.path.join(tmp, "p2"), "file://" + plan_html, ["--dump-dom"])
        check_console(log, "plan.html")
        check_dom(dom, "plan.html", PLAN_SECTIONS, 4)
        dom, log = run_browser(browser, os.path.join(tmp, "p3"), "file://" + sim_html, ["--dump-dom"])
        check_console(log, "simulate.html")
        check_dom(dom, "simulate.html", ONE_PLAN_SECTIONS, 3)
        if "pareto" in dom.split('id="provenance"')[0] and 'id="pareto"' in dom:
            sys.exit("simulate.html: a one-plan page must not draw a Pareto front")
        if a.keep_screenshot:
            shutil.copyfile(png, a.keep_screenshot)
    print("html reports render in %s without console messages" % os.path.basename(browser))
    return 0


if __name__ == "__main__":
    sys.exit(main())
