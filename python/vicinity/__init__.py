"""Vicinity: k-nearest-neighbour lists, densities and density peaks of
point sets, over the C library libvicinity (ctypes; numpy in and out).

    ids, dist, report = vicinity.knn(points, 16)
    rho, sph, h, report = vicinity.density(points, 32)
    p = vicinity.peaks(points, 32)
    ix = vicinity.Index(points); ids, dist, report = ix.search(queries, 10)

Every call releases the GIL while the library works, raises
vicinity.Error (with the library's message) on failure and stops on
Ctrl-C (KeyboardInterrupt).  Points are float32 n x d arrays; other
arrays are converted once.
"""
import ctypes

import numpy as np

from . import _abi, _arrays
from ._abi import lib
from ._call import ArgumentError, CancelledError, Context, Error, FileError, method_code, metric_code

__all__ = ["knn", "query", "density", "peaks", "Index", "Peaks", "Error", "ArgumentError", "CancelledError",
           "FileError", "version", "library_version", "cuda_available"]

__version__ = lib.vic_version_string().decode()


def library_version():
    """The loaded library's version as (major, minor, patch)."""
    v = lib.vic_version()
    return v // 10000, v // 100 % 100, v % 100


def version():
    return __version__


def cuda_available():
    """True when the library has the CUDA backend and a device is usable."""
    return bool(lib.vic_cuda_available(Context().handle))


def _build_options(k, method, recall_sample):
    o = _abi.init(_abi.BuildOptions)
    o.k = int(k)
    o.method = method_code(method)
    if recall_sample is not None:
        o.recall_sample = int(recall_sample)
    return o


def knn(points, k=16, method="auto", backend="auto", metric="l2", box=None, recall_sample=None, threads=0,
        seed=42):
    """The k nearest other points of every point: (ids n x k int64,
    distances n x k float32, report dict).  method: auto, brute, grid,
    nndescent, ggnn, gnnd, grnnd, tsdg; backend: auto, cpu, cuda; box:
    periodic box lengths (L2)."""
    x, keep = _arrays.data_view(points, metric_code(metric), box)
    o = _build_options(k, method, recall_sample)
    out = _abi.Knn()
    Context(backend, threads, seed).call(lib.vic_knn_build, ctypes.byref(x), ctypes.byref(o), ctypes.byref(out))
    ids, dist = _arrays.knn_arrays(out)
    return ids, dist, _arrays.report_dict(out.report)


def query(points, queries, k=16, backend="auto", metric="l2", threads=0):
    """Exact k nearest points of each query (no self exclusion):
    (ids, distances, report)."""
    m = metric_code(metric)
    x, keep = _arrays.data_view(points, m)
    q, keep_q = _arrays.data_view(queries, m)
    out = _abi.Knn()
    Context(backend, threads).call(lib.vic_knn_query_exact, ctypes.byref(x), ctypes.byref(q), int(k),
                                   ctypes.byref(out))
    ids, dist = _arrays.knn_arrays(out)
    return ids, dist, _arrays.report_dict(out.report)


def _density_options(sph, total_mass):
    o = _abi.init(_abi.DensityOptions)
    o.sph = {"pynbody": 0, "gadget": 1}[sph]
    o.total_mass = float(total_mass)
    return o


def density(points, k=32, mass=None, sph="pynbody", total_mass=0.0, box=None, backend="auto", threads=0):
    """kNN and SPH densities from the exact k nearest neighbours (self
    excluded): (knn_density, sph_density, smoothing_length, report), each
    array n float32, written by the library into numpy's memory."""
    x, keep = _arrays.data_view(points, 0, box)
    n = int(x.n)
    m = _arrays.optional_floats(mass, n, "mass")
    rho, rho_sph, h = (np.empty(n, np.float32) for _ in range(3))
    o = _density_options(sph, total_mass)
    nn = _abi.Knn()
    Context(backend, threads).call(lib.vic_knn_density, ctypes.byref(x), int(k), _arrays.pointer(m),
                                   ctypes.byref(o), ctypes.byref(nn), rho.ctypes.data, rho_sph.ctypes.data,
                                   h.ctypes.data)
    report = _arrays.report_dict(nn.report)
    lib.vic_knn_free(ctypes.byref(nn))
    return rho, rho_sph, h, report


class Peaks:
    """Density peaks: per point parent (nearest denser point, -1 for the
    densest), delta, saliency, peak_id, density; per peak peak_point,
    peak_members, peak_centre (n_peaks x d); report."""

    def __init__(self, p, d, rho, report):
        owner = _arrays._Owner(p, lib.vic_peaks_free)
        n, np_ = int(p.n), int(p.n_peaks)
        self.parent = _arrays.wrap(owner, p.parent, (n,), np.int64)
        self.delta = _arrays.wrap(owner, p.delta, (n,), np.float32)
        self.saliency = _arrays.wrap(owner, p.saliency, (n,), np.float32)
        self.peak_id = _arrays.wrap(owner, p.peak_id, (n,), np.int64)
        self.peak_point = _arrays.wrap(owner, p.peak_point, (np_,), np.int64)
        self.peak_members = _arrays.wrap(owner, p.peak_members, (np_,), np.int64)
        self.peak_centre = _arrays.wrap(owner, p.peak_centre, (np_, d), np.float32)
        self.density = rho
        self.report = report

    @property
    def n_peaks(self):
        return len(self.peak_point)


def peaks(points, k=32, mass=None, min_members=20, min_density=0.0, min_delta=0.0, delta_factor=2.0,
          min_prominence=0.0, sph="pynbody", total_mass=0.0, box=None, backend="auto", threads=0):
    """Exact kNN lists, kNN densities and density peaks in one call
    (vic_knn_density_peaks): a Peaks."""
    x, keep = _arrays.data_view(points, 0, box)
    n = int(x.n)
    m = _arrays.optional_floats(mass, n, "mass")
    rho = np.empty(n, np.float32)
    o = _density_options(sph, total_mass)
    po = _abi.init(_abi.PeakOptions)
    po.min_members, po.min_density, po.min_delta = int(min_members), float(min_density), float(min_delta)
    po.delta_factor, po.min_prominence = float(delta_factor), float(min_prominence)
    out = _abi.Peaks()
    Context(backend, threads).call(lib.vic_knn_density_peaks, ctypes.byref(x), int(k), _arrays.pointer(m),
                                   ctypes.byref(o), ctypes.byref(po), None, rho.ctypes.data, None, None,
                                   ctypes.byref(out))
    return Peaks(out, int(x.d), rho, _arrays.report_dict(out.report))


class Index:
    """A search structure over points (kept referenced: the library reads
    the rows, it does not copy them).  Index(points, method=..., k=...)
    builds; Index.load(path, points) reads a saved one."""

    def __init__(self, points, method="auto", k=16, metric="l2", backend="auto", threads=0, seed=42, _load=None):
        self._ctx = Context(backend, threads, seed)
        self._x, self._keep = _arrays.data_view(points, metric_code(metric))
        self._handle = ctypes.c_void_p()
        if _load is None:
            o = _build_options(k, method, 0)
            self._ctx.call(lib.vic_index_build, ctypes.byref(self._x), ctypes.byref(o), ctypes.byref(self._handle))
        else:
            self._ctx.call(lib.vic_index_load, str(_load).encode(), ctypes.byref(self._x),
                           ctypes.byref(self._handle))

    @classmethod
    def load(cls, path, points, metric="l2", backend="auto", threads=0):
        """An index saved by save(), over the same points (checked)."""
        return cls(points, metric=metric, backend=backend, threads=threads, _load=path)

    def save(self, path):
        self._ctx.call(lib.vic_index_save, self._handle, str(path).encode())

    def search(self, queries, k=10, tau=None, max_visits=None, entry_points=None):
        """The k nearest indexed points of each query: (ids, distances, report)."""
        q, keep = _arrays.data_view(queries, self._x.metric)
        o = _abi.init(_abi.SearchOptions)
        o.k = int(k)
        if tau is not None:
            o.tau = float(tau)
        if max_visits is not None:
            o.max_visits = int(max_visits)
        if entry_points is not None:
            o.entry_points = int(entry_points)
        out = _abi.Knn()
        self._ctx.call(lib.vic_index_search, self._handle, ctypes.byref(q), ctypes.byref(o), ctypes.byref(out))
        ids, dist = _arrays.knn_arrays(out)
        return ids, dist, _arrays.report_dict(out.report)

    @property
    def report(self):
        """The build's report (or the saved build's, after load)."""
        return _arrays.report_dict(lib.vic_index_report(self._handle).contents)

    @property
    def size_bytes(self):
        return int(lib.vic_index_size(self._handle))

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.vic_index_free(self._handle)
            self._handle = ctypes.c_void_p()
