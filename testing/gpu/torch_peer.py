#!/usr/bin/env python3
"""PyTorch brute-force kNN peer for the GPU benchmarks (issue 4).

Exact all-points kNN the way a PyTorch user writes it: squared distances
by one matmul per chunk of 2,048 query rows (fp32, TF32 off unless --tf32),
the point itself masked out, torch.topk.  Timed with CUDA events after a
warm-up chunk, data already on the GPU (transfers reported apart).  Prints
one JSON line, like vicinity_bench.

usage: torch_peer.py DATA.npy --k K [--name NAME] [--chunk 2048] [--tf32]
"""
import argparse
import datetime
import json
import os
import time

import numpy as np
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--name", default=None)
    ap.add_argument("--chunk", type=int, default=2048)
    ap.add_argument("--tf32", action="store_true")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    x_host = np.load(a.data, mmap_mode="r")
    n, d = x_host.shape
    dev = torch.device("cuda")
    t0 = time.perf_counter()
    x = torch.from_numpy(np.ascontiguousarray(x_host, dtype=np.float32)).to(dev)
    torch.cuda.synchronize()
    transfer = time.perf_counter() - t0
    norms = (x * x).sum(1)

    def chunk(s):
        q = x[s:s + a.chunk]
        dist = norms[s:s + a.chunk, None] + norms[None, :] - 2.0 * (q @ x.T)
        rows = torch.arange(q.shape[0], device=dev)
        dist[rows, rows + s] = float("inf")  # a point is not its own neighbour
        return torch.topk(dist, a.k, dim=1, largest=False)

    chunk(0)  # warm-up: cuBLAS handles, kernels loaded
    torch.cuda.synchronize()
    ids = torch.empty((n, a.k), dtype=torch.int64, device=dev)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for s in range(0, n, a.chunk):
        v, i = chunk(s)
        ids[s:s + a.chunk] = i
    stop.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(stop) / 1000.0
    t1 = time.perf_counter()
    ids_host = ids.cpu().numpy()
    transfer += time.perf_counter() - t1
    out = os.environ.get("TORCH_PEER_IDS")
    if out:
        np.save(out, ids_host)
    print(json.dumps({
        "dataset": a.name or os.path.splitext(os.path.basename(a.data))[0], "n": int(n), "d": int(d), "k": a.k,
        "method": "torch-matmul-topk", "backend": "cuda", "card": torch.cuda.get_device_name(0),
        "precision": "tf32" if a.tf32 else "fp32", "chunk": a.chunk, "seconds": round(seconds, 6),
        "seconds_stages": {"transfer": round(transfer, 6)}, "tool": "torch " + torch.__version__,
        "date": datetime.date.today().isoformat()}), flush=True)


if __name__ == "__main__":
    main()
