#!/usr/bin/env python3
"""Runs every command written in a Markdown file's code blocks, exactly as written, and fails on the first that fails.

Usage: run_doc_commands.py --source REPO --bin BUILT_MESHPLAN DOC.md

Which blocks: fenced blocks tagged bash, sh or untagged hold commands (```text blocks are skipped).
A block's lines are joined at trailing backslashes, a here-document's lines (`cat > f <<'EOF'` .. `EOF`)
kept with their command; '#' lines are comments. Lines starting with
'$ ' are commands that must fail: exit 2 and the next line of the block exactly on stderr.
All commands of one file run in order in one fresh temp directory (later blocks read what earlier
ones wrote, e.g. plan.json) that links examples/, hardware-profiles/ and build/ of the checkout,
with the built meshplan first on PATH, as root or not, as written. A block whose first line is
'# needs a cluster ...' or '# needs a GPU ...' is printed as not run (the docs say so in that line).

The only substitutions (the CI job is itself `install-deps.sh && test.sh`, which runs this test):
- `bash scripts/install-deps.sh && bash scripts/build.sh && CMD` runs CMD (deps and build are done);
- `bash scripts/test.sh` is not run again from inside the test suite, nor are the steps it runs
  itself besides ctest: `bash scripts/test-sanitize.sh`, `bash scripts/test-fuzz.sh`, and the corpus
  (`python3 tests/corpus/corpus.py`, which ctest runs as the `corpus: <kind>` tests).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

SKIPPED_PREFIXES = ("bash scripts/install-deps.sh", "bash scripts/build.sh", "cmake --build build")
NOT_RERUN = ("bash scripts/test.sh", "bash scripts/test-sanitize.sh", "bash scripts/test-fuzz.sh",
             "python3 tests/corpus/corpus.py", "MESHPLAN_FUZZ_SECONDS=")


def code_blocks(text):
    """Yields (first line number, [lines]) of every command block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        lang, start, body = m.group(1), i + 1, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        if lang in ("", "bash", "sh"):
            yield start + 1, body


def needs_elsewhere(block):
    """A block that opens with '# needs a cluster' or '# needs a GPU' is shown, not run here."""
    first = next((l.strip() for l in block if l.strip()), "")
    return first.startswith("# needs a cluster") or first.startswith("# needs a GPU")


def commands(block):
    """Yields (kind, command, expected stderr line): kind 'run' or 'fail'."""
    joined, cur, heredoc = [], "", None
    for line in block:
        if heredoc is not None:  # a here-document's body is part of its command, line breaks kept
            cur += "\n" + line
            if line.strip() == heredoc:
                joined.append(cur)
                cur, heredoc = "", None
            continue
        if cur:
            cur += " " + line.strip()
        else:
            cur = line
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", cur)
        if m:
            heredoc = m.group(1)
            continue
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
            continue
        joined.append(cur)
        cur = ""
    if cur:
        joined.append(cur)
    i = 0
    while i < len(joined):
        line = joined[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        if line.startswith("$ "):
            expected = joined[i].strip() if i < len(joined) else ""
            i += 1
            yield "fail", line[2:], expected
        else:
            yield "run", line, None


def substitute(cmd):
    """The two documented substitutions; returns None for a command not run here."""
    if any(cmd.startswith(p) for p in NOT_RERUN):
        return None
    parts = [p.strip() for p in cmd.split("&&")]
    kept = [p for p in parts if not any(p.startswith(s) for s in SKIPPED_PREFIXES)]
    return " && ".join(kept) if kept else None


def setup_dir(source, binary):
    work = tempfile.mkdtemp(prefix="meshplan-doc-")
    for name in ("examples", "hardware-profiles", "scripts", "tests"):
        os.symlink(os.path.join(source, name), os.path.join(work, name))
    build = os.path.dirname(os.path.dirname(os.path.abspath(binary)))  # <build>/cli/meshplan
    os.symlink(build, os.path.join(work, "build"))
    bindir = os.path.join(work, ".bin")
    os.mkdir(bindir)
    os.symlink(os.path.abspath(binary), os.path.join(bindir, "meshplan"))
    # A model file that breaks a rule, for the documented error example (examples/README.md "Errors").
    with open(os.path.join(work, "bad.yaml"), "w") as f:
        f.write("hidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\n"
                "num_key_value_heads: 3\nvocab_size: 256\n")
    return work, bindir


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("doc")
    a = ap.parse_args()
    with open(os.path.join(a.source, a.doc)) as f:
        text = f.read()
    work, bindir = setup_dir(a.source, a.bin)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    # Root-run permission and oversubscription must come from the commands as written.
    for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "OMPI_MCA_rmaps_base_oversubscribe"):
        env.pop(k, None)
    ran, failures = 0, 0
    for lineno, block in code_blocks(text):
        if needs_elsewhere(block):
            print(f"{a.doc}:{lineno}: not run here ({block[0].strip().lstrip('# ')})")
            continue
        for kind, cmd, expected in commands(block):
            run = substitute(cmd) if kind == "run" else cmd
            if run is None:
                print(f"{a.doc}:{lineno}: not rerun inside the suite: {cmd}")
                continue
            t0 = time.time()
            p = subprocess.run(["bash", "-o", "pipefail", "-c", run], cwd=work, env=env,
                               capture_output=True, text=True, timeout=a.timeout)
            dt = time.time() - t0
            ran += 1
            if kind == "run":
                ok = p.returncode == 0
                why = f"exit {p.returncode}"
            else:
                got = p.stderr.strip()
                ok = p.returncode == 2 and got == expected
                why = f"exit {p.returncode} (want 2), stderr {got!r} (want {expected!r})"
            print(f"{a.doc}:{lineno}: {'ok  ' if ok else 'FAIL'} {dt:6.1f} s  {cmd}")
            if not ok:
                failures += 1
                print(f"  {why}\n  --- stdout (tail) ---\n{p.stdout[-3000:]}\n  --- stderr (tail) ---\n"
                      f"{p.stderr[-3000:]}")
    print(f"{a.doc}: {ran} commands run, {failures} failed (in {work})")
    if ran == 0:
        print("no commands found: the extractor is broken")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
