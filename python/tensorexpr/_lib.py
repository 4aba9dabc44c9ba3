"""Finding and loading libtensorexpr through ctypes.

The library is looked for, in order:

1. the file named by the environment variable TENSOREXPR_LIB;
2. the build tree: ../build/libtensorexpr.so relative to the directory that
   holds this package (python/ in a checkout);
3. the path `make install` wrote into _libpath.py (PREFIX/lib/libtensorexpr.so.N);
4. the system's dynamic loader (ctypes.util.find_library("tensorexpr")).

ctypes.CDLL (not PyDLL) releases the GIL around every foreign call, so a
tx_run of one program lets other Python threads run (tensorexpr(3), Python).
"""
import ctypes
import ctypes.util
import os
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_size_t, c_void_p

TX_OK, TX_ERR_NOMEM, TX_ERR_ARG, TX_ERR_COMPILE, TX_ERR_BIND, TX_ERR_RUN, TX_ERR_JIT, TX_ERR_INTERNAL = range(8)
TX_IN, TX_OUT, TX_INOUT = 1, 2, 3
TX_F32, TX_F64, TX_C64, TX_C128 = 1, 2, 3, 4


class SparseMap(ctypes.Structure):
    _fields_ = [("nsrc", c_int64), ("offsets", c_void_p), ("targets", c_void_p)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("io", c_int), ("dtype", c_int), ("ndim", c_int),
                ("dims", POINTER(c_char_p)), ("extents", POINTER(c_int64))]


class MapInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("nsrc", c_int), ("ndst", c_int)]


def _candidates():
    env = os.environ.get("TENSOREXPR_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(os.path.dirname(os.path.dirname(here)), "build", "libtensorexpr.so")
    try:
        from . import _libpath  # written by `make install`
        yield _libpath.LIBRARY
    except ImportError:
        pass
    found = ctypes.util.find_library("tensorexpr")
    if found:
        yield found


_SIGNATURES = {
    "tx_new": (c_void_p, []),
    "tx_free": (None, [c_void_p]),
    "tx_set_option": (c_int, [c_void_p, c_int, c_int]),
    "tx_compile": (c_void_p, [c_void_p, c_char_p, c_size_t, c_char_p]),
    "tx_errmsg": (c_char_p, [c_void_p]),
    "tx_errcode": (c_int, [c_void_p]),
    "tx_strerror": (c_char_p, [c_int]),
    "tx_bind": (c_int, [c_void_p, c_char_p, c_void_p, c_int, c_void_p]),
    "tx_bind_sparse": (c_int, [c_void_p, c_char_p, c_void_p]),
    "tx_map_count": (c_int, [c_void_p]),
    "tx_map_get": (c_int, [c_void_p, c_int, POINTER(MapInfo)]),
    "tx_map_shape": (c_int, [c_void_p, c_char_p, POINTER(c_int64)]),
    "tx_set_dim": (c_int, [c_void_p, c_char_p, c_int64]),
    "tx_run": (c_int, [c_void_p]),
    "tx_emit_c": (c_void_p, [c_void_p, POINTER(c_size_t)]),
    "tx_graph": (c_void_p, [c_void_p, c_int, POINTER(c_size_t)]),
    "tx_tensor_count": (c_int, [c_void_p]),
    "tx_tensor_get": (c_int, [c_void_p, c_int, POINTER(TensorInfo)]),
    "tx_tensor_shape": (c_int, [c_void_p, c_char_p, POINTER(c_int64)]),
    "tx_program_free": (None, [c_void_p]),
    "tx_backend": (c_char_p, [c_void_p, POINTER(c_char_p)]),
    # h-api: typed, strided binding (optional; see HAVE_BIND_ARRAY)
    "tx_bind_array": (c_int, [c_void_p, c_char_p, c_void_p, c_int, c_int, c_void_p, c_void_p]),
    "tx_run_arrays": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p]),
    "tx_run_arrays_at": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p]),
}


def _load():
    tried = []
    for path in _candidates():
        if path and (os.path.exists(path) or os.sep not in path):
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            return lib, path
        tried.append("%s (missing)" % path)
    raise ImportError("tensorexpr: libtensorexpr not found; tried: %s. Build it with `make all`, "
                      "install it with `make install`, or set TENSOREXPR_LIB to its path"
                      % ", ".join(tried))


lib, LIBRARY_PATH = _load()
for _name, (_res, _args) in _SIGNATURES.items():
    if hasattr(lib, _name):
        _f = getattr(lib, _name)
        _f.restype = _res
        _f.argtypes = _args

#: True when the library has tx_bind_array (strided arrays read in place).
HAVE_BIND_ARRAY = hasattr(lib, "tx_bind_array")

#: True when the library has tx_run_arrays_at (one call binds every tensor,
#: each data pointer read from its array object, and runs).
HAVE_RUN_ARRAYS = hasattr(lib, "tx_run_arrays_at")


def _data_offset():
    """Where an ndarray object keeps its data pointer, past its header
    (numpy's PyArrayObject_fields: PyObject_HEAD, then char *data): reading
    it there costs a fraction of a.ctypes.data. Checked on live arrays;
    None if it does not hold (then a.ctypes.data is used)."""
    import numpy as np
    off = ctypes.sizeof(c_void_p) * 2
    for a in (np.zeros(3), np.ones((2, 5))[:, 1:], np.zeros(0, np.float32)):
        if ctypes.c_void_p.from_address(id(a) + off).value != a.ctypes.data:
            return None
    return off


DATA_OFFSET = _data_offset()

libc = ctypes.CDLL(None)
libc.free.argtypes = [c_void_p]
libc.free.restype = None


def take_string(ptr, length):
    """A malloc'd C string (from tx_emit_c, tx_graph) as str; frees it."""
    try:
        return ctypes.string_at(ptr, length.value).decode("utf-8")
    finally:
        libc.free(ptr)


__all__ = ["lib", "LIBRARY_PATH", "HAVE_BIND_ARRAY", "HAVE_RUN_ARRAYS", "DATA_OFFSET", "SparseMap", "TensorInfo", "MapInfo", "take_string",
           "c_double"]
