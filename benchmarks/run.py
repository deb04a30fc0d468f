#!/usr/bin/env python3
"""Runs benchmark sweeps and writes their records as JSON lines.

  benchmarks/run.py SWEEP.toml [SWEEP.toml...] --build BUILD --out FILE.jsonl
                    [--cache DIR] [--logs DIR] [--card NAME] [--tag TAG]
                    [--only NAME] [--timeout S] [--deadline EPOCH] [--gpus N]
                  [--dry-run | --data-only]

A sweep file (benchmarks/sweeps/*.toml) names data sets and runs:

  [data.uniform3_10M]            # made by make_synthetic.py when missing
  set = "uniform3"; n = 10000000; seed = 0; format = "npy"   # d = ... optional
  [data.halo]                    # an existing file
  path = "{shared}/data/nbody/halo_low_res.npy"
  [data.manifold_1M_truth]       # made by a command (skipped when `creates` exists)
  path = "{cache}/m"; creates = "{cache}/m/truth.i32"; command = "..."

  [[run]]
  program = "vicinity_bench"     # BUILD/bin/PROGRAM, or a *.py of testing/bench or testing/gpu
  data = ["uniform3_10M"]
  args = "--data {data} --name {name} --method {method} --k {k} --backend cuda"
  vary = { method = ["grid", "brute"], k = [16, 32] }   # every combination
  env = { OMP_NUM_THREADS = "16" }                      # optional
  output = "json"                # "json" (default): the program prints JSON lines;
                                 # "text": its output goes to a log, one record notes it
  interpreter = "pvpython"       # for *.py programs (default: run.py's own python)
  timeout = 300
  min_devices = "{devices}"      # optional: skipped (and said so) on a machine with fewer GPUs

Placeholders in args, env, path and command: {data} (the data set's path),
{name} (its key, with "_TAG" under --tag), {build}, {cache}, {src}, {shared},
{gen} (make_synthetic.py), {python} (the interpreter running run.py, the
default one of *.py programs), {logs} and every key of `vary`.

Every record gets a "run" object: card (e.g. h100, h200x2, cpu-2core),
card_name, date (UTC, when the command started), commit (VIC_COMMIT or git),
sweep, program, dataset, tag and command -- the command as run, with the
build and cache folders written $BUILD and $CACHE (their paths are in the
object too).  tools/bench_report.py turns such files, kept in
benchmarks/results/, into BENCHMARKS.md's figures and the history's tables.

--deadline (seconds since the epoch, e.g. run_device.sh's) shortens each
command's timeout to what is left and skips the commands that would get
less than 10 s, so a call that runs out of time keeps what finished."""
import argparse
import datetime
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT_DIRS = [os.path.join(SRC, "testing", "bench"), os.path.join(SRC, "testing", "gpu")]


class SweepError(Exception):
    pass


def gpu_names():
    """The GPUs nvidia-smi lists (name, memory), none without one."""
    try:
        names = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
    except (OSError, subprocess.TimeoutExpired):
        names = []
    return [n.strip() for n in names if n.strip()]


def card(names):
    """(slug, description) of this machine's GPUs, or of its CPU without one."""
    if names:
        m = re.search(r"\b([A-Z]+\d+[A-Za-z]*)\b", names[0].split(",")[0].replace("NVIDIA", ""))
        slug = (m.group(1) if m else "gpu").lower()
        if len(names) > 1:
            slug += "x%d" % len(names)
        desc = ("%d x %s" % (len(names), names[0])) if len(names) > 1 else names[0]
        return slug, "%s, %d-core host" % (desc, os.cpu_count() or 0)
    model = "CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    cores = os.cpu_count() or 0
    return "cpu-%dcore" % cores, "%s, %d cores, no GPU" % (model, cores)


def commit():
    if os.environ.get("VIC_COMMIT"):
        return os.environ["VIC_COMMIT"]
    try:
        head = subprocess.run(["git", "-C", SRC, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", SRC, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        return (head + ("+changes" if dirty else "")) if head else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def fill(template, values, where):
    try:
        return str(template).format(**values)
    except KeyError as e:
        raise SweepError("%s: unknown placeholder {%s} in %r" % (where, e.args[0], template))


def synthetic_path(spec, cache):
    d = "_d%d" % spec["d"] if "d" in spec else ""
    return os.path.join(cache, "%s_%d%s_seed%d.%s" % (spec["set"], spec["n"], d, spec.get("seed", 0),
                                                       spec.get("format", "npy")))


def load_sweep(path):
    try:
        with open(path, "rb") as f:
            sweep = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SweepError("%s: %s" % (path, e))
    name = os.path.splitext(os.path.basename(path))[0]
    data = sweep.get("data", {})
    runs = sweep.get("run", [])
    if not runs:
        raise SweepError("%s: no [[run]] entries" % path)
    for i, r in enumerate(runs, 1):
        where = "%s: run %d" % (path, i)
        if "program" not in r or "args" not in r:
            raise SweepError("%s: needs program and args" % where)
        for key in r.get("data", []):
            if key not in data:
                raise SweepError("%s: data set %r is not defined under [data]" % (where, key))
        if r.get("output", "json") not in ("json", "text"):
            raise SweepError("%s: output must be \"json\" or \"text\"" % where)
        for key, values in r.get("vary", {}).items():
            if not isinstance(values, list) or not values:
                raise SweepError("%s: vary.%s must be a non-empty list" % (where, key))
        if not isinstance(r.get("min_devices", 0), (int, str)):
            raise SweepError("%s: min_devices must be a number or a placeholder such as \"{devices}\"" % where)
    for key, spec in data.items():
        if not ("set" in spec and "n" in spec) and "path" not in spec:
            raise SweepError("%s: data set %r needs set and n (make_synthetic.py) or a path" % (path, key))
    return name, data, runs


def expand(path, base):
    """The commands of one sweep file: dicts with program, argv, env, data keys."""
    name, data, runs = load_sweep(path)
    jobs = []
    for i, r in enumerate(runs, 1):
        where = "%s: run %d" % (path, i)
        vary = r.get("vary", {})
        keys = sorted(vary)
        for dkey in r.get("data", [None]):
            for combo in itertools.product(*(vary[k] for k in keys)):
                values = dict(base)
                values.update(zip(keys, combo))
                if dkey is not None:
                    spec = data[dkey]
                    values["data"] = (fill(spec["path"], values, where) if "path" in spec
                                      else synthetic_path(spec, base["cache"]))
                    values["name"] = dkey + ("_" + base["tag"] if base["tag"] else "")
                prog = r["program"]
                if prog.endswith(".py"):
                    script = next((os.path.join(d, prog) for d in SCRIPT_DIRS if os.path.isfile(os.path.join(d, prog))),
                                  os.path.join(SCRIPT_DIRS[0], prog))
                    argv = [r.get("interpreter", base["python"]), script]
                else:
                    argv = [os.path.join(base["build"], "bin", prog)]
                argv += shlex.split(fill(r["args"], values, where))
                env = {k: fill(v, values, where) for k, v in r.get("env", {}).items()}
                try:
                    min_devices = int(fill(r.get("min_devices", 0), values, where))
                except ValueError:
                    raise SweepError("%s: min_devices %r is not a number" % (where, r["min_devices"]))
                jobs.append({"sweep": name, "program": prog, "argv": argv, "env": env, "data": dkey,
                             "spec": data.get(dkey), "values": values, "output": r.get("output", "json"),
                             "timeout": r.get("timeout"), "min_devices": min_devices})
    return jobs


def shown(job, base):
    """The command as recorded: env prefix, build and cache folders as $BUILD and $CACHE, the source tree relative."""
    words = ["%s=%s" % kv for kv in sorted(job["env"].items())] + job["argv"]
    text = " ".join(shlex.quote(w) for w in words)
    for path, var in ((base["build"], "$BUILD"), (base["cache"], "$CACHE"), (SRC + os.sep, "")):
        text = text.replace(path, var)
    return text


def make_data(job, base, log):
    spec = job["spec"]
    if spec is None:
        return True
    path = job["values"]["data"]
    if "command" in spec:
        creates = fill(spec.get("creates", spec["path"]), job["values"], "data")
        if os.path.exists(creates):
            return True
        cmd = fill(spec["command"], job["values"], "data " + job["data"])
    elif "set" in spec:
        if os.path.exists(path):
            return True
        cmd = "%s %s %s %d %s --seed %d --format %s" % (
            shlex.quote(sys.executable), shlex.quote(base["gen"]), spec["set"], spec["n"], shlex.quote(path),
            spec.get("seed", 0), spec.get("format", "npy"))
        if "d" in spec:
            cmd += " --d %d" % spec["d"]
    else:
        if not os.path.exists(path):
            print("run.py: data set %s: %s does not exist" % (job["data"], path), file=sys.stderr)
            return False
        return True
    print("run.py: making %s: %s" % (job["data"], cmd), file=sys.stderr)
    rc = subprocess.run(cmd, shell=True, cwd=SRC, stdout=log, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        print("run.py: making %s failed (rc %d)" % (job["data"], rc), file=sys.stderr)
    return rc == 0


def run_job(job, base, meta, out, timeout):
    """True when the command ran cleanly or was skipped on purpose (too few
    GPUs); False when it failed, timed out or the deadline left no time."""
    if job["min_devices"] > meta["gpus"]:  # 0 (the default): no GPU needed to try
        print("run.py: skipped (needs %d GPUs, this machine has %d): %s" % (job["min_devices"], meta["gpus"],
                                                                          shown(job, base)), file=sys.stderr)
        return True
    timeout = job["timeout"] or timeout
    if meta["deadline"]:
        left = meta["deadline"] - time.time()
        if left < 10:
            print("run.py: skipped (deadline, %.0f s left): %s" % (left, shown(job, base)), file=sys.stderr)
            return False
        timeout = min(timeout, left)
    os.makedirs(base["logs"], exist_ok=True)
    stem = re.sub(r"[^\w.-]+", "_", "%s_%s_%d" % (job["sweep"], job["program"], meta["index"]))
    log_path = os.path.join(base["logs"], stem + ".log")
    with open(log_path, "w") as log:
        if not make_data(job, base, log):
            return False
        env = dict(os.environ, **job["env"])
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        print("run.py: %s" % shown(job, base), file=sys.stderr)
        t0 = time.monotonic()
        try:
            p = subprocess.run(job["argv"], cwd=SRC, env=env, stdout=subprocess.PIPE, stderr=log, text=True,
                               timeout=timeout)
            rc, stdout = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, stdout = 124, (e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout) or ""
        except OSError as e:
            rc, stdout = 127, ""
            log.write("run.py: cannot start %s: %s\n" % (job["argv"][0], e))
        wall = time.monotonic() - t0
        log.write(stdout)
    run = {"card": meta["card"], "card_name": meta["card_name"], "date": date, "commit": meta["commit"],
           "sweep": job["sweep"], "program": job["program"], "dataset": job["data"], "command": shown(job, base),
           "build": base["build"], "cache": base["cache"]}
    if base["tag"]:
        run["tag"] = base["tag"]
    records = []
    if job["output"] == "json":
        for line in stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(r, dict):
                    records.append(r)
    else:
        records.append({"tool": job["program"], "dataset": job["data"], "seconds": round(wall, 3), "rc": rc,
                        "log": os.path.basename(log_path)})
    for r in records:
        r["run"] = run
        out.write(json.dumps(r) + "\n")
    out.flush()
    if rc != 0:
        print("run.py: %s exited with %d (log: %s)" % (job["program"], rc, log_path), file=sys.stderr)
    elif job["output"] == "json" and not records:
        print("run.py: %s printed no JSON record (log: %s)" % (job["program"], log_path), file=sys.stderr)
        return False
    return rc == 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sweeps", nargs="+", help="sweep files (benchmarks/sweeps/*.toml)")
    p.add_argument("--build", required=True, help="the CMake build folder (programs in BUILD/bin)")
    p.add_argument("--out", help="append the JSON lines here (required unless --dry-run)")
    p.add_argument("--cache", help="data sets and exact lists (default BUILD/bench-cache)")
    p.add_argument("--logs", help="each command's output (default OUT's folder/logs)")
    p.add_argument("--shared", default=os.environ.get("VICINITY_SHARED", os.path.join(os.path.dirname(SRC), "shared")),
                   help="the shared folder (data/, tools/make_synthetic.py; or a carried folder holding "
                        "make_synthetic.py and data/)")
    p.add_argument("--card", help="the card's short name (default: from nvidia-smi, or cpu-Ncore)")
    p.add_argument("--tag", default="", help="a label for this build (e.g. base), added to the data names")
    p.add_argument("--only", action="append", default=[], help="only runs of this program (repeatable)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per command unless the sweep says")
    p.add_argument("--deadline", type=float, default=0,
                   help="seconds since the epoch: no command runs past it (each gets what is left)")
    p.add_argument("--gpus", type=int, help="GPUs of this machine, for min_devices (default: nvidia-smi's count)")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    p.add_argument("--data-only", action="store_true",
                   help="make the data sets the commands need, run nothing (e.g. while the code builds)")
    a = p.parse_args(argv)
    build = os.path.abspath(a.build)
    cache = os.path.abspath(a.cache or os.path.join(build, "bench-cache"))
    gen = next((g for g in (os.path.join(a.shared, "tools", "make_synthetic.py"),
                            os.path.join(a.shared, "make_synthetic.py"),
                            os.path.join(SRC, ".gpu_carry", "make_synthetic.py")) if os.path.isfile(g)),
               os.path.join(a.shared, "tools", "make_synthetic.py"))
    base = {"build": build, "cache": cache, "src": SRC, "shared": os.path.abspath(a.shared), "gen": gen,
            "python": sys.executable,
            "tag": a.tag, "logs": os.path.abspath(a.logs or os.path.join(os.path.dirname(os.path.abspath(
                a.out or ".")), "logs"))}
    try:
        jobs = [j for s in a.sweeps for j in expand(s, base) if not a.only or j["program"] in a.only]
    except SweepError as e:
        print("run.py: " + str(e), file=sys.stderr)
        return 2
    if a.dry_run:
        for j in jobs:
            print(shown(j, base) + ("  # on %d GPUs or more" % j["min_devices"] if j["min_devices"] > 1 else ""))
        return 0
    os.makedirs(cache, exist_ok=True)
    if a.data_only:
        made, ok = set(), True
        os.makedirs(base["logs"], exist_ok=True)
        with open(os.path.join(base["logs"], "data.log"), "a") as log:
            for j in jobs:
                if j["data"] not in made:
                    made.add(j["data"])
                    ok &= make_data(j, base, log)
        return 0 if ok else 1
    if not a.out:
        print("run.py: --out FILE is required (or --dry-run, --data-only)", file=sys.stderr)
        return 2
    names = gpu_names()
    slug, desc = card(names)
    meta = {"card": a.card or slug, "card_name": desc, "commit": commit(), "deadline": a.deadline,
            "gpus": len(names) if a.gpus is None else a.gpus}
    failed = 0
    with open(a.out, "a") as out:
        for i, j in enumerate(jobs, 1):
            meta["index"] = i
            failed += not run_job(j, base, meta, out, a.timeout)
    print("run.py: %d of %d commands ran cleanly; records in %s" % (len(jobs) - failed, len(jobs), a.out),
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
