#!/usr/bin/env python3
"""tools/bench_report.py on fixture data it writes itself: BENCHMARKS.md
(intro, per section its summary and figures: the newest run's median per
card, targets met / missed / open, commands) and docs/benchmarks/history.md
(sections in file-name order with their anchors, the latest run of each
command per card, records of one command told apart by their
configuration); new sections picked up without front matter; clear
refusals of bad input; --check failing on a stale file.

  python3 test_bench_report.py REPO_ROOT"""
import importlib.util
import json
import os
import sys
import tempfile


def load(root):
    spec = importlib.util.spec_from_file_location("bench_report", os.path.join(root, "tools", "bench_report.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def record(card, date, command, **fields):
    r = {"dataset": "uniform3_1M", "method": "grid", "n": 1000000, "k": 16}
    r.update(fields)
    r["run"] = {"card": card, "card_name": card.upper() + " card", "date": date, "commit": "abc1234",
                "command": command, "program": "vicinity_bench"}
    return json.dumps(r)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def refusal(br, root, what):
    """The InputError message generate(root) stops with, or None (a failed
    check named `what`) when it does not refuse."""
    try:
        br.generate(root)
    except br.InputError as e:
        return str(e)
    check(False, what)
    return None


def main():
    root = sys.argv[1]
    br = load(root)
    with tempfile.TemporaryDirectory() as tmp:
        write(os.path.join(tmp, "benchmarks/sections/20-second.md"), "## Second topic\n\nText two.\n")
        write(os.path.join(tmp, "benchmarks/sections/10-first.md"), "## First topic\n\nText one.\n")
        write(os.path.join(tmp, "benchmarks/sections/issue99-late.md"), "## A helper's section\n\nLate.\n")
        cmd = "vicinity_bench --data u.npy --method grid --k 16"
        write(os.path.join(tmp, "benchmarks/results/h100_2026-01-01_a.jsonl"), "\n".join([
            "# a comment line",
            record("h100", "2026-01-01T00:00Z", cmd, seconds=9.0),
            record("h100", "2026-01-01T00:00Z", cmd, seconds=9.5),
            record("cpu-2core", "2026-01-01T00:00Z", cmd, seconds=40.0),
        ]) + "\n")
        write(os.path.join(tmp, "benchmarks/results/h100_2026-01-02_b.jsonl"), "\n".join([
            record("h100", "2026-01-02T00:00Z", cmd, seconds=1.0, seconds_stages={"kernel": 0.25, "transfer": 0.5}),
            record("h100", "2026-01-02T00:00Z", cmd, seconds=3.0, seconds_stages={"kernel": 0.75, "transfer": 0.5}),
            record("h100", "2026-01-02T00:00Z", cmd, seconds=2.0, seconds_stages={"kernel": 0.5, "transfer": 0.5}),
            record("h100", "2026-01-02T00:00Z", "multigpu_bench grid u.npy", devices=1, seconds=3.5),
            record("h100", "2026-01-02T00:00Z", "multigpu_bench grid u.npy", devices=2, seconds=2.25),
        ]) + "\n")
        files = br.generate(tmp)
        check(sorted(files) == ["BENCHMARKS.md", "docs/benchmarks/history.md"], "two files: %s" % sorted(files))
        text = files["docs/benchmarks/history.md"]
        a, b, c = text.find("## First topic"), text.find("## Second topic"), text.find("## A helper's section")
        check(0 < a < b < c, "history: sections in file-name order, every file included")
        check('<a name="10-first"></a>' in text, "history: each section has its file's anchor")
        t = text.find("## Latest results by card")
        check(t > c, "history: the card tables after the sections")
        h100 = text[text.find("### h100"):]
        check("| 2.000 (3 runs) | 0.500 | 0.500 |" in h100, "latest run's median wall time with its repeat's stages")
        check("9.000" not in h100 and "9.250" not in h100, "an older run of the same command is not shown")
        check("devices 1" in h100 and "devices 2" in h100 and "| 3.500 |" in h100 and "| 2.250 |" in h100,
              "records of one command with different devices stay apart")
        check("1. `%s` (commit abc1234, 2026-01-02T00:00Z)" % cmd in h100, "the command and commit of each row")
        cpu = text[text.find("### cpu-2core"):text.find("### h100")]
        check("40.000" in cpu and "Card: CPU-2CORE card." in cpu, "each card has its own table")
        cur = files["BENCHMARKS.md"]
        check("[First topic](docs/benchmarks/history.md#10-first)" in cur
              and "[A helper's section](docs/benchmarks/history.md#issue99-late)" in cur,
              "BENCHMARKS.md links every section, new ones included")
        check("Text one." in cur, "a section without front matter: its last paragraph as summary")
        check(br.generate(tmp) == files, "the output depends on the inputs only")

        # front matter: intro, summary, figures from run records and raw records, targets
        write(os.path.join(tmp, "benchmarks/sections/05-intro.md"),
              '+++\nintro = true\n+++\n## How it is made\n\nOne runner.\n')
        write(os.path.join(tmp, "benchmarks/sections/90-notebook.md"),
              '+++\nnotebook = true\ntitle = "Short"\n+++\n## A whole-tree check\n\nEvery test.\n')
        write(os.path.join(tmp, "benchmarks/sections/30-figures.md"), """+++
summary = "Two sentences of state."
[[figure]]
what = "grid, u"
results = "h100_*.jsonl"
where = { method = "grid", devices = "" }
value = "seconds"
unit = "s"
target = "<= 2.5"
[[figure]]
what = "two GPUs against one"
results = "h100_*_b.jsonl"
where = { devices = 2 }
value = "seconds"
speedup_over = { devices = 1 }
[[figure]]
what = "raw kernel"
results = "h200_*_raw.jsonl"
value = "kernel_s"
unit = "s"
with = ["recall"]
target = { kernel_s = "< 0.5", recall = ">= 0.99" }
command = "raw_bench --x"
commit = "def5678"
[[figure]]
what = "worst of lines 2-3"
results = "h200_*_raw.jsonl"
lines = [2, 3]
value = "kernel_s"
aggregate = "max"
command = "raw_bench --x"
[[figure]]
what = "never run"
results = "h200_*_raw.jsonl"
where = { method = "none" }
value = "seconds"
target = "<= 60"
[[figure]]
what = "from a text log"
value = 1.5
unit = "s"
card = "h100"
date = "2026-01-03"
command = "text_bench --y"
target = "< 1"
+++
## Figures topic

The full text.
""")
        write(os.path.join(tmp, "benchmarks/results/h200_2026-01-02_raw.jsonl"), "\n".join([
            json.dumps({"kernel_s": 0.25, "recall": 0.995}), json.dumps({"kernel_s": 0.75, "recall": 0.995}),
            json.dumps({"kernel_s": 0.5, "recall": 0.995})]) + "\n")
        files = br.generate(tmp)
        cur, hist = files["BENCHMARKS.md"], files["docs/benchmarks/history.md"]
        check(cur.find("One runner.") < cur.find("## Current figures") and "## How it is made" not in
              cur[cur.find("## Current figures"):], "an intro section's text stands before the figures")
        check("Two sentences of state." in cur and "The full text." not in cur and "The full text." in hist,
              "the summary in BENCHMARKS.md, the full text in the history")
        check("+++" not in cur and "+++" not in hist and "[[figure]]" not in hist, "front matter is not shown")
        check("### [Short]" not in cur and "[Short](docs/benchmarks/history.md#90-notebook)" in cur
              and "Every test." not in cur and "## A whole-tree check" in hist,
              "a notebook section: only linked from BENCHMARKS.md (by its short title), in full in the history")
        check("| grid, u | h100 | 2 s | <= 2.5 s: **met** | [2] |" in cur and
              "| grid, u | cpu-2core | 40 s | <= 2.5 s: **missed** | [1] |" in cur,
              "a figure: one row per card, the newest run's median, the target met or missed")
        check("2. `vicinity_bench --data u.npy --method grid --k 16` (abc1234, 2026-01-02)" in cur,
              "the figure's command, commit and date")
        check("| two GPUs against one | h100 | 1.56x | - |" in cur, "speedup_over: the peer's value / this one")
        check("| raw kernel | h200 | 0.5 s (recall 0.995) | kernel_s < 0.5, recall >= 0.99: **missed** |" in cur,
              "raw records: median, shown fields, a two-field target missed")
        check("`raw_bench --x` (def5678, 2026-01-02)" in cur, "raw records take the figure's command and commit")
        check("| worst of lines 2-3 | h200 | 0.75 (max of 2) |" in cur, "lines and aggregate")
        check("| never run | - | not measured | <= 60: open | - |" in cur, "a figure without records: not measured")
        check("| from a text log | h100 | 1.5 s | < 1 s: **missed** |" in cur and "`text_bench --y` (?, 2026-01-03)" in cur,
              "a figure written as a number")

        # one command writes both files; --check passes, then fails on a hand edit of either
        check(br.main(["--root", tmp]) == 0, "writes both files")
        check(open(os.path.join(tmp, "BENCHMARKS.md")).read() == cur and
              open(os.path.join(tmp, "docs/benchmarks/history.md")).read() == hist, "ROOT's files are the generated ones")
        check(br.main(["--root", tmp, "--check"]) == 0, "--check passes on the generated files")
        for rel in ("BENCHMARKS.md", "docs/benchmarks/history.md"):
            path = os.path.join(tmp, rel)
            good = open(path).read()
            write(path, good.replace("Text one.", "Edited by hand."))
            check(br.main(["--root", tmp, "--check"]) == 1, "--check fails on a hand-edited %s" % rel)
            write(path, good)
        out = os.path.join(tmp, "elsewhere")
        check(br.main(["--root", tmp, "--out-dir", out]) == 0 and
              open(os.path.join(out, "BENCHMARKS.md")).read() == cur, "--out-dir writes under another folder")

        # raw bench output (no run object) is listed in the history, not tabulated by card
        check("`benchmarks/results/h200_2026-01-02_raw.jsonl`" in hist and "### h200" not in hist,
              "a raw file is named, its figures not tabulated by card")
        os.remove(os.path.join(tmp, "benchmarks/results/h200_2026-01-02_raw.jsonl"))
        os.remove(os.path.join(tmp, "benchmarks/sections/30-figures.md"))
        # bad input is refused with the file and what is wrong
        for name, body, want in [
                ("31-bad-toml.md", "+++\nsummary = \n+++\n## T\n", "31-bad-toml.md: front matter is not TOML"),
                ("32-no-value.md", '+++\n[[figure]]\nwhat = "x"\nresults = "*"\n+++\n## T\n', "figure 1 needs value"),
                ("33-bad-target.md", '+++\n[[figure]]\nwhat = "x"\nresults = "h100_*"\nvalue = "seconds"\n'
                 'target = "about 3"\n+++\n## T\n', "target 'about 3'")]:
            write(os.path.join(tmp, "benchmarks/sections", name), body)
            e = refusal(br, tmp, "%s is refused" % name)
            if e is not None:
                check(want in e, "refusal names what is wrong: %s" % e)
            os.remove(os.path.join(tmp, "benchmarks/sections", name))
        write(os.path.join(tmp, "benchmarks/results/h300_2026-01-03_raw.jsonl"), json.dumps({"seconds": 1.0}) + "\n")
        write(os.path.join(tmp, "benchmarks/sections/34-no-cmd.md"),
              '+++\n[[figure]]\nwhat = "x"\nresults = "h300_*"\nvalue = "seconds"\n+++\n## T\n')
        e = refusal(br, tmp, "a figure of raw records without a command is refused")
        if e is not None:
            check("give the figure a command" in e, "no-command refusal: %s" % e)
        os.remove(os.path.join(tmp, "benchmarks/sections/34-no-cmd.md"))
        os.remove(os.path.join(tmp, "benchmarks/results/h300_2026-01-03_raw.jsonl"))
        write(os.path.join(tmp, "benchmarks/results/z_bad.jsonl"), record("h100", "2026-01-03", cmd, seconds=1) +
              "\n" + json.dumps({"seconds": 1.0, "run": {"card": "h100"}}) + "\n")
        e = refusal(br, tmp, "a run object without date and command is refused")
        if e is not None:
            check("z_bad.jsonl:2" in e and "date, command" in e, "refusal names file, line, fields: %s" % e)
        write(os.path.join(tmp, "benchmarks/results/z_bad.jsonl"), "{not json\n")
        e = refusal(br, tmp, "a line that is not JSON is refused")
        if e is not None:
            check("z_bad.jsonl:1: not JSON" in e, "not-JSON refusal names the line: %s" % e)
        os.remove(os.path.join(tmp, "benchmarks/results/z_bad.jsonl"))
        write(os.path.join(tmp, "benchmarks/sections/30-no-heading.md"), "text without a heading\n")
        e = refusal(br, tmp, "a section without a heading is refused")
        if e is not None:
            check("30-no-heading.md" in e, "heading refusal names the file: %s" % e)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("test_bench_report: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
