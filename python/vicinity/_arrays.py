"""numpy in and out without copies: views of the caller's rows for the
library, and arrays over the library's own buffers that free them when
the last array goes."""
import ctypes

import numpy as np

from . import _abi


def data_view(points, metric=0, box=None):
    """(vic_data, keep-alive objects).  float32 rows with unit column stride
    and a row stride that is a whole number of floats are used in place;
    anything else is converted once to a C-contiguous float32 array."""
    a = np.asarray(points)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2:
        raise ValueError("points must be a 2-d array (n x d), got %d dimensions" % a.ndim)
    if a.dtype != np.float32 or a.strides[1] != 4 or a.strides[0] % 4 or a.strides[0] < 4 * a.shape[1]:
        a = np.ascontiguousarray(a, dtype=np.float32)
    x = _abi.Data()
    x.rows = a.ctypes.data
    x.n, x.d = a.shape
    x.stride = a.strides[0] // 4
    x.metric = metric
    keep = [a]
    if box is not None:
        b = np.ascontiguousarray(np.broadcast_to(np.asarray(box, dtype=np.float64), (a.shape[1],)))
        x.box = b.ctypes.data
        keep.append(b)
    return x, keep


def optional_floats(values, n, what):
    """A float32 C-contiguous array of n values, or None."""
    if values is None:
        return None
    v = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
    if v.shape[0] != n:
        raise ValueError("%s has %d values for %d points" % (what, v.shape[0], n))
    return v


def pointer(a):
    return None if a is None else a.ctypes.data


class _Buffer:
    """One library buffer as a numpy array base: holds the owner alive."""

    def __init__(self, owner, address, shape, typestr):
        self._owner = owner
        self.__array_interface__ = {"data": (address, False), "shape": shape, "typestr": typestr, "version": 3}


class _Owner:
    """Frees a result struct (vic_knn, vic_peaks) with its *_free call."""

    def __init__(self, struct, free):
        self.struct, self._free = struct, free

    def __del__(self):
        self._free(ctypes.byref(self.struct))


def wrap(owner, ptr, shape, dtype):
    if not ptr or 0 in shape:
        return np.empty(shape, dtype=dtype)
    address = ctypes.cast(ptr, ctypes.c_void_p).value
    return np.asarray(_Buffer(owner, address, shape, np.dtype(dtype).str))


def knn_arrays(knn):
    """(ids, distances) over a filled vic_knn, which they free when gone."""
    owner = _Owner(knn, _abi.lib.vic_knn_free)
    shape = (int(knn.n), int(knn.k))
    return wrap(owner, knn.ids, shape, np.int64), wrap(owner, knn.dist, shape, np.float32)


def report_dict(r):
    """A vic_report as a dict."""
    lib = _abi.lib
    return {
        "method": lib.vic_method_name(r.method).decode(),
        "backend": lib.vic_backend_name(r.backend).decode(),
        "reason": r.reason.decode(errors="replace"),
        "k_requested": r.k_requested,
        "k": r.k,
        "seconds_total": r.seconds_total,
        "seconds_transfer": r.seconds_transfer,
        "seconds_kernel": r.seconds_kernel,
        "stages": [(r.stages[i].name.decode(errors="replace"), r.stages[i].seconds)
                   for i in range(min(max(r.n_stages, 0), _abi.MAX_STAGES))],
        "recall_estimate": r.recall_estimate,
        "recall_sample": r.recall_sample,
        "warnings": r.warnings,
    }
