"""ctypes mirrors of vicinity.h and the signatures of its functions.

Option structs are mirrored up to the last field this module sets: the
library reads the bytes their struct_size covers and keeps its defaults
for the rest, so the module keeps working as the header grows.  Result
structs are mirrored whole (their size is fixed).  testing/python_module
checks every offset here against the C compiler's.
"""
import ctypes
import os
from ctypes import (POINTER, Structure, Union, c_char, c_char_p, c_double, c_float, c_int, c_int32, c_int64,
                    c_size_t, c_ubyte, c_uint64, c_void_p)

from . import _libpath

REPORT_BYTES, KNN_BYTES, PEAKS_BYTES = 1024, 1152, 1280
MAX_STAGES = 12

LOG_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_char_p)
PROGRESS_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_char_p, c_double)


class CtxOptions(Structure):
    _fields_ = [("struct_size", c_size_t), ("backend", c_int), ("device", c_int), ("devices", c_int),
                ("threads", c_int), ("seed", c_uint64), ("log", LOG_FN), ("progress", PROGRESS_FN),
                ("user", c_void_p), ("device_memory_budget", c_size_t)]


class BuildOptions(Structure):  # a prefix of vic_build_options
    _fields_ = [("struct_size", c_size_t), ("method", c_int), ("k", c_int32), ("recall_sample", c_int32),
                ("brute_max_n", c_int64)]


class SearchOptions(Structure):
    _fields_ = [("struct_size", c_size_t), ("k", c_int32), ("tau", c_float), ("max_visits", c_int32),
                ("occlusion_limit", c_int32), ("entry_points", c_int32)]


class DensityOptions(Structure):
    _fields_ = [("struct_size", c_size_t), ("sph", c_int), ("total_mass", c_double)]


class PeakOptions(Structure):
    _fields_ = [("struct_size", c_size_t), ("min_density", c_double), ("min_delta", c_double),
                ("min_members", c_int64), ("delta_factor", c_double), ("min_prominence", c_double)]


class ShardOptions(Structure):
    _fields_ = [("struct_size", c_size_t), ("shard_rows", c_int64), ("work_dir", c_char_p), ("resume", c_int32)]


class Data(Structure):
    _fields_ = [("rows", c_void_p), ("n", c_int64), ("d", c_int32), ("stride", c_int64), ("metric", c_int),
                ("box", c_void_p), ("origin", c_void_p)]


class StageTime(Structure):
    _fields_ = [("name", c_char * 32), ("seconds", c_double)]


class _ReportFields(Structure):
    _fields_ = [("method", c_int), ("reason", c_char * 160), ("backend", c_int), ("k_requested", c_int32),
                ("k", c_int32), ("seconds_total", c_double), ("seconds_transfer", c_double),
                ("seconds_kernel", c_double), ("n_stages", c_int), ("stages", StageTime * MAX_STAGES),
                ("recall_estimate", c_double), ("recall_sample", c_int64), ("dnn1_mean", c_double),
                ("dnn1_max", c_double), ("warnings", c_int), ("device_peak_bytes", c_int64), ("slabs", c_int32),
                ("devices_used", c_int32)]


class _ReportUnion(Union):
    _anonymous_ = ("f",)
    _fields_ = [("f", _ReportFields), ("reserved_", c_ubyte * (REPORT_BYTES - 8))]


class Report(Structure):
    _anonymous_ = ("u",)
    _fields_ = [("struct_size", c_size_t), ("u", _ReportUnion)]


class _KnnFields(Structure):
    _fields_ = [("n", c_int64), ("k", c_int32), ("ids", POINTER(c_int64)), ("dist", POINTER(c_float)),
                ("report", Report)]


class _KnnUnion(Union):
    _anonymous_ = ("f",)
    _fields_ = [("f", _KnnFields), ("reserved_", c_ubyte * (KNN_BYTES - 8))]


class Knn(Structure):
    _anonymous_ = ("u",)
    _fields_ = [("struct_size", c_size_t), ("u", _KnnUnion)]


class _PeaksFields(Structure):
    _fields_ = [("n", c_int64), ("parent", POINTER(c_int64)), ("delta", POINTER(c_float)),
                ("saliency", POINTER(c_float)), ("peak_id", POINTER(c_int64)), ("n_peaks", c_int64),
                ("peak_point", POINTER(c_int64)), ("peak_members", POINTER(c_int64)),
                ("peak_centre", POINTER(c_float)), ("report", Report)]


class _PeaksUnion(Union):
    _anonymous_ = ("f",)
    _fields_ = [("f", _PeaksFields), ("reserved_", c_ubyte * (PEAKS_BYTES - 8))]


class Peaks(Structure):
    _anonymous_ = ("u",)
    _fields_ = [("struct_size", c_size_t), ("u", _PeaksUnion)]


def _load():
    path = os.environ.get("VICINITY_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                _libpath.LIBRARY)
    return ctypes.CDLL(path)


lib = _load()
P = POINTER
_signatures = {
    "vic_version": (c_int, []),
    "vic_version_string": (c_char_p, []),
    "vic_status_name": (c_char_p, [c_int]),
    "vic_method_name": (c_char_p, [c_int]),
    "vic_backend_name": (c_char_p, [c_int]),
    "vic_method_parse": (c_int, [c_char_p, P(c_int)]),
    "vic_metric_parse": (c_int, [c_char_p, P(c_int)]),
    "vic_backend_parse": (c_int, [c_char_p, P(c_int)]),
    "vic_ctx_options_init_sized": (None, [P(CtxOptions), c_size_t]),
    "vic_build_options_init_sized": (None, [P(BuildOptions), c_size_t]),
    "vic_search_options_init_sized": (None, [P(SearchOptions), c_size_t]),
    "vic_density_options_init_sized": (None, [P(DensityOptions), c_size_t]),
    "vic_peak_options_init_sized": (None, [P(PeakOptions), c_size_t]),
    "vic_shard_options_init_sized": (None, [P(ShardOptions), c_size_t]),
    "vic_ctx_create": (c_int, [P(CtxOptions), P(c_void_p)]),
    "vic_ctx_destroy": (None, [c_void_p]),
    "vic_ctx_error": (c_char_p, [c_void_p]),
    "vic_ctx_cancel": (None, [c_void_p]),
    "vic_cuda_available": (c_int, [c_void_p]),
    "vic_knn_build": (c_int, [c_void_p, P(Data), P(BuildOptions), P(Knn)]),
    "vic_knn_query_exact": (c_int, [c_void_p, P(Data), P(Data), c_int32, P(Knn)]),
    "vic_knn_free": (None, [P(Knn)]),
    "vic_knn_add": (c_int, [c_void_p, P(Data), P(Knn), P(Data), P(BuildOptions), P(Knn)]),
    "vic_knn_merge": (c_int, [c_void_p, P(Data), P(Knn), P(Data), P(Knn), P(BuildOptions), P(Knn)]),
    "vic_knn_build_sharded": (c_int, [c_void_p, P(Data), P(BuildOptions), P(ShardOptions), P(Knn)]),
    "vic_index_build": (c_int, [c_void_p, P(Data), P(BuildOptions), P(c_void_p)]),
    "vic_index_search": (c_int, [c_void_p, c_void_p, P(Data), P(SearchOptions), P(Knn)]),
    "vic_index_save": (c_int, [c_void_p, c_void_p, c_char_p]),
    "vic_index_load": (c_int, [c_void_p, c_char_p, P(Data), P(c_void_p)]),
    "vic_index_report": (P(Report), [c_void_p]),
    "vic_index_size": (c_int64, [c_void_p]),
    "vic_index_free": (None, [c_void_p]),
    "vic_knn_density": (c_int, [c_void_p, P(Data), c_int32, c_void_p, P(DensityOptions), P(Knn), c_void_p,
                                c_void_p, c_void_p]),
    "vic_knn_density_peaks": (c_int, [c_void_p, P(Data), c_int32, c_void_p, P(DensityOptions), P(PeakOptions),
                                      P(Knn), c_void_p, c_void_p, c_void_p, P(Peaks)]),
    "vic_peaks_free": (None, [P(Peaks)]),
}
for _name, (_res, _args) in _signatures.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _res, _args


def init(cls):
    """An options struct with the library's defaults for the fields it has."""
    o = cls()
    getattr(lib, {CtxOptions: "vic_ctx_options_init_sized", BuildOptions: "vic_build_options_init_sized",
                  SearchOptions: "vic_search_options_init_sized", DensityOptions: "vic_density_options_init_sized",
                  PeakOptions: "vic_peak_options_init_sized",
                  ShardOptions: "vic_shard_options_init_sized"}[cls])(ctypes.byref(o), ctypes.sizeof(cls))
    return o
