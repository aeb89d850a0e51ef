"""Tests of gpusort's array functions (sort, sort_inplace, argsort, sort_by_key) against numpy.

Each result is compared with a reference made here by numpy alone: numpy.sort and numpy.argsort
with kind="stable" (bit for bit, so that NaN payloads and the sign of zeros count), numpy.lexsort
over ranks for structured arrays and descending orders, the bits of floats mapped to integers for
IEEE totalOrder. GPU cases are skipped without a device (and fail under GPUSORT_REQUIRE_GPU=1).
"""

import os

import numpy as np
import pytest

import gpusort

INT_DTYPES = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8"]
FLOAT_DTYPES = ["f2", "f4", "f8"]
BYTE_ORDERS = ["<", ">"]
SIZES = [0, 1, 2, 1000]


# --- Data ------------------------------------------------------------------------------------------

def random_ints(dtype, n, rng):
    """Integers over the whole range of `dtype` with many repeats (so that stability shows)."""
    info = np.iinfo(dtype)
    pool = rng.integers(info.min, info.max, size=max(1, n // 8), dtype=dtype, endpoint=True)
    pool[: min(2, len(pool))] = [info.min, info.max][: min(2, len(pool))]
    return rng.choice(pool, size=n).astype(dtype)


def float_bits(dtype):
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def special_floats(dtype):
    """NaNs of both signs and several payloads, both zeros, both infinities."""
    dtype = np.dtype(dtype).newbyteorder("=")
    bits = float_bits(dtype)
    width = 8 * dtype.itemsize
    sign = bits.type(1) << bits.type(width - 1)
    nans = np.repeat(np.array([np.nan], dtype=dtype).view(bits), 4)
    nans[1] |= sign
    nans[2] |= bits.type(1)  # a payload
    nans[3] |= sign | bits.type(3)
    nans = nans.view(dtype)
    return np.concatenate([nans, np.array([-0.0, 0.0, np.inf, -np.inf], dtype=dtype)])


def random_floats(dtype, n, rng):
    """Floats with repeats, where some are NaN, -0.0, +0.0 or infinite."""
    native = np.dtype(dtype).newbyteorder("=")
    pool = np.concatenate([(rng.standard_normal(max(1, n // 8)) * 100).astype(native), special_floats(native)])
    return rng.choice(pool, size=n).astype(native)


def random_array(dtype, n, seed=1):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    native = dtype.newbyteorder("=")
    values = random_floats(native, n, rng) if dtype.kind == "f" else random_ints(native, n, rng)
    return values.astype(dtype)


def bits_of(a):
    """The array's bytes, for comparisons bit for bit."""
    return np.ascontiguousarray(a).tobytes()


def stable_descending_argsort(a):
    """The stable descending order: equal keys in input order, NaN first."""
    n = len(a)
    return (n - 1 - np.argsort(a[::-1], kind="stable"))[::-1]


def total_order_key(a):
    """IEEE totalOrder as a signed integer per float: negative floats get their other bits flipped."""
    signed = np.dtype(f"i{a.dtype.itemsize}")
    bits = a.astype(a.dtype.newbyteorder("=")).view(signed)
    flip = np.array(np.iinfo(signed).max, dtype=signed)
    return np.where(bits < 0, bits ^ flip, bits)


def dense_rank(column):
    """The rank of each element among the distinct values of `column` in numpy's order (NaNs
    equal to each other and last, -0.0 equal to +0.0; bytes as memcmp)."""
    if column.dtype.kind in "SV":
        rows = np.ascontiguousarray(column).view(np.uint8).reshape(len(column), -1)
        order = np.lexsort(rows.T[::-1])
        ordered = rows[order]
        new = np.any(ordered[1:] != ordered[:-1], axis=1)
    else:
        order = np.argsort(column, kind="stable")
        ordered = column[order]
        same = ordered[1:] == ordered[:-1]
        if column.dtype.kind == "f":
            same |= np.isnan(ordered[1:]) & np.isnan(ordered[:-1])
        new = ~same
    ranks = np.empty(len(column), dtype=np.int64)
    ranks[order] = np.concatenate([[0], np.cumsum(new)]) if len(column) else []
    return ranks


def lexsort_reference(a, fields, descending):
    """The stable order of a structured array by `fields` (most significant first), each ascending
    or descending."""
    keys = [-dense_rank(a[name]) if desc else dense_rank(a[name]) for name, desc in zip(fields, descending)]
    return np.lexsort(keys[::-1])


def first_of_each_key(sorted_keys, equal):
    """The positions kept by unique: the first of each run of equal keys."""
    if len(sorted_keys) == 0:
        return np.zeros(0, dtype=bool)
    return np.concatenate([[True], ~equal(sorted_keys[1:], sorted_keys[:-1])])


def numpy_equal(x, y):
    same = x == y
    if x.dtype.kind == "f":
        same |= np.isnan(x) & np.isnan(y)
    return same


def gpu_or_skip(call):
    """Runs call(); without a usable GPU skips the test, unless GPUSORT_REQUIRE_GPU=1 asks for one."""
    try:
        return call()
    except gpusort.Error as error:
        if "GPU" not in str(error) or os.environ.get("GPUSORT_REQUIRE_GPU") == "1":
            raise
        pytest.skip(f"no GPU: {error}")


# --- sort and argsort of numbers against numpy ----------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("order", BYTE_ORDERS)
@pytest.mark.parametrize("dtype", INT_DTYPES + FLOAT_DTYPES)
def test_sort_matches_numpy_stable_sort_bit_for_bit(dtype, order, n):
    a = random_array(order + dtype, n)
    before = bits_of(a)
    result = gpusort.sort(a, backend="cpu")
    assert result.dtype == a.dtype
    assert bits_of(result) == bits_of(np.sort(a, kind="stable"))
    assert bits_of(a) == before  # the input is left as it was


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("order", BYTE_ORDERS)
@pytest.mark.parametrize("dtype", INT_DTYPES + FLOAT_DTYPES)
def test_argsort_matches_numpy_stable_argsort(dtype, order, n):
    a = random_array(order + dtype, n, seed=2)
    index = gpusort.argsort(a, backend="cpu")
    assert index.dtype == np.intp
    np.testing.assert_array_equal(index, np.argsort(a, kind="stable"))


@pytest.mark.parametrize("order", BYTE_ORDERS)
@pytest.mark.parametrize("dtype", INT_DTYPES + FLOAT_DTYPES)
def test_descending_is_the_stable_reverse_order_with_nan_first(dtype, order):
    a = random_array(order + dtype, 1000, seed=3)
    expected = stable_descending_argsort(a)
    np.testing.assert_array_equal(gpusort.argsort(a, descending=True, backend="cpu"), expected)
    assert bits_of(gpusort.sort(a, descending=True, backend="cpu")) == bits_of(a[expected])
    if a.dtype.kind == "f":
        nan_count = np.count_nonzero(np.isnan(a))
        assert nan_count > 0 and np.all(np.isnan(a[expected][:nan_count]))


def test_nan_last_and_zeros_equal_keep_their_input_order():
    a = np.array([np.nan, 0.0, -np.nan, -0.0, -np.inf, 1.0, 0.0, -0.0, np.inf, np.nan], dtype=np.float64)
    result = gpusort.sort(a, backend="cpu")
    zeros = result[1:5]
    assert list(np.signbit(zeros)) == [False, True, False, True]  # input order: 0.0, -0.0, 0.0, -0.0
    assert np.isneginf(result[0]) and result[5] == 1.0 and np.isposinf(result[6])
    assert list(np.signbit(result[7:])) == [False, True, False]  # the NaNs, last, as they came
    assert bits_of(result) == bits_of(np.sort(a, kind="stable"))


@pytest.mark.parametrize("order", BYTE_ORDERS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_order_total_is_ieee_total_order(dtype, order):
    a = random_array(order + dtype, 1000, seed=4)
    expected = np.argsort(total_order_key(a), kind="stable")
    np.testing.assert_array_equal(gpusort.argsort(a, float_order="total", backend="cpu"), expected)
    assert bits_of(gpusort.sort(a, float_order="total", backend="cpu")) == bits_of(a[expected])
    descending = stable_descending_argsort(total_order_key(a))
    np.testing.assert_array_equal(gpusort.argsort(a, float_order="total", descending=True, backend="cpu"), descending)


@pytest.mark.parametrize("dtype", ["f4", ">f8"])
def test_floats_without_negative_zeros_or_odd_nans_as_numpy(dtype):
    """Where totalOrder and numpy agree (no -0.0, every NaN the canonical +NaN), in both orders."""
    rng = np.random.default_rng(18)
    pool = np.array([np.nan, 0.0, np.inf, -np.inf, 1.5, -2.5, 7.0], dtype=dtype)
    a = rng.choice(pool, size=3000).astype(dtype)
    assert bits_of(gpusort.sort(a, backend="cpu")) == bits_of(np.sort(a, kind="stable"))
    np.testing.assert_array_equal(gpusort.argsort(a, backend="cpu"), np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(gpusort.argsort(a, descending=True, backend="cpu"), stable_descending_argsort(a))
    records = np.zeros(3000, dtype=[("x", dtype), ("i", "<i2")])
    records["x"], records["i"] = a, rng.integers(0, 3, size=3000)
    np.testing.assert_array_equal(gpusort.argsort(records, backend="cpu"), np.argsort(records, kind="stable"))


def test_bool_sorts_as_numpy_does():
    a = np.random.default_rng(5).integers(0, 2, size=500).astype(bool)
    np.testing.assert_array_equal(gpusort.sort(a, backend="cpu"), np.sort(a, kind="stable"))
    np.testing.assert_array_equal(gpusort.argsort(a, backend="cpu"), np.argsort(a, kind="stable"))


def test_fixed_bytes_sort_as_memcmp():
    rng = np.random.default_rng(6)
    a = rng.integers(0, 4, size=(700, 5)).astype(np.uint8).view("S5").reshape(-1)
    np.testing.assert_array_equal(gpusort.argsort(a, backend="cpu"), np.argsort(a, kind="stable"))


def test_lists_are_taken_as_numpy_takes_them():
    np.testing.assert_array_equal(gpusort.sort([3, 1, 2], backend="cpu"), [1, 2, 3])


# --- unique -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["u1", ">i4", "<u8", "f2", ">f4", "f8"])
def test_unique_keeps_the_first_of_each_key(dtype):
    a = random_array(dtype, 2000, seed=7)
    order = np.argsort(a, kind="stable")
    keep = first_of_each_key(a[order], numpy_equal)
    result = gpusort.sort(a, unique=True, backend="cpu")
    assert bits_of(result) == bits_of(a[order][keep])
    keys, (positions,) = gpusort.sort_by_key(a, np.arange(len(a)), unique=True, backend="cpu")
    assert bits_of(keys) == bits_of(a[order][keep])
    np.testing.assert_array_equal(positions, order[keep])


# --- Structured arrays ------------------------------------------------------------------------------

def structured_array(dtype, n, seed):
    rng = np.random.default_rng(seed)
    a = np.zeros(n, dtype=dtype)
    for name in dtype.names:
        field = dtype.fields[name][0]
        if field.kind in "SV":
            a[name] = rng.integers(0, 3, size=(n, field.itemsize)).astype(np.uint8).view(field).reshape(-1)
        else:
            a[name] = random_array(field, n, seed=rng.integers(1 << 30))[: n]
    return a


STRUCTURED_CASES = [
    # (dtype, order, descending): order None sorts by every field in turn
    ([("a", "<i4"), ("b", ">f8")], None, False),
    ([("a", "<i4"), ("b", ">f8")], "b", False),
    ([("a", "u1"), ("b", "<f4"), ("c", "S3")], ["c", "a"], [True, False]),
    ([("a", ">i2"), ("b", "f2"), ("c", "<u8")], ["b"], [True]),
    ([("k", ">u4"), ("pad", "V2"), ("x", "<i8")], ["x", "k"], [False, True]),
    ([("a", "i1"), ("b", ">f8"), ("c", "<f4")], None, True),
    ([("a", "u1"), ("b", "<i2"), ("c", ">f2")], "a", True),  # the other fields descending too
]


@pytest.mark.parametrize("fields, order, descending", STRUCTURED_CASES)
def test_structured_arrays_against_lexsort(fields, order, descending):
    dtype = np.dtype(fields)
    a = structured_array(dtype, 1500, seed=8)
    named = dtype.names if order is None else ([order] if isinstance(order, str) else order)
    rest = [name for name in dtype.names if name not in named]
    directions = [descending] * len(named) if isinstance(descending, bool) else descending
    rest_direction = descending if isinstance(descending, bool) else False
    expected = lexsort_reference(a, list(named) + rest, list(directions) + [rest_direction] * len(rest))
    np.testing.assert_array_equal(gpusort.argsort(a, order=order, descending=descending, backend="cpu"), expected)
    assert bits_of(gpusort.sort(a, order=order, descending=descending, backend="cpu")) == bits_of(a[expected])
    if not np.any(directions) and not rest_direction:  # ascending: numpy itself gives the same order
        np.testing.assert_array_equal(expected, np.argsort(a, order=order, kind="stable"))


def test_structured_unique_and_total_order():
    dtype = np.dtype([("a", "<u2"), ("b", ">f4")])
    a = structured_array(dtype, 3000, seed=9)
    expected = np.lexsort([total_order_key(a["b"]), a["a"]])
    np.testing.assert_array_equal(gpusort.argsort(a, float_order="total", backend="cpu"), expected)
    order = lexsort_reference(a, ["a", "b"], [False, False])
    keep = first_of_each_key(a[order], lambda x, y: (x["a"] == y["a"]) & numpy_equal(x["b"], y["b"]))
    assert bits_of(gpusort.sort(a, unique=True, backend="cpu")) == bits_of(a[order][keep])


def test_structured_refusals_say_why():
    with pytest.raises(ValueError, match="nested"):
        gpusort.sort(np.zeros(3, dtype=[("a", [("x", "i4")])]))
    with pytest.raises(ValueError, match="subarray"):
        gpusort.sort(np.zeros(3, dtype=[("a", "i4", (2,))]))
    with pytest.raises(ValueError, match="32 bytes"):
        gpusort.sort(np.zeros(3, dtype=[("a", "u8"), ("b", "S30")]), order="a")
    with pytest.raises(ValueError, match="no field 'z'"):
        gpusort.sort(np.zeros(3, dtype=[("a", "u8")]), order="z")
    with pytest.raises(ValueError, match="descending"):
        gpusort.sort(np.zeros(3, dtype=[("a", "u8"), ("b", "u1")]), order=["a", "b"], descending=[True])
    with pytest.raises(ValueError, match="U"):
        gpusort.sort(np.zeros(3, dtype=[("a", "U2")]))


def test_other_refusals_say_why():
    with pytest.raises(ValueError, match="1-D"):
        gpusort.sort(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="complex"):
        gpusort.sort(np.zeros(3, dtype=np.complex128))
    with pytest.raises(ValueError, match="fields"):
        gpusort.sort(np.zeros(3), order="a")
    with pytest.raises(ValueError, match="float_order"):
        gpusort.sort(np.zeros(3), float_order="ieee")
    with pytest.raises(TypeError, match="colour"):
        gpusort.sort(np.zeros(3), colour="red")
    with pytest.raises(ValueError, match="backend"):
        gpusort.sort(np.zeros(3), backend="tpu")


# --- sort_by_key ----------------------------------------------------------------------------------

@pytest.mark.parametrize("key_dtype", ["<i8", ">u2", "f2", ">f8"])
def test_sort_by_key_carries_values_of_any_dtype(key_dtype):
    n = 1200
    rng = np.random.default_rng(10)
    keys = random_array(key_dtype, n, seed=11)
    values = [
        rng.standard_normal(n),
        rng.integers(0, 255, size=(n, 7)).astype(np.uint8).view("S7").reshape(-1),
        np.array([(i, -i, b"x%d" % i) for i in range(n)], dtype=[("i", ">i4"), ("j", "<f8"), ("s", "S6")]),
        rng.integers(0, 1 << 40, size=(n, 3)).astype(">u8"),  # rows of 24 bytes
        np.arange(n).astype("datetime64[s]"),
        rng.standard_normal(2 * n)[::2],  # a strided view
    ]
    order = np.argsort(keys, kind="stable")
    sorted_keys, sorted_values = gpusort.sort_by_key(keys, *values, backend="cpu")
    assert bits_of(sorted_keys) == bits_of(keys[order])
    assert len(sorted_values) == len(values)
    for value, result in zip(values, sorted_values):
        assert result.dtype == value.dtype and result.shape == value.shape
        assert bits_of(result) == bits_of(value[order])


def test_sort_by_key_descending_structured_keys():
    keys = structured_array(np.dtype([("a", "u1"), ("b", "<i4")]), 900, seed=12)
    values = np.arange(900, dtype=np.int32)
    expected = lexsort_reference(keys, ["b", "a"], [True, False])
    sorted_keys, (sorted_values,) = gpusort.sort_by_key(keys, values, order="b", descending=[True], backend="cpu")
    assert bits_of(sorted_keys) == bits_of(keys[expected])
    np.testing.assert_array_equal(sorted_values, expected)


def test_sort_by_key_refuses_values_of_another_length():
    with pytest.raises(ValueError, match="length"):
        gpusort.sort_by_key(np.arange(4), np.arange(3))


# --- In place and copies ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["<u4", ">i8", "f2", ">f4"])
def test_inplace_gives_what_the_copy_gives(dtype):
    a = random_array(dtype, 3000, seed=13)
    copy = gpusort.sort(a, backend="cpu")
    assert gpusort.sort_inplace(a, backend="cpu") is None
    assert bits_of(a) == bits_of(copy) == bits_of(np.sort(random_array(dtype, 3000, seed=13), kind="stable"))


def test_sort_by_key_inplace_sorts_the_arrays_themselves():
    keys = random_array(">f8", 2000, seed=14)
    values = np.arange(2000, dtype=np.uint16)
    expected = np.argsort(keys, kind="stable")
    original = keys.copy()
    sorted_keys, (sorted_values,) = gpusort.sort_by_key(keys, values, inplace=True, backend="cpu")
    assert sorted_keys is keys and sorted_values is values
    assert bits_of(keys) == bits_of(original[expected])
    np.testing.assert_array_equal(values, expected)


def test_inplace_refuses_what_it_cannot_sort_in_place():
    a = np.arange(10, dtype=np.int32)
    with pytest.raises(ValueError, match="C-contiguous"):
        gpusort.sort_inplace(a[::2])
    a.setflags(write=False)
    with pytest.raises(ValueError, match="writable"):
        gpusort.sort_inplace(a)
    with pytest.raises(ValueError, match="writable"):
        gpusort.sort_by_key(np.arange(5), a[:5], inplace=True)


# --- Many runs, the GPU, Ctrl-C ---------------------------------------------------------------------

def test_many_runs_under_a_small_budget(tmp_path):
    a = np.random.default_rng(15).integers(0, 1 << 63, size=1 << 20, dtype=np.uint64)
    result = gpusort.sort(a, memory=1 << 20, backend="cpu", tmp_dir=tmp_path)
    np.testing.assert_array_equal(result, np.sort(a, kind="stable"))
    # The same sort through the binding, whose report says that it took runs and a merge.
    out = np.empty_like(a)
    report = gpusort._gpusort._sort_memory(a.view(np.uint8), key_type="u64", keys_output=out.view(np.uint8),
                                           memory=1 << 20, backend="cpu", tmp_dir=tmp_path)
    assert report["runs"] > 8 and report["merge_passes"] >= 1 and report["bytes_spilled"] > 0
    np.testing.assert_array_equal(out, result)
    keys, (positions,) = gpusort.sort_by_key(a, np.arange(len(a)), memory=1 << 20, backend="cpu", tmp_dir=tmp_path)
    np.testing.assert_array_equal(positions, np.argsort(a, kind="stable"))
    assert list(tmp_path.iterdir()) == []  # the spilled runs are gone


@pytest.mark.parametrize("dtype", ["<u8", ">i4", "f4", "f8"])
def test_gpu_sorts_as_the_cpu_does(dtype):
    a = random_array(dtype, 100_000, seed=16)
    result = gpu_or_skip(lambda: gpusort.sort(a, backend="gpu"))
    assert bits_of(result) == bits_of(np.sort(a, kind="stable"))
    index = gpu_or_skip(lambda: gpusort.argsort(a, descending=True, backend="gpu", device_memory=1 << 20))
    np.testing.assert_array_equal(index, stable_descending_argsort(a))


def test_ctrl_c_in_a_sort_raises_keyboard_interrupt_and_leaves_no_file(tmp_path):
    a = np.random.default_rng(17).integers(0, 1 << 63, size=1 << 22, dtype=np.uint64)
    calls = []

    def progress(phase, done, total):
        calls.append(phase)
        raise KeyboardInterrupt  # as Ctrl-C would, from the waiting thread

    with pytest.raises(KeyboardInterrupt):
        gpusort.sort(a, memory=1 << 20, backend="cpu", tmp_dir=tmp_path, progress=progress)
    assert len(calls) == 1  # the sort ended at the first call
    assert list(tmp_path.iterdir()) == []


def test_progress_ends_with_done():
    calls = []
    gpusort.sort(np.arange(1000, 0, -1), backend="cpu", progress=lambda *call: calls.append(call))
    assert calls and calls[-1][0] == "done"
