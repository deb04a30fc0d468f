#!/usr/bin/env python3
"""benchmarks/run.py on a sweep it writes itself, with a stand-in bench
program (prints JSON lines from its arguments): every combination of data
and `vary` runs once, each record carries card, date, commit and the
command with $BUILD / $CACHE, data sets made by their command only when
missing, text programs logged, failures reported, bad sweeps refused.
Also expands every sweep of benchmarks/sweeps/ (--dry-run).

  python3 test_bench_run.py REPO_ROOT"""
import glob
import json
import os
import stat
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


FAKE = """#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
if "--fail" in args:
    sys.exit(3)
print("not json")
print(json.dumps({"dataset": args[args.index("--name") + 1], "method": args[args.index("--method") + 1],
                  "k": int(args[args.index("--k") + 1]), "seconds": 1.5}))
"""

SWEEP = """
[data.points]
path = "{cache}/points.txt"
[data.made]
path = "{cache}/made.txt"
command = "echo made >> {cache}/made.txt"

[[run]]
program = "fake_bench"
data = ["points", "made"]
args = "--data {data} --name {name} --method {method} --k {k}"
vary = { method = ["grid", "brute"], k = [8, 16] }
env = { FAKE_ENV = "x" }

[[run]]
program = "fake_bench"
data = ["points"]
args = "--name {name} --method grid --k 4"
output = "text"
"""


def run(root, *args, env=None):
    e = dict(os.environ, VIC_COMMIT="fixture1", **(env or {}))
    return subprocess.run([sys.executable, os.path.join(root, "benchmarks", "run.py")] + list(args),
                          capture_output=True, text=True, env=e)


def main():
    root = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        build, cache = os.path.join(tmp, "build"), os.path.join(tmp, "cache")
        os.makedirs(os.path.join(build, "bin"))
        os.makedirs(cache)
        fake = os.path.join(build, "bin", "fake_bench")
        with open(fake, "w") as f:
            f.write(FAKE)
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
        with open(os.path.join(cache, "points.txt"), "w") as f:
            f.write("0 0 0\n")
        sweep = os.path.join(tmp, "fixture.toml")
        with open(sweep, "w") as f:
            f.write(SWEEP)

        p = run(root, sweep, "--build", build, "--cache", cache, "--dry-run")
        lines = p.stdout.splitlines()
        check(p.returncode == 0 and len(lines) == 9, "dry run: 2 data x 2 methods x 2 k + 1 text run (%s)" % p.stdout)
        check("FAKE_ENV=x $BUILD/bin/fake_bench --data $CACHE/points.txt --name points --method brute --k 16" in lines,
              "the command with env, $BUILD and $CACHE")
        check(not os.path.exists(os.path.join(cache, "made.txt")), "a dry run makes no data")

        out = os.path.join(tmp, "out.jsonl")
        p = run(root, sweep, "--build", build, "--cache", cache, "--out", out, "--card", "fixturecard", "--tag", "t1")
        check(p.returncode == 0, "the sweep runs cleanly: " + p.stderr[-500:])
        recs = [json.loads(line) for line in open(out)]
        check(len(recs) == 9, "one record per JSON line printed, one per text run (%d)" % len(recs))
        r = recs[0]["run"] if recs else {}
        check(r.get("card") == "fixturecard" and r.get("commit") == "fixture1" and r.get("tag") == "t1"
              and r.get("date", "").endswith("Z") and r.get("sweep") == "fixture", "run metadata: %s" % r)
        check(recs and recs[0]["dataset"] == "points_t1", "--tag goes into the data name")
        check(open(os.path.join(cache, "made.txt")).read() == "made\n", "a made data set is made once")
        text = [x for x in recs if "log" in x]
        check(len(text) == 1 and text[0]["rc"] == 0 and os.path.isfile(os.path.join(tmp, "logs", text[0]["log"])),
              "a text program's record names its log")

        bad = os.path.join(tmp, "bad.toml")
        with open(bad, "w") as f:
            f.write('[[run]]\nprogram = "fake_bench"\ndata = ["nowhere"]\nargs = "--x"\n')
        p = run(root, bad, "--build", build, "--dry-run")
        check(p.returncode == 2 and "'nowhere' is not defined" in p.stderr, "unknown data set refused: " + p.stderr)
        with open(bad, "w") as f:
            f.write('[[run]]\nprogram = "fake_bench"\nargs = "--x {nope}"\n')
        p = run(root, bad, "--build", build, "--dry-run")
        check(p.returncode == 2 and "unknown placeholder {nope}" in p.stderr, "unknown placeholder refused: " + p.stderr)
        with open(bad, "w") as f:
            f.write('[[run]]\nprogram = "fake_bench"\nargs = "--fail"\n')
        p = run(root, bad, "--build", build, "--out", os.path.join(tmp, "fail.jsonl"), "--card", "c")
        check(p.returncode == 1 and "exited with 3" in p.stderr, "a failing program is reported: " + p.stderr)

        # runs for more GPUs than the machine has are skipped; a deadline stops the rest
        with open(bad, "w") as f:
            f.write('[[run]]\nprogram = "fake_bench"\nargs = "--name x --method m --k {d}"\nvary = { d = [1, 2] }\n'
                    'min_devices = "{d}"\n')
        out2 = os.path.join(tmp, "gpus.jsonl")
        p = run(root, bad, "--build", build, "--out", out2, "--card", "c", "--gpus", "1")
        recs = [json.loads(line) for line in open(out2)] if os.path.exists(out2) else []
        check(p.returncode == 0 and [r["k"] for r in recs] == [1] and "skipped (needs 2 GPUs, this machine has 1)"
              in p.stderr, "min_devices skips the 2-GPU run on one GPU: " + p.stderr)
        p = run(root, bad, "--build", build, "--dry-run")
        check("--k 2  # on 2 GPUs or more" in p.stdout, "the dry run marks runs for several GPUs: " + p.stdout)
        p = run(root, bad, "--build", build, "--out", os.path.join(tmp, "late.jsonl"), "--card", "c", "--gpus", "2",
                "--deadline", "1000")
        check(p.returncode == 1 and p.stderr.count("skipped (deadline") == 2
             , "a passed deadline runs nothing: " + p.stderr)

        # every sweep of the repository expands
        sweeps = sorted(glob.glob(os.path.join(root, "benchmarks", "sweeps", "*.toml")))
        p = run(root, *sweeps, "--build", build, "--dry-run")
        check(p.returncode == 0 and len(p.stdout.splitlines()) >= len(sweeps) > 0,
              "every sweep of benchmarks/sweeps expands: " + p.stderr)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("test_bench_run: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
