"""Shared by peers.py and vtk_peer.py: loading the data files the C bench
reads, the exact-list cache, recall with the same definition as
bench_truth.c, and the JSON line every tool prints."""
import datetime
import gzip
import json
import os
import resource
import struct
import time

import numpy as np


def load(path, limit=0):
    """n x d float32 rows from .npy, .fvecs, IDX (.gz ok) or .csv."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        head = f.read(4)
    if path.endswith(".npy"):
        x = np.load(path)
    elif path.endswith(".fvecs"):
        raw = np.fromfile(path, dtype=np.int32)
        d = int(raw[0])
        x = raw.reshape(-1, d + 1)[:, 1:].view(np.float32)
    elif head[:2] == b"\0\0" and head[2] == 8:
        with opener(path, "rb") as f:
            buf = f.read()
        nd = head[3]
        dims = struct.unpack(">%di" % nd, buf[4:4 + 4 * nd])
        x = np.frombuffer(buf, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims[0], -1)
    elif path.endswith(".csv") or path.endswith(".txt"):
        x = np.loadtxt(path, delimiter=",", ndmin=2)
    else:
        raise SystemExit("%s: unsupported format for the peers (.npy, .fvecs, IDX, .csv)" % path)
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim == 1:
        x = x[:, None]
    return x[:limit] if limit else x


def load_ivecs(path):
    raw = np.fromfile(path, dtype=np.int32)
    d = int(raw[0])
    return raw.reshape(-1, d + 1)[:, 1:]


def save_ivecs(path, ids):
    n, k = ids.shape
    out = np.empty((n, k + 1), dtype=np.int32)
    out[:, 0] = k
    out[:, 1:] = ids
    out.tofile(path)


def drop_self(ids):
    """Lists of k+1 that may hold the query itself -> lists of k without it
    (the last entry goes where the point is absent, e.g. among duplicates)."""
    n, k1 = ids.shape
    is_self = ids == np.arange(n)[:, None]
    no_self = ~is_self.any(axis=1)
    is_self[no_self, k1 - 1] = True
    first = is_self.cumsum(axis=1) == 1  # drop only one entry per row
    is_self &= first
    return ids[~is_self].reshape(n, k1 - 1)


def row_distances(x, i_rows, ids):
    """Euclidean distances of x[i_rows] to x[ids] (ids: m x k), in float64."""
    a = x[i_rows].astype(np.float64)
    b = x[ids].astype(np.float64)
    return np.sqrt(((b - a[:, None, :]) ** 2).sum(axis=2))


def recall(x, ids, truth):
    """Recall@k over all points: an approximate neighbour counts when the
    exact list has it or when it is no farther than the exact k-th
    neighbour (ties are interchangeable), as bench_recall in C."""
    n, k = ids.shape
    truth = truth[:, :k]
    hit = 0
    chunk = max(1, 4000000 // (k * x.shape[1]))  # bounds the float64 gathers to ~32 MB
    for s in range(0, n, chunk):
        e = slice(s, min(n, s + chunk))
        rows = np.arange(e.start, e.stop)
        a, t = ids[e], truth[e]
        inset = (a[:, :, None] == t[:, None, :]).any(axis=2)
        kth = row_distances(x, rows, t[:, k - 1:k])[:, 0]
        close = row_distances(x, rows, np.where(a < 0, 0, a)) <= kth[:, None] * (1 + 1e-5) + 1e-12
        found = ((inset | close) & (a >= 0)).sum(axis=1)
        hit += np.minimum(found, k).sum()
    return float(hit) / float(n * k)


def machine():
    model, cpus = "unknown CPU", 0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("processor"):
                    cpus += 1
                if line.startswith("model name") and model == "unknown CPU":
                    model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "%s (%d cores)" % (model, cpus or os.cpu_count())


def peak_rss_mb():
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def emit(dataset, x, k, method, threads, seconds, stages, rec, tool, peak_mb, cpu_seconds, **extra):
    """One JSON line; peak_mb is taken right after the timed run, before the
    recall check allocates its own buffers."""
    line = {
        "dataset": dataset, "n": int(x.shape[0]), "d": int(x.shape[1]), "k": int(k),
        "method": method, "backend": "cpu", "threads": int(threads), "machine": machine(),
        "card": None, "seconds": round(seconds, 6), "cpu_seconds": round(cpu_seconds, 3),
        "seconds_stages": {s: round(v, 6) for s, v in stages.items()},
        "recall": None if rec is None else round(rec, 6),
        "recall_sample": int(x.shape[0]) if rec is not None else 0,
        "peak_rss_mb": peak_mb,
        "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"), "tool": tool,
    }
    line.update(extra)
    print(json.dumps(line), flush=True)


class Stages:
    """Wall seconds per named stage plus the process CPU seconds (all
    threads) spent inside them: on a shared machine the CPU time shows the
    work done when the wall time is inflated by other jobs."""

    def __init__(self):
        self.wall, self.cpu = {}, 0.0

    def start(self):
        self._w, self._c = time.perf_counter(), time.process_time()

    def stop(self, name):
        self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - self._w
        self.cpu += time.process_time() - self._c

    def add(self, other):
        for name, s in other.wall.items():
            self.wall[name] = self.wall.get(name, 0.0) + s
        self.cpu += other.cpu
