#!/usr/bin/env python3
"""tools/bench_report.py on fixture data it writes itself: sections in
file-name order, the latest run of each command per card (the median of its
repeats), one table per card with the command beside each row, records of
one command told apart by their configuration, clear refusals of bad input,
and --check failing on a stale file.

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
        text = br.generate(tmp)
        a, b, c = text.find("## First topic"), text.find("## Second topic"), text.find("## A helper's section")
        check(0 < a < b < c, "sections in file-name order, every file included")
        check("- [First topic](#first-topic)" in text, "contents link to each section")
        t = text.find("## Latest results by card")
        check(t > c, "the card tables after the sections")
        h100 = text[text.find("### h100"):]
        check("| 2.000 (3 runs) | 0.500 | 0.500 |" in h100, "latest run's median wall time with its repeat's stages")
        check("9.000" not in h100 and "9.250" not in h100, "an older run of the same command is not shown")
        check("devices 1" in h100 and "devices 2" in h100 and "| 3.500 |" in h100 and "| 2.250 |" in h100,
              "records of one command with different devices stay apart")
        check("1. `%s` (commit abc1234, 2026-01-02T00:00Z)" % cmd in h100, "the command and commit of each row")
        cpu = text[text.find("### cpu-2core"):text.find("### h100")]
        check("40.000" in cpu and "Card: CPU-2CORE card." in cpu, "each card has its own table")
        check(br.generate(tmp) == text, "the output depends on the inputs only")

        # --check: equal passes, a stale file fails
        out = os.path.join(tmp, "BENCHMARKS.md")
        check(br.main(["--root", tmp]) == 0 and open(out).read() == text, "writes ROOT/BENCHMARKS.md")
        check(br.main(["--root", tmp, "--check", out]) == 0, "--check passes on the generated file")
        write(out, text.replace("Text one.", "Edited by hand."))
        check(br.main(["--root", tmp, "--check", out]) == 1, "--check fails on a hand-edited file")

        # raw bench output (no run object) is listed, not tabulated
        write(os.path.join(tmp, "benchmarks/results/h100_2026-01-03_raw.jsonl"), json.dumps({"seconds": 7.25}) + "\n")
        text = br.generate(tmp)
        check("`benchmarks/results/h100_2026-01-03_raw.jsonl`" in text and "7.250" not in text,
              "a raw file is named, its figures not tabulated")
        os.remove(os.path.join(tmp, "benchmarks/results/h100_2026-01-03_raw.jsonl"))
        # bad input is refused with the file and line
        write(os.path.join(tmp, "benchmarks/results/z_bad.jsonl"), record("h100", "2026-01-03", cmd, seconds=1) +
              "\n" + json.dumps({"seconds": 1.0, "run": {"card": "h100"}}) + "\n")
        try:
            br.generate(tmp)
            check(False, "a run object without date and command is refused")
        except br.InputError as e:
            check("z_bad.jsonl:2" in str(e) and "date, command" in str(e), "refusal names file, line, fields: %s" % e)
        write(os.path.join(tmp, "benchmarks/results/z_bad.jsonl"), "{not json\n")
        try:
            br.generate(tmp)
            check(False, "a line that is not JSON is refused")
        except br.InputError as e:
            check("z_bad.jsonl:1: not JSON" in str(e), "not-JSON refusal names the line: %s" % e)
        os.remove(os.path.join(tmp, "benchmarks/results/z_bad.jsonl"))
        write(os.path.join(tmp, "benchmarks/sections/30-no-heading.md"), "text without a heading\n")
        try:
            br.generate(tmp)
            check(False, "a section without a heading is refused")
        except br.InputError as e:
            check("30-no-heading.md" in str(e), "heading refusal names the file: %s" % e)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("test_bench_report: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
