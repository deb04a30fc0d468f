"""The Python module `vicinity`, as installed, from python3 or pvpython:
its ctypes layouts against the C compiler's, kNN lists against scipy's
cKDTree on halo-like data (and on the real halo when the data folder has
it), densities, peaks, the index with save/load, errors, zero-copy
arrays, the GIL released, Ctrl-C.
usage: test_python_module.py ABI_OFFSETS_PROGRAM [DATA_DIR]"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from scipy.spatial import cKDTree

import vicinity
from vicinity import _abi, _arrays, _call

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def halo_like(n, seed):
    """A Plummer sphere with a denser subhalo and a uniform background."""
    rng = np.random.default_rng(seed)
    def plummer(m, a, centre):
        r = a / np.sqrt(rng.uniform(0.01, 0.99, m) ** (-2.0 / 3.0) - 1.0)
        v = rng.normal(size=(m, 3))
        return centre + v / np.linalg.norm(v, axis=1)[:, None] * r[:, None]
    main = plummer(int(n * 0.8), 1.0, np.zeros(3))
    sub = plummer(int(n * 0.15), 0.1, np.array([2.0, 0.5, 0.0]))
    bg = rng.uniform(-5, 5, (n - len(main) - len(sub), 3))
    return np.concatenate([main, sub, bg]).astype(np.float32)


def ckdtree_lists(x, k):
    """k nearest other points by cKDTree (self removed by id)."""
    _, idx = cKDTree(x.astype(np.float64)).query(x.astype(np.float64), k=k + 1)
    out = np.empty((len(x), k), np.int64)
    for i in range(len(x)):
        row = idx[i][idx[i] != i]
        out[i] = row[:k]
    return out


def rows_beyond_ties(x, ids, ref):
    """Rows whose lists differ other than by the order/choice among equal distances."""
    bad = np.nonzero((ids != ref).any(axis=1))[0]
    x64 = x.astype(np.float64)
    out = []
    for i in bad:
        a = np.sort(np.linalg.norm(x64[ids[i]] - x64[i], axis=1))
        b = np.sort(np.linalg.norm(x64[ref[i]] - x64[i], axis=1))
        if not np.allclose(a, b, rtol=1e-5, atol=1e-7):
            out.append(int(i))
    return out


def test_layouts(offsets_program):
    c = json.loads(subprocess.check_output([offsets_program]).decode())
    mirrors = {"vic_ctx_options": _abi.CtxOptions, "vic_build_options": _abi.BuildOptions,
               "vic_search_options": _abi.SearchOptions, "vic_density_options": _abi.DensityOptions,
               "vic_peak_options": _abi.PeakOptions, "vic_data": _abi.Data, "vic_report": _abi.Report,
               "vic_knn": _abi.Knn, "vic_peaks": _abi.Peaks, "vic_shard_options": _abi.ShardOptions}
    import ctypes
    for cname, cls in mirrors.items():
        whole = cname in ("vic_report", "vic_knn", "vic_peaks", "vic_data")
        size = ctypes.sizeof(cls)
        check(size == c[cname] if whole else size <= c[cname], "%s: ctypes size %d, C %d" % (cname, size, c[cname]))
        for key, off in c.items():
            if key.startswith(cname + ".") and hasattr(cls, key.split(".")[1]):
                field = key.split(".")[1]
                check(getattr(cls, field).offset == off, "%s offset %d (C %d)" % (key, getattr(cls, field).offset, off))
    # the build options prefix ends exactly where the next C field begins
    check(ctypes.sizeof(_abi.BuildOptions) == c["vic_build_options.nndescent"], "build options prefix ends at a field")


def test_knn(data_dir):
    x = halo_like(30000, 1)
    k = 16
    ids, dist, rep = vicinity.knn(x, k, backend="cpu")
    check(ids.shape == (len(x), k) and ids.dtype == np.int64 and dist.dtype == np.float32, "knn shapes and types")
    check(isinstance(ids.base, _arrays._Buffer), "ids wrap the library's buffer (no copy)")
    check(rep["method"] == "grid" and rep["backend"] == "cpu" and rep["k"] == k, "report: %s" % rep["reason"])
    ref = ckdtree_lists(x, k)
    bad = rows_beyond_ties(x, ids, ref)
    check(not bad, "synthetic halo: lists equal cKDTree's (ties aside); %d rows identical of %d, differing %s" % (
        int((ids == ref).all(axis=1).sum()), len(x), bad[:5]))
    d_ref = np.linalg.norm(x[ids[:, -1]].astype(np.float64) - x.astype(np.float64), axis=1)
    check(np.allclose(dist[:, -1], d_ref, rtol=1e-5, atol=1e-7), "distances are those of the listed points")
    # brute force and an in-place strided view (every 2nd column of a wider array)
    wide = np.zeros((4000, 6), np.float32)
    wide[:, ::2] = x[:4000]
    view = wide[:, ::2]
    packed = np.ascontiguousarray(wide[:, :3])
    xv, _ = _arrays.data_view(packed)
    check(xv.rows == packed.ctypes.data and xv.stride == 3, "contiguous float32 rows are read in place")
    xs, _ = _arrays.data_view(wide[:, 0:3])
    check(xs.rows == wide.ctypes.data and xs.stride == 6, "a column slice is read in place with its row stride")
    ib, _, rb = vicinity.knn(view, 8, method="brute", backend="cpu")
    check(rb["method"] == "brute" and not rows_beyond_ties(x[:4000], ib, ckdtree_lists(x[:4000], 8)),
          "brute force on a strided copy equals cKDTree")
    # approximate: NN-Descent in 8-d with its measured recall
    y = np.random.default_rng(2).normal(size=(6000, 8)).astype(np.float32)
    ia, _, ra = vicinity.knn(y, 10, method="nndescent", backend="cpu")
    ry = ckdtree_lists(y, 10)
    recall = np.mean([len(np.intersect1d(ia[i], ry[i])) / 10 for i in range(len(y))])
    check(recall > 0.9 and ra["recall_estimate"] > 0.9, "nndescent recall %.3f (library's estimate %.3f)" % (
        recall, ra["recall_estimate"]))
    halo = os.path.join(data_dir or "", "nbody", "halo_low_res.npy")
    if data_dir and os.path.exists(halo):
        h = np.load(halo).astype(np.float32)
        ih, _, _ = vicinity.knn(h, k)
        bad = rows_beyond_ties(h, ih, ckdtree_lists(h, k))
        check(not bad, "real halo (%d particles): lists equal cKDTree's, ties aside" % len(h))
    else:
        print("skip real halo (no %s)" % halo)


def test_density_peaks():
    x = halo_like(20000, 3)
    k = 32
    rho, sph, hsml, rep = vicinity.density(x, k, backend="cpu")
    d, _ = cKDTree(x.astype(np.float64)).query(x.astype(np.float64), k=k + 1)
    want = (k - 1) / (4.0 / 3.0 * np.pi * d[:, k] ** 3)
    check(np.allclose(rho, want, rtol=1e-4), "kNN density is (k-1)/(V r_k^3) with cKDTree's r_k")
    check(np.allclose(hsml, d[:, k] / 2, rtol=1e-5), "pynbody smoothing length is r_k/2")
    check((sph > 0).all() and np.isfinite(sph).all(), "SPH densities positive")
    p = vicinity.peaks(x, k, backend="cpu")
    check(p.n_peaks >= 2, "peaks: %d (main halo and subhalo at least)" % p.n_peaks)
    centres = p.peak_centre[:2]
    near_main = np.linalg.norm(centres, axis=1).min() < 0.3
    near_sub = np.linalg.norm(centres - [2.0, 0.5, 0.0], axis=1).min() < 0.3
    check(near_main and near_sub, "the two strongest peaks sit on the halo and the subhalo: %s" % centres.tolist())
    check(p.parent[np.argmax(p.density)] == -1 and p.peak_id.max() < p.n_peaks, "parents and peak ids consistent")
    check(np.allclose(p.density, rho, rtol=1e-5), "peaks' densities equal density()'s")


def test_index():
    x = halo_like(10000, 4)
    q = halo_like(500, 5)
    ix = vicinity.Index(x, k=16)
    ids, dist, rep = ix.search(q, 10)
    ie, de, _ = vicinity.query(x, q, 10)
    check((ids == ie).mean() > 0.99, "index search equals exact query (%.4f)" % (ids == ie).mean())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "halo.vix")
        ix.save(path)
        back = vicinity.Index.load(path, x)
        check((back.search(q, 10)[0] == ids).all(), "a saved and loaded index answers the same")
        check(back.report["method"] == ix.report["method"], "the loaded index keeps its build report")
        try:
            vicinity.Index.load(path, x[:-1])
            check(False, "loading over other points is refused")
        except vicinity.Error as e:
            check(True, "loading over other points is refused: %s" % e)


def test_errors():
    x = halo_like(1000, 6)
    try:
        vicinity.knn(x, 0)
        check(False, "k = 0 refused")
    except vicinity.ArgumentError as e:
        check("k must be at least 1" in str(e) and isinstance(e, ValueError), "k = 0: %s" % e)
    y = x.copy()
    y[7, 1] = np.nan
    try:
        vicinity.knn(y, 4)
        check(False, "NaN refused")
    except vicinity.Error as e:
        check("row 7" in str(e) and e.status == "non-finite value", "NaN: %s" % e)
    try:
        vicinity.knn(x, 4, method="ggnn", backend="cpu")
        check(False, "GPU-only method on the CPU refused")
    except vicinity.Error as e:
        check("GPU" in str(e), "ggnn on the CPU: %s" % e)
    try:
        vicinity.knn(x, 4, method="nonsense")
        check(False, "unknown method refused")
    except ValueError as e:
        check("nonsense" in str(e), "unknown method: %s" % e)


def test_gil():
    """Another Python thread runs while the library works."""
    x = np.random.default_rng(8).normal(size=(20000, 16)).astype(np.float32)
    done = threading.Event()
    t = threading.Thread(target=lambda: (vicinity.knn(x, 16, method="nndescent", backend="cpu"), done.set()))
    t0 = time.perf_counter()
    t.start()
    ticks = 0
    while not done.is_set() and time.perf_counter() - t0 < 120:
        ticks += 1
        time.sleep(0.001)
    t.join()
    took = time.perf_counter() - t0
    check(done.is_set() and ticks > 0.2 * took / 0.0011, "the main thread ran %d times during a %.2f s call" % (
        ticks, took))


def test_ctrl_c_waits_for_the_call():
    # Ctrl-C cancels, then waits for the library to stop: KeyboardInterrupt
    # leaves call() only after the call returned.  (Python 3.11's
    # Thread.join, interrupted, can report a running thread as stopped; a
    # caller trusting it went on -- even exited -- while the library still
    # ran and called back into Python.)
    ctx = _call.Context("cpu")
    finished = []

    def slow_call(handle):  # a call that takes its time to notice the cancel
        time.sleep(1.0)
        finished.append(time.perf_counter())
        return _call.OK

    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    raised = None
    try:
        timer.start()
        ctx.call(slow_call)
    except KeyboardInterrupt:
        raised = time.perf_counter()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
        ctx.close()
    check(raised is not None and finished and finished[0] <= raised,
          "Ctrl-C: KeyboardInterrupt %s, the call %s" % ("raised" if raised else "not raised",
                                                      "had returned" if finished and raised and finished[0] <= raised
                                                      else "was still running"))


CHILD = """
import sys, numpy as np, vicinity
x = np.random.default_rng(9).normal(size=(300000, 32)).astype(np.float32)
print("started", flush=True)
try:
    vicinity.knn(x, 32, method="brute", backend="cpu")
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
"""


def test_ctrl_c():
    # pvpython's sys.executable is not runnable: the test passes its interpreter
    python = os.environ.get("VIC_TEST_PYTHON") or sys.executable
    script = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    script.write(CHILD)
    script.close()
    p = subprocess.Popen([python, script.name], stdout=subprocess.PIPE, env=os.environ)
    line = p.stdout.readline().decode().strip()
    time.sleep(1.5)
    running = p.poll() is None
    t0 = time.perf_counter()
    p.send_signal(signal.SIGINT)
    out = p.stdout.read().decode()
    rc = p.wait(timeout=60)
    took = time.perf_counter() - t0
    os.unlink(script.name)
    check(line == "started" and running and rc == 3 and "interrupted" in out and took < 15,
          "Ctrl-C during a brute force: KeyboardInterrupt after %.2f s (rc %d, %r)" % (took, rc, out.strip()))


def main():
    print("vicinity %s from %s, library %s; %s" % (vicinity.version(), vicinity.__file__,
                                                   vicinity.library_version(), sys.version.split()[0]))
    test_layouts(sys.argv[1])
    test_knn(sys.argv[2] if len(sys.argv) > 2 else None)
    test_density_peaks()
    test_index()
    test_errors()
    test_gil()
    test_ctrl_c()
    test_ctrl_c_waits_for_the_call()
    if failures:
        print("%d FAILED" % len(failures))
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
