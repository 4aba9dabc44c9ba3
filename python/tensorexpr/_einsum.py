"""tensorexpr.einsum: numpy.einsum's signature and results, through a .tx
program compiled once per (subscripts, shapes, strides, dtypes) and cached."""
import ctypes
import threading
from ctypes import c_int64, c_void_p

import numpy as np

from . import _core
from ._core import _CODE, DTypeError, Program, bind_input, bind_output, check_numeric
from ._lib import DATA_OFFSET, lib

_bind = lib.tx_bind
_run = lib.tx_run
_run_arrays = getattr(lib, "tx_run_arrays_at", None)
# the repeated call's own function object, without argtypes: its arguments
# are ctypes objects made once per cache entry, which ctypes passes as they
# are (argtypes would convert each on every call: a third of the call's
# cost). tx_run_arrays_at reads each array's data pointer at the address it
# is given: the address of the ndarray's data field, id(a) + DATA_OFFSET,
# an addition (reading the pointer out here would make a ctypes object)
_run_arrays_raw = None
if _run_arrays is not None:
    _run_arrays_raw = lib["tx_run_arrays_at"]
    _run_arrays_raw.restype = ctypes.c_int
_ndarray = np.ndarray
_empty = np.empty

CACHE_SIZE = 256
_cache = {}
_direct = {}  # the direct entries of _cache (dtype=None): key without dtype -> what the call needs
_cache_lock = threading.Lock()
_parsed = {}
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_F = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64), np.dtype(np.complex128))
_TX_TYPE = dict(zip(_F, ("f32", "f64", "c64", "c128")))     # the .tx element type of each


def _parse(subscripts):
    """'ij,jk->ik' → ([['i','j'], ['j','k']], ['i','k'] or None); '...' is
    kept as the item '...'. ValueError with numpy's wording when malformed."""
    r = _parsed.get(subscripts)
    if r is not None:
        return r
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, _, rhs = s.partition("->")
        if "->" in rhs or "-" in rhs or ">" in rhs:
            bad = "-" if "-" in rhs else ">"
            raise ValueError("invalid subscript '%s' in einstein sum subscripts string, subscripts must be "
                             "letters" % bad)
    else:
        lhs, rhs = s, None

    def terms(text, k):
        out = []
        i = 0
        while i < len(text):
            c = text[i]
            if c == ".":
                if text[i:i + 3] != "..." or "..." in out:
                    where = "output" if k < 0 else "operand %d" % k
                    if text[i:i + 3] == "...":
                        raise ValueError("einstein sum subscripts string contains more than one ellipsis "
                                         "('...') in %s" % where)
                    raise ValueError("einstein sum subscripts string contains a '.' that is not part of an "
                                     "ellipsis ('...') in %s" % where)
                out.append("...")
                i += 3
                continue
            if c not in _LETTERS:
                raise ValueError("invalid subscript '%s' in einstein sum subscripts string, subscripts must "
                                 "be letters" % c)
            out.append(c)
            i += 1
        return out

    ins = [terms(t, k) for k, t in enumerate(lhs.split(","))]
    out = None
    if rhs is not None:
        out = terms(rhs, -1)
        seen = set()
        for c in out:
            if c in seen and c != "...":
                raise ValueError("einstein sum subscripts string includes output subscript '%s' multiple "
                                 "times" % c)
            seen.add(c)
        used = {c for t in ins for c in t}
        for c in out:
            if c not in used and c != "...":
                raise ValueError("einstein sum subscripts string included output subscript '%s' which never "
                                 "appeared in an input" % c)
    r = (ins, out)
    if len(_parsed) < 4096:
        _parsed[subscripts] = r
    return r


def _sublist_to_str(sub):
    s = []
    for x in sub:
        if x is Ellipsis:
            s.append("...")
        else:
            x = int(x)
            if not 0 <= x < 52:
                raise ValueError("subscript is not within the valid range [0, 52)")
            s.append(_LETTERS[x])
    return "".join(s)


def _interleaved(args):
    args = list(args)
    ops, subs = [], []
    while len(args) >= 2:
        ops.append(args.pop(0))
        subs.append(_sublist_to_str(args.pop(0)))
    s = ",".join(subs)
    if args:
        s += "->" + _sublist_to_str(args[0])
    return s, ops


def _label(c):
    return "_%d" % int(c[1:]) if c[0] == "#" else c


class _Entry:
    """One compiled einsum: the program, and how to bind each call's arrays."""
    __slots__ = ("prog", "p", "lock", "ops", "out_name", "out_shape", "out_shape_c", "out_dtype", "zeros",
                 "source", "direct", "ptrs", "shapes", "strides", "n", "view", "args", "out0", "perm", "mem_shape")


def _build(subscripts, ops, dtype, order="K"):
    ins, out = _parse(subscripts)
    if len(ins) != len(ops):
        raise ValueError("more operands provided to einstein sum function than specified in the subscripts "
                         "string" if len(ops) > len(ins) else
                         "fewer operands provided to einstein sum function than specified in the subscripts "
                         "string")
    # expand '...' into generated labels '#k', right-aligned
    nell = 0
    expanded = []
    for k, (t, a) in enumerate(zip(ins, ops)):
        nl = len(t) - ("..." in t)
        if "..." in t:
            e = a.ndim - nl
            if e < 0:
                raise ValueError("operand %d has more subscripts than dimensions... einstein sum subscripts "
                                 "string contains too many subscripts for operand %d" % (k, k))
            nell = max(nell, e)
        elif a.ndim != nl:
            if a.ndim > nl:
                raise ValueError("operand has more dimensions than subscripts given in einstein sum, but no "
                                 "'...' ellipsis provided to broadcast the extra dimensions.")
            raise ValueError("einstein sum subscripts string contains too many subscripts for operand %d" % k)
    for t, a in zip(ins, ops):
        if "..." in t:
            i = t.index("...")
            e = a.ndim - (len(t) - 1)
            t = t[:i] + ["#%d" % (nell - e + j) for j in range(e)] + t[i + 1:]
        expanded.append(t)
    ell = ["#%d" % j for j in range(nell)]
    if out is None:
        counts = {}
        for t in ins:
            for c in t:
                if c != "...":
                    counts[c] = counts.get(c, 0) + 1
        outl = ell + sorted(c for c, n in counts.items() if n == 1)
    else:
        if "..." not in out and nell > 0:
            raise ValueError("output has more dimensions than subscripts given in einstein sum, but no '...' "
                             "ellipsis provided to broadcast the extra dimensions.")
        outl = []
        for c in out:
            outl.extend(ell if c == "..." else [c])
    # extents: per label the largest; 1 broadcasts
    ext = {}
    for k, (t, a) in enumerate(zip(expanded, ops)):
        within = {}
        for c, n in zip(t, a.shape):
            if c in within and within[c] != n:
                raise ValueError("dimensions in operand %d for collapsing index '%s' don't match (%d != %d)"
                                 % (k, _label(c), within[c], n))
            within[c] = n
            if c not in ext or ext[c] == 1:
                ext[c] = n
            elif n != 1 and n != ext[c]:
                raise ValueError("operands could not be broadcast together with remapped shapes "
                                 "[original->remapped]: label '%s' has extents %d and %d" % (_label(c), ext[c], n))
    # one operand, nothing summed: numpy returns a view (a transpose, a
    # diagonal) of the operand, whatever dtype= says, and so does this
    view = len(ops) == 1 and set(outl) == set(expanded[0])
    if view:
        out_dtype = ops[0].dtype
    elif dtype is not None:
        dtype = np.dtype(dtype)
        check_numeric(np.empty(0, dtype), "einsum dtype=")
        if dtype not in _F:
            raise DTypeError("einsum: dtype=%s: tensorexpr computes in float32, float64, complex64 or "
                             "complex128" % dtype)
        out_dtype = dtype
    else:
        out_dtype = np.result_type(*[a.dtype for a in ops])
    e = _Entry()
    e.out_shape = tuple(ext[c] for c in outl)
    mem = _memory_order(outl, expanded, order)
    e.perm = None if mem == outl else tuple(mem.index(c) for c in outl)
    e.mem_shape = tuple(ext[c] for c in mem)
    e.out_dtype = out_dtype
    e.zeros = any(n == 0 for n in ext.values())
    e.ops = []
    e.prog = None
    e.source = None
    e.direct = False
    e.out0 = None
    e.view = None
    if e.zeros:
        return e
    if view:  # the strides are part of the cache key
        t, a = expanded[0], ops[0]
        if len(set(t)) == len(t):
            e.view = (tuple(t.index(c) for c in outl), None)
        else:
            e.view = (e.out_shape, tuple(sum(st for c2, st in zip(t, a.strides) if c2 == c) for c in outl))
        return e
    tx = lambda d: _TX_TYPE[np.dtype(d)]
    lines = ["# einsum %r" % subscripts]
    dims = []
    for c in sorted(ext, key=lambda c: (c[0] == "#", c)):
        dims.append("n%s = %d" % (_label(c), ext[c]))
    if dims:
        lines.append("dim %s;" % ", ".join(dims))
    terms = []
    decls = []
    for k, (t, a) in enumerate(zip(expanded, ops)):
        keep_axes = [m for m, c in enumerate(t) if not (a.shape[m] == 1 and ext[c] != 1)]
        labels = [t[m] for m in keep_axes]
        shape = tuple(a.shape[m] for m in keep_axes)
        cast = out_dtype if dtype is not None else a.dtype
        name = "A%d" % k
        decls.append("in %s %s%s;" % (tx(cast), name,
                                      "[%s]" % ", ".join("n" + _label(c) for c in labels) if labels else ""))
        terms.append('%s("%s")' % (name, ",".join(_label(c) for c in labels)) if labels else name)
        e.ops.append((name.encode(), shape if len(keep_axes) != a.ndim else None, cast,
                      _CODE[np.dtype(cast)], (c_int64 * len(shape))(*shape), len(shape)))
    lines += decls
    lines.append("out %s R%s;" % (tx(out_dtype), "[%s]" % ", ".join("n" + _label(c) for c in mem) if mem else ""))
    lhs = 'R("%s")' % ",".join(_label(c) for c in mem) if mem else "R"
    lines.append("%s = %s;" % (lhs, " * ".join(terms)))
    e.source = "\n".join(lines) + "\n"
    e.prog = Program(e.source, name="einsum")
    e.p = e.prog._p
    e.lock = e.prog._lock
    e.out_name = b"R"
    e.out_shape_c = (c_int64 * len(e.mem_shape))(*e.mem_shape)
    # the direct call (tx_run_arrays_at): every operand used as it is, its
    # layout part of the cache key; the result a new C-ordered array in
    # its memory order (returned as its transpose e.perm)
    e.n = len(ops)
    e.direct = (_run_arrays is not None and DATA_OFFSET is not None and
                all(shape is None and a.dtype == cast and all(st % a.itemsize == 0 for st in a.strides)
                    for (_, shape, cast, _, _, _), a in zip(e.ops, ops)))
    if e.direct:
        shapes, strides = [], []
        for a in ops:
            shapes += a.shape
            strides += [st // a.itemsize for st in a.strides]
        shapes += e.mem_shape
        rm = 1
        out_strides = []
        for n in reversed(e.mem_shape):
            out_strides.append(rm)
            rm *= n
        strides += reversed(out_strides)
        e.shapes = (c_int64 * max(1, len(shapes)))(*shapes)
        e.strides = (c_int64 * max(1, len(strides)))(*strides)
        e.ptrs = (c_void_p * (len(ops) + 1))()
        e.args = (c_void_p(e.p), e.ptrs, e.shapes, e.strides)
        # a result that is a number goes into one 0-d array of the entry
        # (its address set once, under the entry's lock) and is returned as
        # a numpy scalar, as numpy.einsum returns it
        e.out0 = None
        if not e.out_shape:
            e.out0 = np.empty((), e.out_dtype)
            e.ptrs[len(ops)] = id(e.out0) + DATA_OFFSET
    return e


def _value_typed(ops):
    """Whether numpy may type the result of OPS (arrays) by the value of a
    0-d one: a 0-d operand among operands of two dtypes or more."""
    return any([o.ndim == 0 for o in ops]) and len(set([o.dtype for o in ops])) > 1


def _value_dtype(ops):
    """numpy's result type for OPS (arrays) where it differs from the
    promotion of their dtypes, else None. numpy before 2.0 types a 0-d
    operand by its value (np.result_type(x32, np.float64(0.5)) is float32:
    einsum then computes in float32), numpy 2 by its dtype (NEP 50); this
    asks the installed numpy."""
    if not _value_typed(ops):
        return None
    try:
        by_value, by_dtype = np.result_type(*ops), np.result_type(*[o.dtype for o in ops])
    except TypeError:
        return None
    return by_value if by_value != by_dtype and by_value in _F else None


def _get(key, subscripts, ops, dtype, order="K"):
    e = _cache.get(key)
    if e is not None:
        return e
    with _cache_lock:
        e = _cache.get(key)
        if e is None:
            e = _build(subscripts, ops, dtype, order)
            if len(_cache) >= CACHE_SIZE:  # the oldest half goes
                for k in list(_cache)[:CACHE_SIZE // 2]:
                    del _cache[k]
                    _direct.pop(_direct_key(k), None)
            _cache[key] = e
            if e.direct and dtype is None and order == "K" and not _value_typed(ops):
                _direct[_direct_key(key)] = (e.mem_shape, e.out_dtype, e.ptrs, e.lock, e.args, e.prog, e.out0,
                                             e.perm)
        return e


def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=None):
    """numpy.einsum(subscripts, *operands, out=None, dtype=None) computed by a
    tensorexpr kernel compiled once per (subscripts, shapes, strides, dtypes)
    and cached. float32, float64, complex64 and complex128, mixed as numpy
    mixes them (float32 with complex128 is complex128, float64 with
    complex64 is complex128; a 0-d operand typed by its value where the
    installed numpy does so, before numpy 2.0: a float64 number with a
    float32 matrix computes in float32). Integer and bool operands mix as
    numpy mixes them too: with floats they compute in the float type numpy
    promotes to; an integer or bool result (or dtype=) has numpy's values,
    wrapping around on overflow as numpy's integers do (bool: any of the
    products), computed by tensorexpr in float64 when no partial sum can
    exceed 2^53 in magnitude (then every value is an exact integer, and
    the result is converted to the integer type modulo its width), and by
    numpy.einsum beyond that bound, where float64 would round.
    order is numpy's: 'C' a C-ordered result, 'F' a Fortran-ordered one,
    'A' Fortran when every operand is, else C; 'K' (the default) lets a
    contraction of two operands lay its result out as its matrix product
    makes it, returned as a transposed view (as numpy.einsum(optimize=True)
    and torch.einsum return it), which spares a permuting copy; with one
    operand a view where nothing is summed (whatever order= says, as
    numpy's), else C order. casting applies as numpy applies it: to the
    operands' cast to their common type or dtype= (by default float64 to
    float32 is a TypeError), and to out= both ways; a view of one operand
    ignores dtype= unless it is written into out. out= takes part in the
    computation's type as in numpy: float32 operands into a float64 out
    are summed in float64; integer or bool operands into an out of another
    type are numpy.einsum's to compute; where the result has extent 1 and
    out more, the result is broadcast into out. Operands in the other byte
    order are read through a native copy; float16 and long double ones,
    which the library has no type for, are numpy.einsum's. optimize is
    accepted and ignored (tensorexpr picks the contraction order)."""
    # the common call first: ndarrays (exactly: their data pointer is read
    # from the object), no dtype= or out=, whose (subscripts, shapes,
    # strides, dtypes) were seen before and can be read in place: one
    # library call. _direct holds what that call needs as one tuple (one
    # lookup and one unpacking instead of an attribute per item); its key
    # is the flat tuple of _key without dtype=, spelt out for one and two
    # operands
    n = len(operands)
    if out is None and dtype is None and order == "K" and casting == "safe":
        d = None
        try:
            if n == 2:
                a, b = operands
                d = _direct.get((subscripts, a.shape, a.strides, a.dtype, b.shape, b.strides, b.dtype))
                if d is not None and type(a) is _ndarray and type(b) is _ndarray:
                    shape, rdt, ptrs, lock, args, prog, out0, perm = d
                    if out0 is None:
                        r = _empty(shape, rdt)
                        lock.acquire()
                        try:
                            ptrs[0] = id(a) + DATA_OFFSET
                            ptrs[1] = id(b) + DATA_OFFSET
                            ptrs[2] = id(r) + DATA_OFFSET
                            st = _run_arrays_raw(*args)
                        finally:
                            lock.release()
                        if perm is not None and not st:
                            return r.transpose(perm)
                    else:  # a number: written into the entry's 0-d array, returned as a scalar
                        lock.acquire()
                        try:
                            ptrs[0] = id(a) + DATA_OFFSET
                            ptrs[1] = id(b) + DATA_OFFSET
                            st = _run_arrays_raw(*args)
                            r = out0[()]
                        finally:
                            lock.release()
                    if not st:
                        return r
                d = None  # not arrays, or a failed run
            elif n == 1:
                a, = operands
                d = _direct.get((subscripts, a.shape, a.strides, a.dtype))
                if d is not None and type(a) is _ndarray:
                    shape, rdt, ptrs, lock, args, prog, out0, perm = d
                    if out0 is None:
                        r = _empty(shape, rdt)
                        lock.acquire()
                        try:
                            ptrs[0] = id(a) + DATA_OFFSET
                            ptrs[1] = id(r) + DATA_OFFSET
                            st = _run_arrays_raw(*args)
                        finally:
                            lock.release()
                    else:
                        lock.acquire()
                        try:
                            ptrs[0] = id(a) + DATA_OFFSET
                            st = _run_arrays_raw(*args)
                            r = out0[()]
                        finally:
                            lock.release()
                    if not st:
                        return r
                d = None  # not arrays, or a failed run
            else:
                d = _direct.get((subscripts,) + tuple([x for o in operands for x in (o.shape, o.strides, o.dtype)]))
                if d is not None and not all([type(x) is _ndarray for x in operands]):
                    d = None
        except (TypeError, AttributeError):  # unhashable (the interleaved form), not arrays
            d = None
        if d is not None:  # three operands or more
            shape, rdt, ptrs, lock, args, prog, out0, perm = d
            r = _empty(shape, rdt) if out0 is None else out0
            with lock:
                for i, x in enumerate(operands):
                    ptrs[i] = id(x) + DATA_OFFSET
                ptrs[n] = id(r) + DATA_OFFSET
                st = _run_arrays_raw(*args)
                if out0 is not None:
                    r = out0[()]
            if not st:
                return r if perm is None else r.transpose(perm)
        # a failed run: the general path below binds by name and reports it
    elif dtype is None and type(out) is _ndarray and casting == "safe":
        # out= a C-ordered writeable ndarray of the result's shape and dtype:
        # the same one call, writing into it (the library stages it if it
        # overlaps an operand)
        try:
            d = _direct.get((subscripts,) + tuple([x for o in operands for x in (o.shape, o.strides, o.dtype)]))
            if d is not None and not all([type(x) is _ndarray for x in operands]):
                d = None
        except (TypeError, AttributeError):
            d = None
        if (d is not None and d[7] is None and out.dtype == d[1] and out.shape == d[0] and
                out.flags.c_contiguous and out.flags.writeable):
            shape, rdt, ptrs, lock, args, prog, out0, perm = d
            with lock:
                for i, x in enumerate(operands):
                    ptrs[i] = id(x) + DATA_OFFSET
                ptrs[n] = id(out) + DATA_OFFSET
                st = _run_arrays_raw(*args)
                if out0 is not None:  # the entry's own result array again
                    ptrs[n] = id(out0) + DATA_OFFSET
            if not st:
                return out
    if order not in ("K", "C", "F", "A"):  # numpy also takes None (K) and lower case
        if order is not None and not isinstance(order, str):
            raise TypeError("order must be str, not %s" % type(order).__name__)
        o = "K" if order is None else order.upper()
        if o not in ("K", "C", "F", "A"):
            raise ValueError("order must be one of 'C', 'F', 'A', or 'K' (got %r)" % (order,))
        order = o
    e = None
    try:
        if order == "K" and all([type(x) is _ndarray for x in operands]):
            e = _cache.get(_key(subscripts, dtype, operands))
    except TypeError:
        e = None
    if e is not None and e.view is not None and out is None:
        r = _view(e, operands[0])
        return r if r.ndim else r[()]
    if not isinstance(casting, str):
        raise TypeError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe' (got %s)"
                        % type(casting).__name__)
    if casting not in _CASTINGS:
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe' (got %r)"
                         % (casting,))
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved((subscripts,) + operands)
    ops = [o if type(o) is np.ndarray else np.asarray(o) for o in operands]
    # operands in another byte order: numpy reads them; the library takes
    # native ones (a copy)
    ops = [o if o.dtype.isnative else o.astype(o.dtype.newbyteorder("=")) for o in ops]
    user_dtype = dtype  # (dtype becomes the computation's type below)
    if out is not None and not isinstance(out, np.ndarray):
        raise TypeError("einsum: out must be a numpy array")
    if out is not None and not out.flags.writeable:  # numpy: ValueError too, before any cast
        raise ValueError("einsum: out is read-only")
    if any([_numpy_only(o.dtype) for o in ops]) or (dtype is not None and _numpy_only(np.dtype(dtype))):
        # half and long double: numpy's own einsum, in their precision
        return np.einsum(subscripts, *ops, out=out, dtype=dtype, order=order, casting=casting)
    if dtype is None and out is not None and out.dtype.kind in "biufc":
        # numpy's iterator computes in a type common to the operands and
        # out, then writes out: float32 operands into a float64 out are
        # summed in float64 (computed here so too); bool operands into an
        # int out count, uint8 ones into an int64 out do not wrap (numpy
        # computes those itself: its integer typing with out is its own)
        try:
            rt0 = (_numpy_type(subscripts, ops, None, casting) if _integral(ops, None) else
                   _value_dtype(ops) or np.result_type(*[o.dtype for o in ops]))
        except (TypeError, ValueError):
            rt0 = out.dtype  # numpy's error comes below
        if out.dtype != rt0:
            if rt0.kind in "fc" and out.dtype.kind in "fc":
                dtype = np.promote_types(rt0, out.dtype)
            else:
                return np.einsum(subscripts, *ops, out=out, order=order, casting=casting)
    cast_check = dtype is not None  # numpy casts the operands to dtype= by casting=
    if _integral(ops, dtype):
        try:
            rt = _numpy_type(subscripts, ops, dtype, casting)
        except TypeError:
            if _terms(subscripts, ops) is None:  # numpy reports a shape that does not fit first
                np.einsum(subscripts, *[np.zeros(o.shape, np.float64) for o in ops])
            raise
        if rt.kind in "biu":  # an integer or bool result, as numpy computes it
            return _integer(subscripts, ops, out, dtype, rt, order, casting)
        if dtype is None:  # integers with floats: numpy computes in the type they promote to
            dtype = rt
    if dtype is None:  # a 0-d operand may type the result by its value (numpy < 2): computed in that type
        dtype = _value_dtype(ops)
    if order == "A":
        order = "F" if all(o.flags.f_contiguous for o in ops) else "C"
    key = _key(subscripts, dtype, ops) + (() if order == "K" else (order,))
    e = _cache.get(key)
    if e is None:
        for k, o in enumerate(ops):
            check_numeric(o, "einsum operand %d" % k)
            if dtype is None and o.dtype not in _F:
                raise DTypeError("einsum operand %d is %s: tensorexpr computes in float32, float64, complex64 or "
                                 "complex128; pass "
                                 "dtype=float (or convert the operand)" % (k, o.dtype))
        e = _get(key, subscripts, ops, dtype, order)
    # numpy's checks in numpy's order: subscripts and shapes (_get did
    # them), out's shape, then the casts (operands, out)
    broadcast_out = None
    if out is not None and out.shape != e.out_shape:
        # numpy broadcasts the operands to out's shape where the result has
        # extent 1: the result, computed aside, broadcast into out
        if not _fits_out(e.out_shape, out.shape):
            raise ValueError("einsum: out has shape %s; the result's is %s" % (out.shape, e.out_shape))
        broadcast_out, out = out, None
    target = out if broadcast_out is None else broadcast_out
    if casting != "safe" or (target is not None and (target.dtype != e.out_dtype or user_dtype is not None)):
        # the casts numpy makes (operands to the computation's type, it to
        # out and back, by casting=, 0-d operands typed by value): numpy's
        # own verdict, on one element of each operand and of out
        probe = [orig if type(orig) is not np.ndarray and o.ndim == 0 else o if o.ndim == 0
                 else np.zeros((1,) * o.ndim, o.dtype) for orig, o in zip(operands, ops)]
        pout = None if target is None else np.empty((1,) * target.ndim, target.dtype)
        np.einsum(subscripts, *probe, out=pout, dtype=user_dtype, casting=casting)
    elif cast_check and (e.view is None or target is not None):
        # to dtype= by casting= (a view of one operand ignores dtype= unless
        # it is written into out)
        comp = np.dtype(dtype) if e.view is not None else e.out_dtype
        for k, o in enumerate(ops):
            if not np.can_cast(o, comp, casting=casting):
                raise TypeError("Cannot cast einsum operand %d from %r to %r according to the rule %r"
                                % (k, o.dtype, comp, casting))
    if e.zeros:
        r = np.zeros(e.out_shape, e.out_dtype, order="F" if order == "F" else "C")
        if target is not None:
            target[...] = r
            return target
        return r if r.ndim else r[()]  # a number as numpy's scalar, as numpy.einsum returns it
    if e.view is not None:
        r = _view(e, ops[0])
        if target is not None:  # into out: cast to dtype= first (checked above)
            if dtype is not None:
                r = r.astype(dtype)
            np.copyto(target, r, casting="unsafe")
            return target
        # a view, whatever order= says (numpy's too)
        return r if r.ndim else r[()]  # a number as numpy's scalar, as numpy.einsum returns it
    p = e.p
    keep = []
    with e.lock:
        # each array bound by name (tx_bind_array reads strided ones in place)
        for (name, shape, cast, code, shape_c, nd), a in zip(e.ops, ops):
            if a.dtype != cast:
                a = a.astype(cast)
            if shape is not None:
                a = a.reshape(shape)
            alive, st = bind_input(p, name, a, code, shape_c)
            keep.append(alive)
            if st:
                e.prog._fail(st)
        staged = None
        if out is not None and out.dtype == e.out_dtype and not _overlaps(out, ops):
            # R is declared in the result's memory order: out seen that way
            r = out if e.perm is None else out.transpose(tuple(np.argsort(e.perm)))
            alive, st, staged = bind_output(p, e.out_name, r, _CODE[out.dtype],
                                            e.out_shape_c, False)
            keep.append(alive)
        else:
            r = np.empty(e.mem_shape, e.out_dtype)
            st = _bind(p, e.out_name, r.ctypes.data, len(e.mem_shape), e.out_shape_c)
        if st:
            e.prog._fail(st)
        st = _run(p)
        if st:
            e.prog._fail(st)
    if staged is not None:
        r[...] = staged
        return out
    if broadcast_out is not None:
        np.copyto(broadcast_out, r if e.perm is None else r.transpose(e.perm), casting="unsafe")
        return broadcast_out
    if out is not None:
        if r.base is not out and r is not out:
            np.copyto(out, r if e.perm is None else r.transpose(e.perm), casting="unsafe")
        return out
    if e.perm is not None:
        r = r.transpose(e.perm)
    return r if r.ndim else r[()]  # a number as numpy's scalar, as numpy.einsum returns it


def _fits_out(shape, out_shape):
    """Whether a result of SHAPE can be written into an out of OUT_SHAPE:
    the same, or larger where the result has extent 1 (numpy broadcasts
    the operands to out's shape)."""
    return len(shape) == len(out_shape) and all([a == b or a == 1 for a, b in zip(shape, out_shape)])


def _numpy_only(dt):
    """Whether einsum leaves dtype DT to numpy.einsum: float16, long double
    and its complex, which the library has no type for."""
    return (dt.kind == "f" and dt.itemsize not in (4, 8)) or (dt.kind == "c" and dt.itemsize not in (8, 16))


def _integral(ops, dtype):
    """Whether an operand (an array of OPS) or dtype= is an integer or bool type."""
    return any([o.dtype.kind in "biu" for o in ops]) or (dtype is not None and np.dtype(dtype).kind in "biu")


def _numpy_type(subscripts, ops, dtype, casting):
    """The type of numpy.einsum's result for OPS (arrays), where one of them
    or dtype= is an integer or bool type: numpy's own answer, from the same
    call on one element of each operand (every extent 1 fits any
    subscripts), its TypeError included (an operand it would not cast).
    The installed numpy's rules, 0-d operands typed by value before 2.0."""
    for k, o in enumerate(ops):
        check_numeric(o, "einsum operand %d" % k)
    probe = [o if o.ndim == 0 else o[(slice(0, 1),) * o.ndim] for o in ops]
    return np.asarray(np.einsum(subscripts, *probe, dtype=dtype, casting=casting)).dtype


_EXACT = 2 ** 53  # every integer of at most this magnitude is a float64
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _terms(subscripts, ops):
    """The number of products each element of the result sums (the product
    of the extents of the labels summed away, 1s broadcast), or None if
    SUBSCRIPTS and OPS do not fit (the einsum that follows says why)."""
    try:
        ins, out = _parse(subscripts)
        if len(ins) != len(ops):
            return None
        ext, counts, ell = {}, {}, ()
        for t, a in zip(ins, ops):
            letters = [c for c in t if c != "..."]
            if "..." in t:
                i = t.index("...")
                e = a.ndim - len(letters)
                if e < 0:
                    return None
                try:  # the ellipsis dims broadcast together
                    ell = np.broadcast_shapes(ell, a.shape[i:i + e])
                except ValueError:
                    return None
                dims = a.shape[:i] + a.shape[i + e:]
            else:
                dims = a.shape
            if len(dims) != len(letters):
                return None
            own = {}
            for c, n in zip(letters, dims):
                if own.setdefault(c, n) != n:  # a diagonal of unequal extents
                    return None
                if c in ext and n != ext[c] and n != 1 and ext[c] != 1:  # extents that do not broadcast
                    return None
                ext[c] = max(ext.get(c, 1), n)
                counts[c] = counts.get(c, 0) + 1
        kept = set(out) if out is not None else {c for c, n in counts.items() if n == 1}
        n = 1
        for c, e in ext.items():
            if c not in kept:
                n *= e
        return n
    except (ValueError, TypeError):
        return None


def _integer(subscripts, ops, out, dtype, rt, order, casting):
    """einsum of integer or bool operands, or with an integer or bool dtype=
    (RT the result's type): numpy computes it in RT, wrapping around on
    overflow (bool: any of the products). When no partial sum can exceed
    2^53 in magnitude (the largest magnitude of each operand, at least 1,
    multiplied together and by the number of terms of a sum), tensorexpr
    computes the sum of products in float64, where every value is then an
    exact integer, and converts it to RT: the integer modulo 2^bits that
    numpy's wrapping arithmetic gives, whatever the order of the sums.
    Beyond that bound float64 cannot hold the sums exactly, and
    numpy.einsum computes the result. A view of one operand (a transpose,
    a diagonal) is numpy's view, as for floats."""
    args = (subscripts,) + tuple(ops)
    kw = {"out": out, "dtype": dtype, "order": order, "casting": casting}
    ins, outs = _parse(subscripts)
    if len(ops) == 1 and len(ins) == 1:  # nothing summed: a view, not a computation
        t = [c for c in ins[0] if c != "..."]
        kept = [c for c in outs if c != "..."] if outs is not None else [c for c in t if t.count(c) == 1]
        if set(t) <= set(kept):
            return np.einsum(*args, **kw)
    if dtype is not None:  # numpy casts the operands to dtype= by casting=
        for o in ops:
            if not np.can_cast(o, rt, casting=casting):
                raise TypeError("Cannot cast array data from %r to %r according to the rule %r"
                                % (o.dtype, rt, casting))
        ops = [o.astype(rt) for o in ops]
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError("einsum: out must be a numpy array")
        if not out.flags.writeable:
            raise ValueError("einsum: out is read-only")
    n = _terms(subscripts, ops)
    bound = n
    if bound is not None:
        for o in ops:
            if o.size and o.dtype.kind != "b":
                bound *= max(int(o.max()), -int(o.min()), 1)
    if bound is not None and bound > _EXACT:
        return np.einsum(*args, **kw)
    r = np.asarray(einsum(subscripts, *[o.astype(np.float64) for o in ops], order=order))
    r = r != 0 if rt.kind == "b" else r.astype(np.int64).astype(rt)
    if out is not None:
        if out.shape != r.shape and not _fits_out(r.shape, out.shape):
            raise ValueError("einsum: out has shape %s; the result's is %s" % (out.shape, r.shape))
        if not np.can_cast(rt, out.dtype, casting=casting):
            raise TypeError("einsum: cannot cast the result (%s) to out's %s with casting=%r"
                            % (rt, out.dtype, casting))
        if dtype is not None and not np.can_cast(out.dtype, rt, casting=casting):
            # numpy's loop reads out too: it must cast to dtype= and back
            raise TypeError("einsum: cannot cast out's %s to the computation's %s with casting=%r"
                            % (out.dtype, rt, casting))
        np.copyto(out, r, casting="unsafe")
        return out
    return r if r.ndim else r[()]


def _memory_order(outl, expanded, order):
    """The result's labels in the order the program lays them out in
    memory: OUTL (C order) for order 'C', reversed for 'F'. For 'K', a
    contraction of two operands whose written output interleaves the two
    operands' own labels ('ikac,kjcb->ijab') is laid out as its matrix
    product makes it: the labels both operands have, then the own labels of
    the operand that comes first in OUTL, then the other's, each group in
    OUTL's order ([i,a,j,b]); einsum returns it as a transposed view."""
    if order == "F":
        return outl[::-1]
    if order != "K" or len(expanded) != 2:
        return outl
    t0, t1 = expanded
    if not (set(t0) | set(t1)) - set(outl):  # nothing summed: not a matrix product
        return outl
    both = [c for c in outl if c in t0 and c in t1]
    own = [[c for c in outl if c in t and c not in u] for t, u in ((t0, t1), (t1, t0))]
    if not own[0] or not own[1]:
        return outl
    first = 0 if outl.index(own[0][0]) < outl.index(own[1][0]) else 1
    grouped = own[first] + own[1 - first]
    if [c for c in outl if c not in both] == grouped:
        return outl  # not interleaved: the product writes it as written
    return both + grouped


def _view(e, a):
    perm, strides = e.view
    if strides is None:
        return a.transpose(perm)
    return np.lib.stride_tricks.as_strided(a, perm, strides)


def _key(subscripts, dtype, ops):
    """The cache key: subscripts, dtype=, then each operand's shape, strides
    and dtype (the byte order included), flat."""
    return (subscripts, dtype) + tuple([x for o in ops for x in (o.shape, o.strides, o.dtype)])


def _direct_key(key):
    """The key of _direct for the _cache key KEY (dtype= left out)."""
    return key[:1] + key[2:]


def _overlaps(out, ops):
    # tx_bind_array computes an output that overlaps an input through a
    # temporary; tx_bind does not know, so compute aside and copy
    if _core._bind_array is not None:
        return False
    return any(np.may_share_memory(out, a) for a in ops)


def einsum_source(subscripts, *operands, dtype=None):
    """The .tx program einsum compiles for these operands (for reading);
    for an integer or bool result, the float64 one it computes in."""
    ops = [np.asarray(o) for o in operands]
    if _integral(ops, dtype):
        rt = _numpy_type(subscripts, ops, dtype, "unsafe")
        ops = [o.astype(np.float64) for o in ops] if rt.kind in "biu" else ops
        dtype = None if rt.kind in "biu" else rt
    return _build(subscripts, ops, dtype).source


def cache_clear():
    with _cache_lock:
        _cache.clear()
        _direct.clear()
