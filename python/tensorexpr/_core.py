"""Programs: compile, load, call; the exceptions; binding numpy arrays."""
import ctypes
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Mapping
from ctypes import byref, c_int64, c_size_t, c_void_p

import numpy as np

from ._lib import (DATA_OFFSET, HAVE_BIND_ARRAY, MapInfo, SparseMap, TensorInfo, TX_ERR_ARG, TX_ERR_BIND, TX_ERR_COMPILE,
                   TX_ERR_NOMEM, TX_C64, TX_C128, TX_F32, TX_F64, TX_IN, TX_INOUT, TX_OUT, lib, take_string)


# ---------------------------------------------------------------- exceptions
class TensorExprError(Exception):
    """Base class of the errors libtensorexpr reports."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        self.status = status


_DIAG = re.compile(r"^(.*?):(\d+):(\d+): (error|warning|note): (.*)$", re.M)


class CompileError(TensorExprError):
    """The .tx source has errors. `diagnostics` lists every one as
    (file, line, column, message); `file`, `line`, `column` and `msg` are the
    first's. str() is tx_errmsg's full text (with the caret lines)."""

    def __init__(self, message, status=TX_ERR_COMPILE):
        super().__init__(message, status)
        self.diagnostics = [(m.group(1), int(m.group(2)), int(m.group(3)), m.group(5))
                            for m in _DIAG.finditer(message) if m.group(4) == "error"]
        first = self.diagnostics[0] if self.diagnostics else (None, None, None, message)
        self.file, self.line, self.column, self.msg = first


class RunError(TensorExprError, RuntimeError):
    """tx_run failed (a run-time check: dims, a bad sparse map, a matrix not
    positive definite, ...). `tensor` is the tensor the message names, if any."""

    def __init__(self, message, status=None, tensor=None):
        super().__init__(message, status)
        self.tensor = tensor


class BindError(TensorExprError, ValueError):
    """An array does not fit its declaration (shape, rank, dims that disagree)."""


class DTypeError(ValueError, TypeError):
    """An array's element type cannot be used (object, string, complex for a real tensor, ...)."""


def _raise_for(status, ctx, names=(), what=None):
    msg = (lib.tx_errmsg(ctx) or b"").decode("utf-8", "replace")
    if not msg:
        msg = lib.tx_strerror(status).decode()
    if what:
        msg = "%s: %s" % (what, msg)
    if status == TX_ERR_NOMEM:
        raise MemoryError(msg)
    if status == TX_ERR_COMPILE:
        raise CompileError(msg, status)
    if status == TX_ERR_BIND:
        raise BindError(msg, status)
    if status == TX_ERR_ARG:
        raise BindError(msg, status)
    tensor = None
    for q in re.findall(r"'([^']*)'", msg):
        if q in names:
            tensor = q
            break
    raise RunError(msg, status, tensor)


# ---------------------------------------------------------------- arrays
_CODE = {np.dtype(np.float32): TX_F32, np.dtype(np.float64): TX_F64,
         np.dtype(np.complex64): TX_C64, np.dtype(np.complex128): TX_C128}
_DTYPE = {v: k for k, v in _CODE.items()}

_bind = lib.tx_bind
_bind_array = getattr(lib, "tx_bind_array", None)
# tx_run_arrays_at without argtypes: a binding plan's arguments are ctypes
# objects made once, passed as they are (the GIL is released, as by every
# CDLL function); each array is passed as the address of its data field
_run_arrays_raw = None
if getattr(lib, "tx_run_arrays_at", None) is not None:
    _run_arrays_raw = lib["tx_run_arrays_at"]
    _run_arrays_raw.restype = ctypes.c_int
_ndarray = np.ndarray
_empty = np.empty
PLANS = 64  # binding plans kept per Program


def check_numeric(a, what, complex_ok=True):
    """Rejects arrays tensorexpr cannot take (objects, strings, ...), and
    complex ones where the tensor is real (numpy would drop the imaginary
    part with a ComplexWarning; tx(5) makes that an error)."""
    k = a.dtype.kind
    if k == "c" and not complex_ok:
        raise DTypeError("%s: the array is complex (%s), but the tensor is real; pass its .real, .imag or "
                         "abs(), or declare the tensor c64/c128" % (what, a.dtype))
    if k not in "biufc":
        raise DTypeError("%s: arrays of %s cannot be used; tensorexpr computes in float32, float64, "
                         "complex64 and complex128" % (what, a.dtype))


def bind_input(p, name_b, a, code, shape_c):
    """Binds A (already of the declared dtype) as an input; returns the array
    that must stay alive during the run."""
    if a.flags.c_contiguous:
        return a, _bind(p, name_b, a.ctypes.data, a.ndim, shape_c)
    if _bind_array is not None:
        isz = a.itemsize
        st = a.strides
        if all(s % isz == 0 for s in st):
            strides = (c_int64 * a.ndim)(*[s // isz for s in st])
            return (a, strides), _bind_array(p, name_b, a.ctypes.data, code, a.ndim, shape_c, strides)
    a = np.ascontiguousarray(a)
    return a, _bind(p, name_b, a.ctypes.data, a.ndim, shape_c)


def bind_output(p, name_b, a, code, shape_c, inout):
    """Binds A (the caller's array, of the declared dtype) as an output.
    Returns (what to keep alive, status, staging array or None): a staging
    array is copied back into A after a successful run."""
    if a.flags.c_contiguous:
        return a, _bind(p, name_b, a.ctypes.data, a.ndim, shape_c), None
    if _bind_array is not None:
        isz = a.itemsize
        st = a.strides
        if all(s % isz == 0 for s in st):
            strides = (c_int64 * a.ndim)(*[s // isz for s in st])
            return (a, strides), _bind_array(p, name_b, a.ctypes.data, code, a.ndim, shape_c, strides), None
    tmp = np.ascontiguousarray(a) if inout else np.empty(a.shape, a.dtype)
    return tmp, _bind(p, name_b, tmp.ctypes.data, tmp.ndim, shape_c), tmp


def sparse_map_of(mask, nsrc_modes):
    """The tx_sparse_map (CSR) of a boolean MASK over (source modes...,
    target modes...), the first NSRC_MODES being the source: for each source
    tuple (row-major), the sorted row-major numbers of its target tuples.
    Returns the struct and the arrays it points into (keep them alive)."""
    ns = int(np.prod(mask.shape[:nsrc_modes], dtype=np.int64))
    nd = int(np.prod(mask.shape[nsrc_modes:], dtype=np.int64))
    m2 = np.ascontiguousarray(mask != 0).reshape(ns, nd)
    offsets = np.zeros(ns + 1, dtype=np.int64)
    np.cumsum(m2.sum(axis=1), out=offsets[1:])
    targets = np.nonzero(m2)[1].astype(np.int64)  # row-major: ascending within a row
    if targets.size == 0:
        targets = np.zeros(1, dtype=np.int64)
    return SparseMap(ns, offsets.ctypes.data, targets.ctypes.data), (offsets, targets)


# ---------------------------------------------------------------- graphs
class Graph(str):
    """The optimised operation graph: the text listing (this str), and in
    Jupyter an SVG drawn by Graphviz's `dot` (when it is installed) from the
    DOT text in `.dot`."""

    def __new__(cls, text, dot):
        g = super().__new__(cls, text)
        g.dot = dot
        return g

    def svg(self):
        """The SVG text, or None when `dot` is not installed or fails."""
        exe = shutil.which("dot")
        if not exe:
            return None
        r = subprocess.run([exe, "-Tsvg"], input=self.dot.encode(), capture_output=True)
        return r.stdout.decode() if r.returncode == 0 else None

    def _repr_svg_(self):
        return self.svg()


# ---------------------------------------------------------------- programs
class Tensor:
    """What a program declares for one parameter tensor."""
    __slots__ = ("name", "io", "dtype", "dims", "index", "name_b", "code")

    def __init__(self, index, info):
        self.index = index
        self.name_b = info.name
        self.name = info.name.decode("utf-8")
        self.io = {TX_IN: "in", TX_OUT: "out", TX_INOUT: "inout"}[info.io]
        self.code = info.dtype
        self.dtype = _DTYPE[info.dtype]
        self.dims = tuple(info.dims[m].decode("utf-8") if info.dims[m] else int(info.extents[m])
                          for m in range(info.ndim))

    def __repr__(self):
        return "<%s %s %s[%s]>" % (self.io, self.dtype, self.name, ", ".join(map(str, self.dims)))


_BACKENDS = {"tcc": 0, "cc": 1}  # TX_OPTION_BACKEND (5): TX_BACKEND_TCC, TX_BACKEND_CC


class Program:
    """A compiled .tx program (tensorexpr.compile, tensorexpr.load).

    prog(A=a, B=b, n=64) binds the `in` (and `inout`) tensors to numpy arrays,
    sets dims given as keyword ints (others are inferred from the arrays),
    runs, and returns a dict {name: array} of every `out` and `inout` tensor.
    Always a dict, even for one output. out={"C": c} (or C=c) writes into
    given arrays instead of new ones; `inout` arrays are updated in place.
    A tensor whose name is not a Python identifier is passed in the
    positional dict: prog({"in": x}). A tensor called out is bound by
    out=array (or in the dict); out= then takes no dict. A sparse map is given as a boolean
    mask over its (source modes, target modes).

    One Program may be called from several threads: calls are serialised by
    a lock per Program (the library allows one thread per context at a time);
    different Programs run in parallel, and the GIL is released while a
    program runs."""

    def __init__(self, source, name=None, opt_level=None, threads=None, huge_pages=None, backend=None):
        if isinstance(source, str):
            source = source.encode("utf-8")
        self._ctx = self._p = None
        self._lock = threading.Lock()
        ctx = lib.tx_new()
        if not ctx:
            raise MemoryError("tx_new")
        self._ctx = ctx
        if opt_level is not None:
            lib.tx_set_option(ctx, 1, int(opt_level))
        if threads is not None:
            lib.tx_set_option(ctx, 3, int(threads))
        if huge_pages is not None:  # TX_OPTION_HUGE_PAGES: large buffers advised MADV_HUGEPAGE
            lib.tx_set_option(ctx, 5, 1 if huge_pages else 0)
        if backend is not None:
            if backend not in _BACKENDS:
                raise ValueError("backend %r: use 'tcc' or 'cc'" % (backend,))
            lib.tx_set_option(ctx, 6, _BACKENDS[backend])
        self.name = name or "program"
        fname = self.name.encode("utf-8")
        p = lib.tx_compile(ctx, source, len(source), fname)
        if not p:
            _raise_for(lib.tx_errcode(ctx) or TX_ERR_COMPILE, ctx)
        self._p = p
        info = TensorInfo()
        self.tensors = {}
        for i in range(lib.tx_tensor_count(p)):
            lib.tx_tensor_get(p, i, byref(info))
            t = Tensor(i, info)
            self.tensors[t.name] = t
        mi = MapInfo()
        self.maps = {}
        for i in range(lib.tx_map_count(p)):
            lib.tx_map_get(p, i, byref(mi))
            self.maps[mi.name.decode("utf-8")] = (mi.nsrc, mi.ndst)
        self.dims = sorted({d for t in self.tensors.values() for d in t.dims if isinstance(d, str)})
        self._dims_set = {}  # dims set by tx_set_dim: the library keeps them
        # binding plans of the repeated call (see _plan): only for programs of
        # in and out tensors, no sparse maps
        ts = list(self.tensors.values())
        self._in_names = tuple(t.name for t in ts if t.io == "in")
        self._plans = ({} if _run_arrays_raw is not None and DATA_OFFSET is not None and not self.maps and
                       all(t.io != "inout" for t in ts) else None)

    def __del__(self):
        if getattr(self, "_p", None):
            lib.tx_program_free(self._p)
            self._p = None
        if getattr(self, "_ctx", None):
            lib.tx_free(self._ctx)
            self._ctx = None

    def __repr__(self):
        return "<tensorexpr.Program %s: %s>" % (self.name, ", ".join(map(repr, self.tensors.values())))

    @property
    def inputs(self):
        return [n for n, t in self.tensors.items() if t.io != "out"]

    @property
    def outputs(self):
        return [n for n, t in self.tensors.items() if t.io != "in"]

    def _fail(self, st, what=None):
        _raise_for(st, self._ctx, self.tensors, what)

    @property
    def backend(self):
        """(backend, detail) of the code the last call ran: backend is "tcc"
        or "cc", detail says how it was made ("cached PATH", "compiled by
        ...", "fallback to tcc: REASON"); (None, None) before the first call
        (tx_backend(3))."""
        detail = ctypes.c_char_p()
        with self._lock:
            b = lib.tx_backend(self._p, byref(detail))
        return (b.decode() if b else None, detail.value.decode("utf-8", "replace") if detail.value else None)

    def c_source(self, name=None, no_blas=False, header=False):
        """The standalone C99 source (tx(5) §8), as tx_emit_c gives it."""
        n = c_size_t()
        with self._lock:
            if name is None and not no_blas and not header:
                ptr = lib.tx_emit_c(self._p, byref(n))
            else:
                class Opts(ctypes.Structure):  # tx_emit_options, every field (zero: the default)
                    _fields_ = [("name", ctypes.c_char_p), ("no_blas", ctypes.c_int), ("header", ctypes.c_int),
                                ("mpi", ctypes.c_int)]
                lib.tx_emit.restype = ctypes.c_void_p
                lib.tx_emit.argtypes = [ctypes.c_void_p, ctypes.POINTER(Opts), ctypes.POINTER(c_size_t)]
                o = Opts(name.encode() if name else None, int(no_blas), int(header), 0)
                ptr = lib.tx_emit(self._p, byref(o), byref(n))
            if not ptr:
                self._fail(lib.tx_errcode(self._ctx), "tx_emit_c")
            return take_string(ptr, n)

    def graph(self):
        """The optimised operation graph: a str (the listing) whose
        _repr_svg_ draws it with Graphviz in Jupyter."""
        texts = []
        with self._lock:
            for dot in (0, 1):
                n = c_size_t()
                ptr = lib.tx_graph(self._p, dot, byref(n))
                if not ptr:
                    self._fail(lib.tx_errcode(self._ctx), "tx_graph")
                texts.append(take_string(ptr, n))
        return Graph(texts[0], texts[1])

    def __call__(self, bindings=None, /, *, out=None, **kwargs):
        if out is not None and not isinstance(out, Mapping):
            # out= takes a dict; an array there is the tensor of that name
            # (LANGUAGE.md 2 allows a tensor called out), else a mistake
            if "out" not in self.tensors:
                raise TypeError("out= takes a dict of arrays by tensor name, as out={%r: array}; "
                                "%s has no tensor called 'out'" % ((self.outputs or ["C"])[0], self.name))
            kwargs["out"], out = out, None
        # the repeated call: every in tensor given by keyword as an exact
        # ndarray whose (shape, strides, dtype) a successful call had before
        # (then checked), no dims, no out=: new result arrays and one
        # library call (tx_run_arrays_at) through the plan made then
        plans = self._plans
        if plans is not None and bindings is None and out is None and not self._dims_set:
            try:
                arrs = [kwargs[k] for k in self._in_names]
                plan = plans.get(tuple([x for a in arrs for x in (a.shape, a.strides, a.dtype)]))
            except (KeyError, AttributeError, TypeError):
                plan = None
            if plan is not None and len(kwargs) == len(arrs) and all([type(a) is _ndarray for a in arrs]):
                names, outs, in_at, out_at, ptrs, args = plan
                res = [_empty(shape, dt) for shape, dt in outs]
                with self._lock:
                    for i, a in zip(in_at, arrs):
                        ptrs[i] = id(a) + DATA_OFFSET
                    for i, r in zip(out_at, res):
                        ptrs[i] = id(r) + DATA_OFFSET
                    st = _run_arrays_raw(*args)
                    if st:
                        self._fail(st)
                return dict(zip(names, res))
        args = dict(bindings) if bindings else {}
        args.update(kwargs)
        given_out = dict(out) if out else {}
        for k in given_out:
            t = self.tensors.get(k)
            if t is None or t.io == "in":
                raise TypeError("out=: %r is not an out or inout tensor of %s (those are: %s)"
                                % (k, self.name, ", ".join(self.outputs) or "none"))
        tensors, maps, dims = {}, {}, {}
        for k, v in args.items():
            if k in self.tensors:
                if self.tensors[k].io == "out":
                    given_out[k] = v
                else:
                    tensors[k] = v
            elif k in self.maps:
                maps[k] = v
            elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                dims[k] = int(v)
            else:
                raise TypeError("%s has no tensor or sparse map %r (and a dim is given as an int); "
                                "tensors: %s; maps: %s" % (self.name, k, ", ".join(self.tensors) or "none",
                                                           ", ".join(self.maps) or "none"))
        for k, t in self.tensors.items():
            if t.io != "out" and k not in tensors:
                raise TypeError("%s: missing %s tensor %r" % (self.name, t.io, k))
        for k in self.maps:
            if k not in maps:
                raise TypeError("%s: missing sparse map %r (a boolean mask)" % (self.name, k))
        # validate and convert in Python before any C call
        arrays = {}
        for k, v in tensors.items():
            t = self.tensors[k]
            if t.io == "inout":
                if not isinstance(v, np.ndarray):
                    raise TypeError("inout tensor %r must be a numpy array (it is updated in place)" % k)
                if v.dtype != t.dtype:
                    raise DTypeError("inout tensor %r is declared %s; the array is %s" % (k, t.dtype, v.dtype))
                if not v.flags.writeable:
                    raise ValueError("inout tensor %r: the array is read-only" % k)
                a = v
            else:
                a = np.asarray(v)
                check_numeric(a, "tensor %r" % k, t.dtype.kind == "c")
                if a.dtype != t.dtype:
                    a = a.astype(t.dtype)
            self._check_shape(t, a)
            arrays[k] = a
        for k, v in given_out.items():
            t = self.tensors[k]
            if not isinstance(v, np.ndarray):
                raise TypeError("out tensor %r must be given as a numpy array" % k)
            if v.dtype != t.dtype:
                raise DTypeError("out tensor %r is declared %s; the array is %s" % (k, t.dtype, v.dtype))
            if not v.flags.writeable:
                raise ValueError("out tensor %r: the array is read-only" % k)
            self._check_shape(t, v)
        # dims: given ones, then every dim set by an earlier call is re-set
        # from this call's arrays (the library keeps a set dim)
        inferred = {}
        for k, a in list(arrays.items()) + list(given_out.items()):
            for d, n in zip(self.tensors[k].dims, a.shape):
                if isinstance(d, str):
                    if d in inferred and inferred[d] != n and d not in dims:
                        raise BindError("dim %r is %d in one array and %d in %r" % (d, inferred[d], n, k))
                    inferred.setdefault(d, n)
        keep = []
        results = {}
        staged = []
        p = self._p
        with self._lock:
            for d, n in dims.items():
                if n < 0:
                    raise ValueError("dim %r: extent %d is negative" % (d, n))
                st = lib.tx_set_dim(p, d.encode("utf-8"), n)
                if st:
                    msg = lib.tx_errmsg(self._ctx).decode("utf-8", "replace")
                    raise TypeError("%s: %s" % (self.name, msg)) if "no dim" in msg else BindError(msg, st)
                self._dims_set[d] = n
            for d in set(self._dims_set) - set(dims):
                if d in inferred:
                    lib.tx_set_dim(p, d.encode("utf-8"), inferred[d])
                    self._dims_set[d] = inferred[d]
            known = dict(self._dims_set)
            known.update(inferred)
            for k, a in arrays.items():
                t = self.tensors[k]
                shape_c = (c_int64 * a.ndim)(*a.shape)
                if t.io == "inout":
                    alive, st, tmp = bind_output(p, t.name_b, a, t.code, shape_c, True)
                    if tmp is not None:
                        staged.append((a, tmp))
                    results[k] = a
                else:
                    alive, st = bind_input(p, t.name_b, a, t.code, shape_c)
                keep.append((alive, shape_c))
                if st:
                    self._fail(st, "tensor %r" % k)
            for k, t in self.tensors.items():
                if t.io != "out":
                    continue
                if k in given_out:
                    a = given_out[k]
                elif all(isinstance(d, str) and d in known or not isinstance(d, str) and d >= 0 for d in t.dims):
                    a = np.empty(tuple(known[d] if isinstance(d, str) else d for d in t.dims), t.dtype)
                else:  # an extent that is a dim expression: ask the library
                    shape = (c_int64 * max(len(t.dims), 1))()
                    st = lib.tx_tensor_shape(p, t.name_b, shape)
                    if st:
                        self._fail(st, "the shape of out tensor %r (give it with out= or set its dims)" % k)
                    a = np.empty(tuple(shape[:len(t.dims)]), t.dtype)
                shape_c = (c_int64 * a.ndim)(*a.shape)
                alive, st, tmp = bind_output(p, t.name_b, a, t.code, shape_c, False)
                if tmp is not None:
                    staged.append((a, tmp))
                keep.append((alive, shape_c))
                if st:
                    self._fail(st, "tensor %r" % k)
                results[k] = a
            for k, mask in maps.items():
                nsrc, ndst = self.maps[k]
                shape = (c_int64 * (nsrc + ndst))()
                kb = k.encode("utf-8")
                st = lib.tx_map_shape(p, kb, shape)
                if st:
                    self._fail(st, "sparse map %r" % k)
                mask = np.asarray(mask)
                if mask.shape != tuple(shape):
                    raise BindError("sparse map %r: the mask has shape %s; the map's (source, target) "
                                    "extents are %s" % (k, mask.shape, tuple(shape)))
                sm, arrs = sparse_map_of(mask, nsrc)
                keep.append((sm, arrs))
                st = lib.tx_bind_sparse(p, kb, byref(sm))
                if st:
                    self._fail(st, "sparse map %r" % k)
            st = lib.tx_run(p)
            if st:
                self._fail(st)
        for a, tmp in staged:
            a[...] = tmp
        del keep
        if (plans is not None and bindings is None and out is None and not self._dims_set and not staged and
                set(kwargs) == set(self._in_names)):
            self._plan(arrays, kwargs, results)
        return {k: results[k] for k in self.tensors if k in results}

    def _plan(self, arrays, given, results):
        """After a successful call with the in tensors ARRAYS (by name, as
        bound; GIVEN: as given) and the new out arrays RESULTS: the binding plan of later
        calls with the same shapes, strides and dtypes (what tx_run_arrays_at
        takes, every tensor in the library's order: the addresses of the
        arrays' data fields filled in per call, shapes, strides in elements), if all of them are exact
        ndarrays of the declared dtype that the library reads in place."""
        arrs = [arrays.get(k) for k in self._in_names]
        if not all([type(a) is _ndarray and a is given[k] for a, k in zip(arrs, self._in_names)]):
            return  # converted, or not an ndarray
        names, outs, in_at, out_at, shapes, strides = [], [], [], [], [], []
        for i, (k, t) in enumerate(self.tensors.items()):
            a = arrays[k] if t.io == "in" else results[k]
            if a.dtype != t.dtype or any(st % a.itemsize for st in a.strides):
                return
            if t.io == "in":
                in_at.append(i)
            else:
                out_at.append(i)
                names.append(k)
                outs.append((a.shape, a.dtype))
            shapes += a.shape
            strides += [st // a.itemsize for st in a.strides]
        ptrs = (c_void_p * max(1, len(self.tensors)))()
        args = (c_void_p(self._p), ptrs, (c_int64 * max(1, len(shapes)))(*shapes),
                (c_int64 * max(1, len(strides)))(*strides))
        plans = self._plans
        if len(plans) >= PLANS:
            plans.clear()
        plans[tuple([x for a in arrs for x in (a.shape, a.strides, a.dtype)])] = (
            tuple(names), tuple(outs), tuple(in_at), tuple(out_at), ptrs, args)

    def _check_shape(self, t, a):
        if a.ndim != len(t.dims):
            raise BindError("tensor %r has %d modes [%s]; the array has %d (shape %s)"
                            % (t.name, len(t.dims), ", ".join(map(str, t.dims)), a.ndim, a.shape))
        for m, (d, n) in enumerate(zip(t.dims, a.shape)):
            if isinstance(d, int) and d >= 0 and d != n:
                raise BindError("tensor %r: mode %d has the constant extent %d; the array has %d"
                                % (t.name, m, d, n))


def compile(source, name=None, **options):
    """Compiles .tx SOURCE (str or bytes) into a Program. NAME is the file
    name used in diagnostics and for the C function (default "program").
    Options: opt_level (0, 1, 2), threads, huge_pages (bool), backend ("tcc",
    the default: libtcc in memory; "cc": the system compiler at -O3, cached
    on disk, libtcc if it fails). Raises CompileError."""
    return Program(source, name=name, **options)


def load(path, **options):
    """Compiles the .tx file at PATH (diagnostics name it)."""
    with open(path, "rb") as f:
        src = f.read()
    return Program(src, name=os.fspath(path), **options)
