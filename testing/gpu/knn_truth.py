"""Exact k-NN of query rows in a base set, shared by ivecs_truth.py,
query_truth_ivecs.py and grnnd_truth.py: candidates from a float32 matrix
product on the GPU (torch, no tf32), the best `cand` of each query re-ranked
in float64, ties to the lower id."""
import numpy as np
import torch


def fvecs(path):
    raw = np.fromfile(path, dtype=np.float32)
    d = raw[:1].view(np.int32)[0]
    return np.ascontiguousarray(raw.reshape(-1, d + 1)[:, 1:])


def exact_knn(x, q, k, cand, out):
    """The k nearest base rows of every query, ascending, into out (queries x k int32)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    X = torch.from_numpy(x).cuda()
    sq = (X * X).sum(1)
    for s in range(0, q.shape[0], 1024):
        Q = torch.from_numpy(q[s:s + 1024]).cuda()
        dd = (Q * Q).sum(1)[:, None] - 2 * Q @ X.T + sq[None, :]
        ci_all = dd.topk(cand, largest=False).indices.cpu().numpy()
        for i, ci in enumerate(ci_all):
            ex = ((x[ci].astype(np.float64) - q[s + i].astype(np.float64)) ** 2).sum(1)
            out[s + i] = ci[np.lexsort((ci, ex))[:k]]
    return out
