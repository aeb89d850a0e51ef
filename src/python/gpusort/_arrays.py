"""The array functions of gpusort: sort, sort_inplace, argsort and sort_by_key over numpy arrays.

They follow numpy's conventions on top of the library's in-memory sort (_gpusort._sort_memory),
which orders keys by the library's own rules. Where the two differ, the keys are converted here:

- floats: numpy puts every NaN last and holds -0.0 equal to +0.0, while the library orders floats
  by IEEE totalOrder (-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN). A copy of the keys in
  which every NaN is the canonical +NaN and -0.0 is +0.0 is sorted instead, and the original
  elements are carried along as values, so that the output keeps every bit (NaN payloads, -0.0);
- float16, which the library has no type for, is sorted as float32 (exact) in the same way;
- bool is sorted as u8; keys of the other byte order are described to the library as records
  with a big- or little-endian field; structured arrays as records with one field per numpy field.

Every sort is stable. An empty array is never handed to the library.
"""

import sys

import numpy as np

from . import _gpusort

__all__ = ["sort", "sort_inplace", "argsort", "sort_by_key"]

# The options of the in-memory sort, passed through to _gpusort._sort_memory.
_OPTION_NAMES = ("backend", "device", "threads", "memory", "device_memory", "tmp_dir", "progress", "notice")
# numpy's sort kinds: any of them is accepted, since every sort here is stable.
_NUMPY_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")
_FLOAT_ORDERS = ("numpy", "total")
_WIDTH_BITS = {1: "8", 2: "16", 4: "32", 8: "64"}


class _KeyField:
    """One field of the key as the library sees it: `kind` is a type name (u8 ... f64) or "bytes"."""

    def __init__(self, name, offset, kind, length, big_endian, descending):
        self.name, self.offset, self.kind, self.length = name, offset, kind, length
        self.big_endian, self.descending = big_endian, descending

    def as_tuple(self):
        return (self.offset, self.kind, self.length, self.big_endian, self.descending)


class _KeyPlan:
    """What the library sorts: `keys`, a C-contiguous 1-D array, either whole keys of `key_type` or
    records described by `fields`. `converted` says that `keys` is a converted copy, so that the
    caller's elements must be carried along as values to come out as they were."""

    def __init__(self, keys, key_type, fields, descending, converted):
        self.keys, self.key_type, self.fields = keys, key_type, fields
        self.descending, self.converted = descending, converted

    def call_arguments(self):
        return dict(key_type=self.key_type, record_size=self.keys.dtype.itemsize,
                    fields=[f.as_tuple() for f in self.fields], descending=self.descending)


# --- What a dtype becomes as a key ---------------------------------------------------------------

def _is_big_endian(dtype):
    order = dtype.byteorder
    return order == ">" or (order == "=" and sys.byteorder == "big")


def _field_kind(dtype, where):
    """The library's name for a key of `dtype` as it lies in memory (None: it must be converted
    first); ValueError for the dtypes that cannot be keys."""
    if dtype.names is not None:
        raise ValueError(f"{where} is a nested structure; gpusort sorts by fields of numbers or fixed bytes")
    if dtype.subdtype is not None:
        raise ValueError(f"{where} is a subarray ({dtype.subdtype[0]} of shape {dtype.subdtype[1]}); "
                         "gpusort sorts by fields of numbers or fixed bytes")
    kind, size = dtype.kind, dtype.itemsize
    if kind == "b":
        return "u8"
    if kind in "iu" and size in _WIDTH_BITS:
        return ("i" if kind == "i" else "u") + _WIDTH_BITS[size]
    if kind == "f" and size in (4, 8):
        return "f" + _WIDTH_BITS[size]
    if kind == "f" and size == 2:
        return None
    if kind in "SV":
        return "bytes"
    raise ValueError(f"{where} has dtype {dtype}, which gpusort cannot sort by "
                     "(integers, bool, float16/32/64 and fixed bytes S/V are supported)")


def _unlike_numpy_under_total_order(column):
    """Whether totalOrder would order the floats of `column` otherwise than numpy: where it holds
    a -0.0 (totalOrder puts it before +0.0) or a NaN that is not the canonical +NaN (totalOrder
    orders NaNs by sign and payload, numpy keeps them as they came)."""
    if np.any(np.signbit(column) & (column == 0)):
        return True
    nans = column[np.isnan(column)]
    native = nans.dtype.newbyteorder("=")
    bits = np.dtype(f"u{native.itemsize}")
    return bool(np.any(nans.astype(native).view(bits) != np.array(np.nan, dtype=native).view(bits)))


def _needs_conversion(column, float_order):
    """float16 always (it becomes float32); other floats in numpy's order where they hold what
    totalOrder orders otherwise (elsewhere the library's order is numpy's, and no copy is made)."""
    dtype = column.dtype
    if dtype.kind != "f":
        return False
    return dtype.itemsize == 2 or (float_order == "numpy" and _unlike_numpy_under_total_order(column))


def _converted(column, float_order):
    """The column as a native float32/64 array, with NaNs made +NaN and -0.0 made +0.0 in numpy's order."""
    target = np.float32 if column.dtype.itemsize <= 4 else np.float64
    key = column.astype(target)  # always a fresh, native copy; float16 to float32 is exact
    if float_order == "numpy":
        key[np.isnan(key)] = np.nan  # np.nan is the positive quiet NaN
        key[key == 0] = 0  # -0.0 becomes +0.0
    return key


# --- Which fields, in which directions ------------------------------------------------------------

def _directions(descending, count, names):
    """One direction for each of the `count` fields named in order (a bool: all of them)."""
    if isinstance(descending, (bool, np.bool_)):
        return [bool(descending)] * count
    directions = list(descending)
    if len(directions) != count or not all(isinstance(d, (bool, np.bool_)) for d in directions):
        raise ValueError(f"descending must be one bool or a list of {count} bools, one for each field of "
                         f"order ({', '.join(names)}); got {descending!r}")
    return [bool(d) for d in directions]


def _ordered_fields(dtype, order, descending):
    """(name, direction) of every field of a structured dtype, most significant first: those of
    `order` (numpy's meaning), then, as numpy breaks ties, the others in their order. A bool
    `descending` applies to them all; a list applies to the fields of `order`, the others ascending."""
    names = list(dtype.names)
    if order is None:
        named = names
    else:
        named = [order] if isinstance(order, str) else list(order)
        for name in named:
            if not isinstance(name, str) or name not in dtype.names:
                raise ValueError(f"order names no field {name!r} of the dtype {dtype} (fields: {', '.join(names)})")
        if len(set(named)) != len(named):
            raise ValueError(f"order names a field twice: {named}")
    directions = _directions(descending, len(named), named)
    rest = [name for name in names if name not in named]
    rest_direction = bool(descending) if isinstance(descending, (bool, np.bool_)) else False
    return list(zip(named, directions)) + [(name, rest_direction) for name in rest]


def _check_key_bytes(widths, structured):
    total = sum(widths)
    if total > _gpusort.MAX_KEY_BYTES:
        why = " (the fields that order leaves out count too: numpy breaks ties by them)" if structured else ""
        raise ValueError(f"the key is {total} bytes{why}; gpusort sorts by at most {_gpusort.MAX_KEY_BYTES} bytes of key")


# --- The key plan -----------------------------------------------------------------------------------

def _plain_plan(a, descending, float_order):
    """A 1-D array of numbers, bools or fixed bytes."""
    if not isinstance(descending, (bool, np.bool_)):
        raise ValueError(f"descending must be a bool for an array without fields; got {descending!r}")
    descending = bool(descending)
    kind = _field_kind(a.dtype, f"an array of {a.dtype}")
    if _needs_conversion(a, float_order):
        key = _converted(a, float_order)
        return _KeyPlan(key, "f32" if key.dtype.itemsize == 4 else "f64", [], descending, True)
    if kind == "bytes":
        _check_key_bytes([a.dtype.itemsize], False)
        fields = [_KeyField(None, 0, "bytes", a.dtype.itemsize, False, descending)]
        return _KeyPlan(a, None, fields, descending, False)
    if a.dtype.isnative or a.dtype.itemsize == 1:
        return _KeyPlan(a, kind, [], descending, False)
    # The other byte order: one number field of a record, read in its order.
    fields = [_KeyField(None, 0, kind, a.dtype.itemsize, _is_big_endian(a.dtype), descending)]
    return _KeyPlan(a, None, fields, descending, False)


def _structured_plan(a, order, descending, float_order):
    """A structured array: records with one key field per numpy field (fields of zero bytes left
    out: they are all equal). Read in place unless a field needs converting; then the key fields
    are copied, converted, into records of their own."""
    ordered = [(name, direction) for name, direction in _ordered_fields(a.dtype, order, descending)
               if a.dtype.fields[name][0].itemsize > 0]
    if not ordered:
        raise ValueError(f"the dtype {a.dtype} has no field to sort by")
    kinds = [_field_kind(a.dtype.fields[name][0], f"the field {name!r}") for name, _ in ordered]
    dtypes = [a.dtype.fields[name][0] for name, _ in ordered]
    _check_key_bytes([4 if dt.kind == "f" and dt.itemsize == 2 else dt.itemsize for dt in dtypes], True)
    convert = [_needs_conversion(a[name], float_order) for name, _ in ordered]
    if not any(convert):
        fields = [_KeyField(name, a.dtype.fields[name][1], kind, dt.itemsize, _is_big_endian(dt), direction)
                  for (name, direction), kind, dt in zip(ordered, kinds, dtypes)]
        return _KeyPlan(a, None, fields, False, False)
    columns = [_converted(a[name], float_order) if c else a[name] for (name, _), c in zip(ordered, convert)]
    key_dtype = np.dtype([(f"k{i}", column.dtype) for i, column in enumerate(columns)])
    keys = np.empty(len(a), dtype=key_dtype)
    fields = []
    for i, ((name, direction), column) in enumerate(zip(ordered, columns)):
        keys[f"k{i}"] = column
        kind = _field_kind(column.dtype, f"the field {name!r}")
        fields.append(_KeyField(name, key_dtype.fields[f"k{i}"][1], kind, column.dtype.itemsize,
                                _is_big_endian(column.dtype), direction))
    return _KeyPlan(keys, None, fields, False, True)


def _key_plan(a, descending, order, float_order):
    if float_order not in _FLOAT_ORDERS:
        raise ValueError(f"float_order must be 'numpy' or 'total'; got {float_order!r}")
    if a.dtype.names is not None:
        return _structured_plan(a, order, descending, float_order)
    if order is not None:
        raise ValueError(f"order names fields, but the array of {a.dtype} has none")
    return _plain_plan(a, descending, float_order)


# --- Arguments --------------------------------------------------------------------------------------

def _check_options(function, options, allowed=_OPTION_NAMES):
    for name in options:
        if name not in allowed:
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")


def _check_kind(kind):
    if kind not in _NUMPY_KINDS:
        raise ValueError(f"kind must be one of {_NUMPY_KINDS} (every gpusort sort is stable); got {kind!r}")


def _one_dimensional(a, what):
    if a.ndim != 1:
        raise ValueError(f"{what} must be 1-D; got an array of {a.ndim} dimensions (shape {a.shape})")
    if a.dtype.hasobject:
        raise ValueError(f"{what} holds Python objects ({a.dtype}); gpusort sorts numbers and bytes")
    return a


def _writable_contiguous(a, what):
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{what} must be a numpy array to be sorted in place; got {type(a).__name__}")
    if not a.flags.writeable or not a.flags.c_contiguous:
        raise ValueError(f"{what} must be writable and C-contiguous to be sorted in place")
    return a


def _bytes(a):
    """The bytes of a C-contiguous array, as the 1-D uint8 array the binding takes."""
    return a.reshape(-1).view(np.uint8)


def _value_pair(source, target):
    """(input, output) of one array carried along, or None where its values have no bytes."""
    if source.nbytes == 0:
        return None
    return (_bytes(source), _bytes(target))


def _run(plan, options, *, unique=False, keys_output=None, values=(), index_output=None):
    """Runs the sort in the library; returns how many records it output (fewer with unique)."""
    pairs = [pair for pair in (_value_pair(s, t) for s, t in values) if pair is not None]
    report = _gpusort._sort_memory(
        _bytes(plan.keys), unique=unique, keys_output=None if keys_output is None else _bytes(keys_output),
        values=pairs, index_output=None if index_output is None else _bytes(index_output),
        **plan.call_arguments(), **options)
    return report["output_records"]


def _sorted_into(a, out, plan, options, unique=False, carried=()):
    """Sorts the keys of `a` into `out` (may be `a`), and each (source, target) of `carried` along;
    returns the number of records output."""
    if len(a) == 0:
        return 0  # nothing to sort: the library is not asked
    if plan.converted:  # the key copy is sorted and dropped; a's elements come out as values
        return _run(plan, options, unique=unique, values=[(a, out), *carried])
    return _run(plan, options, unique=unique, keys_output=out, values=list(carried))


def _shortened(arrays, count, copy):
    """The first `count` elements of each array (unique): copies, so that the rest is freed, or views."""
    if all(len(a) == count for a in arrays):
        return arrays
    return [a[:count].copy() if copy else a[:count] for a in arrays]


# --- The functions ----------------------------------------------------------------------------------

def sort(a, *, descending=False, order=None, float_order="numpy", kind=None, unique=False, **options):
    """Returns a sorted copy of the 1-D array `a`, as numpy.sort(a, kind="stable") orders it.

    Any integer, float16/32/64, bool, fixed bytes (S, V) or structured dtype, in either byte
    order. Floats: NaN last, -0.0 equal to +0.0, every bit of each element kept; with
    float_order="total", IEEE totalOrder (-NaN < -inf < ... < -0.0 < +0.0 < ... < +NaN) instead.
    descending=True reverses the order as a whole (NaN first), equal elements still in input
    order. Structured arrays: by the fields of `order` (a name or a list), then by the others in
    their order, as numpy; descending is one bool for all of them or a list with one per field
    of `order` (the others then ascending); at most 32 bytes of key. unique=True keeps the first
    of each group of equal elements. kind is accepted for numpy's sake: every sort is stable.
    options: backend, device, threads, memory, device_memory, tmp_dir, progress, notice, as for
    sort_file(). Ctrl-C or an exception from progress stops the sort and is raised.
    """
    _check_options("sort", options)
    _check_kind(kind)
    a = np.ascontiguousarray(_one_dimensional(np.asarray(a), "the array"))
    plan = _key_plan(a, descending, order, float_order)
    out = np.empty_like(a)
    count = _sorted_into(a, out, plan, options, unique=unique)
    return _shortened([out], count, copy=True)[0]


def sort_inplace(a, *, descending=False, order=None, float_order="numpy", kind=None, **options):
    """Sorts the 1-D array `a` in place, as sort() orders it; `a` must be writable and
    C-contiguous. Returns None, as ndarray.sort() does. Where the sort fails or is interrupted,
    `a` holds unspecified bytes."""
    _check_options("sort_inplace", options)
    _check_kind(kind)
    a = _one_dimensional(_writable_contiguous(a, "the array"), "the array")
    _sorted_into(a, a, _key_plan(a, descending, order, float_order), options)


def argsort(a, *, descending=False, order=None, float_order="numpy", kind=None, **options):
    """Returns the int64 (intp) indices that sort the 1-D array `a` as sort() orders it: the
    same as numpy.argsort(a, kind="stable") (descending: largest and NaN first, equal elements
    in input order). Takes sort()'s arguments but unique."""
    _check_options("argsort", options)
    _check_kind(kind)
    a = np.ascontiguousarray(_one_dimensional(np.asarray(a), "the array"))
    plan = _key_plan(a, descending, order, float_order)
    index = np.empty(len(a), dtype=np.intp)
    if len(a):
        _run(plan, options, index_output=index)  # 8 bytes an entry: the library writes u64 (4: u32)
    return index


def _value_arrays(values, count, inplace):
    checked = []
    for i, v in enumerate(values):
        v = v if inplace else np.asarray(v)
        what = f"values[{i}]"
        if not isinstance(v, np.ndarray) or v.ndim == 0 or len(v) != count:
            raise ValueError(f"{what} must be an array of the keys' length {count}; got "
                             f"{getattr(v, 'shape', type(v).__name__)}")
        if v.dtype.hasobject:
            raise ValueError(f"{what} holds Python objects ({v.dtype}); values are carried as bytes")
        checked.append(_writable_contiguous(v, what) if inplace else np.ascontiguousarray(v))
    return checked


def sort_by_key(keys, *values, descending=False, order=None, float_order="numpy", inplace=False,
                unique=False, **options):
    """Sorts the 1-D array `keys` as sort() does and carries each array of `values` along (the
    keys' length along the first axis, any dtype: each element, or row, carried as its bytes);
    returns (sorted keys, [sorted values, ...]). With inplace=True the arrays themselves are
    sorted (each writable and C-contiguous) and returned; with unique=True only the first of
    each group of equal keys is kept, in every array alike (in place: views of the first ones)."""
    _check_options("sort_by_key", options)
    if inplace:
        keys = _one_dimensional(_writable_contiguous(keys, "keys"), "keys")
    else:
        keys = np.ascontiguousarray(_one_dimensional(np.asarray(keys), "keys"))
    sources = _value_arrays(values, len(keys), inplace)
    plan = _key_plan(keys, descending, order, float_order)
    keys_out = keys if inplace else np.empty_like(keys)
    targets = sources if inplace else [np.empty_like(v) for v in sources]
    count = _sorted_into(keys, keys_out, plan, options, unique=unique, carried=list(zip(sources, targets)))
    shortened = _shortened([keys_out, *targets], count, copy=not inplace)
    return shortened[0], shortened[1:]
