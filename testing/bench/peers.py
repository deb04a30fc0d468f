#!/usr/bin/python3
"""CPU peers of Vicinity on the same data and k, one JSON line per run in
the shape vicinity_bench prints (run with Debian's /usr/bin/python3):

  ckdtree      scipy cKDTree: build + query(k+1, workers)      exact
  sklearn      scikit-learn NearestNeighbors fit + kneighbors   exact
  faiss        FAISS IndexFlatL2 add + search(k+1)              exact
  hnswlib      HNSW build + query; ef raised until recall >= 0.99
  pynndescent  PyNNDescent (n_neighbors 20), timed after a numba warm-up
  vicinity     Vicinity's Python module (vicinity.knn, CPU backend, method
               auto: the grid for d <= 3, NN-Descent above 20,000 points)
  vicinity_brute  the same module forced to exact brute force
  (the module is found on PYTHONPATH, e.g. <build>/python)

Each peer runs in its own process so that peak memory is its own.
Recall is against the exact lists in --truth (an .ivecs cache shared with
vicinity_bench; computed here with cKDTree / FAISS flat when absent).
"""
import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402

ALL = ["ckdtree", "sklearn", "faiss", "hnswlib", "pynndescent", "vicinity", "vicinity_brute"]


def run_ckdtree(x, k, threads):
    from scipy.spatial import cKDTree
    st = bc.Stages()
    st.start()
    tree = cKDTree(x)
    st.stop("build")
    st.start()
    _, ids = tree.query(x, k + 1, workers=threads)
    st.stop("query")
    return bc.drop_self(ids), st, {}


def run_sklearn(x, k, threads):
    from sklearn.neighbors import NearestNeighbors
    st = bc.Stages()
    st.start()
    nn = NearestNeighbors(n_neighbors=k, n_jobs=threads).fit(x)
    st.stop("build")
    st.start()
    ids = nn.kneighbors(return_distance=False)  # X=None: every point, itself excluded
    st.stop("query")
    return ids, st, {"algorithm": nn._fit_method}


def run_faiss(x, k, threads):
    import faiss
    faiss.omp_set_num_threads(threads)
    st = bc.Stages()
    st.start()
    index = faiss.IndexFlatL2(x.shape[1])
    index.add(x)
    st.stop("build")
    st.start()
    _, ids = index.search(x, k + 1)
    st.stop("query")
    return bc.drop_self(ids), st, {}


def run_hnswlib(x, k, threads, truth):
    import hnswlib
    st = bc.Stages()
    st.start()
    index = hnswlib.Index(space="l2", dim=x.shape[1])
    index.init_index(max_elements=x.shape[0], ef_construction=200, M=16, random_seed=0)
    index.add_items(x, np.arange(x.shape[0]), num_threads=threads)
    st.stop("build")
    # The smallest ef of a doubling ladder that reaches recall 0.99; only
    # the query at that ef is timed (tuning is not part of the cost).
    for ef in (k + 1, 2 * k, 4 * k, 8 * k, 16 * k, 32 * k, 64 * k):
        index.set_ef(max(ef, k + 1))
        q = bc.Stages()
        q.start()
        ids, _ = index.knn_query(x, k=k + 1, num_threads=threads)
        q.stop("query")
        ids = bc.drop_self(ids.astype(np.int64))
        if bc.recall(x, ids, truth) >= 0.99:
            break
    st.add(q)
    return ids, st, {"ef": int(max(ef, k + 1)), "M": 16, "ef_construction": 200}


def run_pynndescent(x, k, threads):
    import numba
    from pynndescent import NNDescent
    numba.set_num_threads(threads)
    # numba compiles on first use: a small set pays the JIT before timing.
    rng = np.random.default_rng(0)
    NNDescent(x[rng.choice(x.shape[0], min(2000, x.shape[0]), replace=False)], n_neighbors=20,
              random_state=0, n_jobs=threads)
    st = bc.Stages()
    st.start()
    index = NNDescent(x, n_neighbors=20, random_state=0, n_jobs=threads)
    ids = index.neighbor_graph[0]
    st.stop("build")
    return bc.drop_self(ids[:, :k + 1].astype(np.int64)), st, {"n_neighbors": 20}


def run_vicinity(x, k, threads, method="auto"):
    """The Python module as a user calls it: the whole call is timed (the
    library's own stages are in the extra fields)."""
    import vicinity
    st = bc.Stages()
    st.start()
    ids, _, rep = vicinity.knn(x, k, method=method, backend="cpu", threads=threads, recall_sample=0)
    st.stop("knn")
    return ids, st, {"vicinity_method": rep["method"], "vicinity_seconds_total": round(rep["seconds_total"], 6),
                     "vicinity_version": vicinity.version()}


def exact_truth(x, k, path):
    if os.path.exists(path):
        t = bc.load_ivecs(path)
        if t.shape[0] == x.shape[0] and t.shape[1] >= k:
            return t
    if x.shape[1] <= 3:
        ids, _, _ = run_ckdtree(x, k, -1)
    else:
        try:
            ids, _, _ = run_faiss(x, k, os.cpu_count())
        except ImportError:  # no FAISS: scikit-learn's exact brute force
            from sklearn.neighbors import NearestNeighbors
            ids = NearestNeighbors(n_neighbors=k, algorithm="brute", n_jobs=-1).fit(x).kneighbors(
                return_distance=False)
    bc.save_ivecs(path, ids.astype(np.int32))
    print("peers: exact lists cached in %s" % path, file=sys.stderr)
    return bc.load_ivecs(path)


def run_one(args):
    x = bc.load(args.data, args.limit)
    truth = exact_truth(x, args.k, args.truth) if args.truth else None
    threads = args.threads or os.cpu_count()
    peer = args.one
    for _ in range(args.repeats):
        if peer == "hnswlib":
            if truth is None:
                raise SystemExit("peers: hnswlib's ef tuning needs --truth")
            ids, st, extra = run_hnswlib(x, args.k, threads, truth)
            peak = bc.peak_rss_mb()  # includes the recall checks of the ef ladder
        else:
            fn = {"ckdtree": run_ckdtree, "sklearn": run_sklearn, "faiss": run_faiss,
                  "pynndescent": run_pynndescent, "vicinity": run_vicinity,
                  "vicinity_brute": lambda x, k, t: run_vicinity(x, k, t, "brute")}[peer]
            ids, st, extra = fn(x, args.k, threads)
            peak = bc.peak_rss_mb()
        rec = bc.recall(x, np.asarray(ids), truth) if truth is not None else None
        bc.emit(args.name, x, args.k, peer, threads, sum(st.wall.values()), st.wall, rec, peer, peak, st.cpu,
                **extra)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--name")
    p.add_argument("--k", type=int, default=16)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--threads", type=int, default=0, help="0 = all cores")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--truth", help=".ivecs exact lists (shared with vicinity_bench)")
    p.add_argument("--peers", default=",".join(ALL), help="comma-separated subset of " + ",".join(ALL))
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args()
    if not args.name:
        args.name = os.path.basename(args.data).split(".")[0]
    if args.one:
        run_one(args)
        return
    if args.truth:  # once, before the peers, so no peer pays for it
        exact_truth(bc.load(args.data, args.limit), args.k, args.truth)
    status = 0
    for peer in args.peers.split(","):
        if peer not in ALL:
            raise SystemExit("peers: unknown peer %r (choose from %s)" % (peer, ",".join(ALL)))
        cmd = [sys.executable, os.path.abspath(__file__), "--one", peer] + [
            a for a in sys.argv[1:] if not a.startswith("--peers") and a != args.peers]
        r = subprocess.run(cmd)
        if r.returncode:
            print("peers: %s failed (exit %d)" % (peer, r.returncode), file=sys.stderr)
            status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
