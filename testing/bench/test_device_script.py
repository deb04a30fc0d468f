#!/usr/bin/env python3
"""testing/gpu/run_device.sh's checks, on a machine without a GPU or with a
stand-in nvidia-smi: a call with an unknown stage, a missing sweep, GPU
stages and no GPU, no programs and no build stage, or a link stage without
its build stops before anything runs (exit 2, the reason in summary.txt);
a dry run of every sweep of benchmarks/sweeps/ lists their commands and
runs none.

  python3 test_device_script.py REPO_ROOT"""
import glob
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


def main():
    root = os.path.abspath(sys.argv[1])
    script = os.path.join(root, "testing", "gpu", "run_device.sh")
    sweeps = sorted(os.path.splitext(os.path.basename(p))[0]
                    for p in glob.glob(os.path.join(root, "benchmarks", "sweeps", "*.toml")))
    with tempfile.TemporaryDirectory() as tmp:
        smi = os.path.join(tmp, "nvidia-smi")
        with open(smi, "w") as f:
            f.write("#!/bin/sh\necho 'GPU 0: Stand-in card (UUID: GPU-0)'\n")
        os.chmod(smi, os.stat(smi).st_mode | stat.S_IEXEC)
        none = os.path.join(tmp, "no-nvidia-smi")
        build = os.path.join(tmp, "empty-build")
        os.makedirs(build)

        def call(name, stages, **env):
            out = os.path.join(tmp, name)
            e = dict(os.environ, BUILD=build, CACHE=os.path.join(tmp, "cache"), DEVICE_SECONDS="60",
                     VD_NVIDIA_SMI=smi)
            e.pop("TESTS", None)
            e.pop("SWEEPS", None)
            e.update(env)
            p = subprocess.run(["bash", script, out] + stages, capture_output=True, text=True, env=e, timeout=120)
            summary = open(os.path.join(out, "summary.txt")).read() if os.path.exists(
                os.path.join(out, "summary.txt")) else ""
            return p.returncode, summary, out

        rc, s, _ = call("unknown", ["build", "tset"])
        check(rc == 2 and "unknown stage(s): tset" in s, "an unknown stage stops the call: %d %s" % (rc, s))
        rc, s, _ = call("nosweep", ["build", "sweeps"], SWEEPS="gpu-exact no-such-sweep")
        check(rc == 2 and "no-such-sweep.toml" in s, "a missing sweep stops the call: %d %s" % (rc, s))
        rc, s, _ = call("nogpu", ["build", "tests", "sweeps"], VD_NVIDIA_SMI=none)
        check(rc == 2 and "no GPU here" in s and "tests sweeps" in s, "GPU stages without a GPU stop: %d %s" % (rc, s))
        rc, s, _ = call("noprog", ["tests"])
        check(rc == 2 and "no programs in" in s, "no programs and no build stage stop the call: %d %s" % (rc, s))
        rc, s, _ = call("nolink", ["link"], LINK_FROM=tmp)
        check(rc == 2 and "LINK_FROM" in s, "the link stage needs a build: %d %s" % (rc, s))
        rc, s, _ = call("nobase", ["build", "sweeps"], BASE_BUILD=os.path.join(tmp, "no-base"))
        check(rc == 2 and "no programs in the base" in s, "a base without programs stops the call: %d %s" % (rc, s))
        for name in ("unknown", "nosweep", "nogpu", "noprog", "nolink", "nobase"):
            left = sorted(os.listdir(os.path.join(tmp, name)))
            check(left == ["logs.tar.gz", "summary.txt"], "%s: nothing but the summary and logs (%s)" % (name, left))
        check(not os.listdir(build) and not os.path.exists(os.path.join(tmp, "cache")),
              "a stopped call builds nothing and makes no data")

        rc, s, _ = call("dry", ["build", "tests", "memcheck", "sweeps"], VD_DRY_RUN="1", SWEEPS=" ".join(sweeps),
                        TESTS="gpu_slabs")
        check(rc == 0 and "== dry run:" in s and 'TESTS="gpu_slabs"' in s, "a dry run of every sweep: %d %s" % (rc, s[-800:]))
        check(s.count("$BUILD/bin/") + s.count(".py") >= len(sweeps), "the dry run lists the sweeps' commands")
        check("on 2 GPUs or more" in s, "commands for several GPUs are marked")
        check(not os.listdir(build) and not os.path.exists(os.path.join(tmp, "cache")), "a dry run runs nothing")
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("test_device_script: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
