"""Exact k-NN of query rows in a base set, shared by ivecs_truth.py,
query_truth_ivecs.py, grnnd_truth.py, ggnn_truth.py and gnnd_truth.py: candidates from a float32 matrix
product on the GPU (torch, no tf32), the best `cand` of each query re-ranked
in float64, ties to the lower id."""
import numpy as np
import torch


def fvecs(path):
    raw = np.fromfile(path, dtype=np.float32)
    d = raw[:1].view(np.int32)[0]
    return np.ascontiguousarray(raw.reshape(-1, d + 1)[:, 1:])


def exact_knn(x, q, k, cand, out, self_rows=None):
    """The k nearest base rows of every query, ascending, into out (queries x k int32).
    self_rows[i]: the base row of query i, left out (or None)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    X = torch.from_numpy(x).cuda()
    sq = (X * X).sum(1)
    for s in range(0, q.shape[0], 1024):
        Q = torch.from_numpy(q[s:s + 1024]).cuda()
        dd = (Q * Q).sum(1)[:, None] - 2 * Q @ X.T + sq[None, :]
        if self_rows is not None:
            r = torch.from_numpy(np.asarray(self_rows[s:s + 1024], dtype=np.int64)).cuda()
            dd[torch.arange(len(r)), r] = float('inf')
        ci_all = dd.topk(cand, largest=False).indices.cpu().numpy()
        for i, ci in enumerate(ci_all):
            ex = ((x[ci].astype(np.float64) - q[s + i].astype(np.float64)) ** 2).sum(1)
            if self_rows is not None:
                ex[ci == self_rows[s + i]] = np.inf
            out[s + i] = ci[np.lexsort((ci, ex))[:k]]
    return out


def exact_knn_streamed(x, q, k, cand, out, self_rows=None, chunk=1 << 21, qblock=1024):
    """exact_knn for a base too large for the GPU at once (x may be a
    memory map): the base streamed in chunks of `chunk` rows, each query's
    best `cand` kept across the chunks, then re-ranked in float64 like
    exact_knn.  self_rows[i]: the base row of query i, left out (or None)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    n, nq = x.shape[0], q.shape[0]
    Q = torch.from_numpy(np.ascontiguousarray(q, dtype=np.float32)).cuda()
    qsq = (Q * Q).sum(1)
    best_d = torch.full((nq, cand), float('inf'), device='cuda')
    best_i = torch.full((nq, cand), -1, dtype=torch.int64, device='cuda')
    own = torch.from_numpy(np.asarray(self_rows, dtype=np.int64)).cuda() if self_rows is not None else None
    for a in range(0, n, chunk):
        X = torch.from_numpy(np.ascontiguousarray(x[a:a + chunk], dtype=np.float32)).cuda()
        sq = (X * X).sum(1)
        kk = min(cand, X.shape[0])
        for s in range(0, nq, qblock):
            e = min(nq, s + qblock)
            dd = torch.addmm(sq[None, :], Q[s:e], X.T, beta=1.0, alpha=-2.0)
            dd += qsq[s:e, None]
            if own is not None:
                loc = own[s:e] - a
                hit = (loc >= 0) & (loc < X.shape[0])
                dd[torch.nonzero(hit).flatten(), loc[hit]] = float('inf')
            v, i = dd.topk(kk, largest=False)
            del dd
            cd = torch.cat([best_d[s:e], v], 1)
            ci = torch.cat([best_i[s:e], i + a], 1)
            v2, j = cd.topk(cand, largest=False)
            best_d[s:e] = v2
            best_i[s:e] = ci.gather(1, j)
        del X, sq
    ci_all = best_i.cpu().numpy()
    for i, ci in enumerate(ci_all):
        cs = np.sort(ci[ci >= 0])
        ex = ((np.asarray(x[cs], dtype=np.float64) - q[i].astype(np.float64)) ** 2).sum(1)
        out[i] = cs[np.lexsort((cs, ex))[:k]]
    return out
