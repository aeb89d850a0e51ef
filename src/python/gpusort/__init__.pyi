# Typed stubs of the package gpusort (the functions are in the extension _gpusort).
import os
from typing import Any, Callable, Literal, Sequence, Union

_Path = Union[str, os.PathLike[str]]
_Size = Union[int, str]
_IoMode = Literal["auto", "buffered", "direct"]
_Backend = Literal["auto", "gpu", "cpu"]
_IndexType = Literal["auto", "u32", "u64"]
_KeyType = Literal["u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64"]
_Compression = Literal["none", "gz", "bz2", "xz", "zst"]
_Progress = Callable[[str, int, int], object]
_Notice = Callable[[str], object]
_Value = Union[tuple[_Path, _Path], tuple[_Path, _Path, int]]

# ---- Errors ----

class Error(RuntimeError):
    """A sort failed; the message is one line naming the file and the cause."""

class SortError(Error):
    """The sort cannot be done as asked: not enough disk space or memory, an input that does not
    hold whole records or changed while it was read, an output that failed verify, no GPU for
    backend="gpu"."""

class IoError(Error):
    """A system call on a file failed (a missing file, no space left, an I/O error); the message
    names the file and the system's reason."""

class GpuError(Error):
    """The GPU failed while it sorted (a CUDA error, device memory that ran out)."""

# ---- Files (sort_file, plan_file, gather_file) ----

def sort_file(
    input: _Path,
    output: _Path | None = None,
    *,
    type: _KeyType | None = None,
    key: str | Sequence[str] | None = None,
    record_size: _Size | None = None,
    format: Literal["gensort"] | None = None,
    descending: bool = False,
    unique: bool = False,
    values: Sequence[_Value] | None = None,
    index_out: _Path | None = None,
    index_type: _IndexType = "auto",
    memory: _Size | None = None,
    threads: int | None = None,
    tmp_dir: _Path | None = None,
    spill_io: _IoMode = "auto",
    input_io: _IoMode = "auto",
    output_io: _IoMode = "auto",
    backend: _Backend = "auto",
    device: int = 0,
    device_memory: _Size | None = None,
    sync: bool = False,
    input_compression: _Compression | None = None,
    output_compression: _Compression | None = None,
    compression_level: int | None = None,
    verify: bool = False,
    progress: _Progress | None = None,
    notice: _Notice | None = None,
) -> dict[str, Any]:
    """Sorts the file `input` of fixed-size keys or records into `output`, as gpusort-file does.

    The keyword arguments are gpusort-file's options with Python names (--record-size is
    record_size=). `output` may be None where values or index_out are given. progress is called
    about 5 times a second with (phase, done, total) (total 0 where unknown) and once at the end;
    notice receives notices that are not errors. The sort runs with the GIL released; Ctrl-C
    stops it, leaving no output and no temp file, and raises KeyboardInterrupt.

    Returns the report as a dict with the fields of gpusort-file --stats. Raises IoError,
    SortError, GpuError (gpusort.Error, a RuntimeError), ValueError for a bad option, TypeError
    for an unknown keyword; on failure no output is left and an existing output is unchanged.
    """

def plan_file(
    input: _Path,
    output: _Path | None = None,
    *,
    type: _KeyType | None = None,
    key: str | Sequence[str] | None = None,
    record_size: _Size | None = None,
    format: Literal["gensort"] | None = None,
    descending: bool = False,
    unique: bool = False,
    values: Sequence[_Value] | None = None,
    index_out: _Path | None = None,
    index_type: _IndexType = "auto",
    memory: _Size | None = None,
    threads: int | None = None,
    tmp_dir: _Path | None = None,
    spill_io: _IoMode = "auto",
    input_io: _IoMode = "auto",
    output_io: _IoMode = "auto",
    backend: _Backend = "auto",
    device: int = 0,
    device_memory: _Size | None = None,
    sync: bool = False,
    input_compression: _Compression | None = None,
    output_compression: _Compression | None = None,
    compression_level: int | None = None,
    verify: bool = False,
    notice: _Notice | None = None,
) -> dict[str, Any]:
    """The plan of sort_file(input, output, **options) without sorting, as a dict (the "plan"
    of gpusort-file --stats): runs, merge passes, memory, disk and device. `input` is opened for
    reading; `output` is neither opened nor created. Raises as sort_file() does."""

def gather_file(
    index: _Path,
    input: _Path,
    output: _Path,
    *,
    index_type: _IndexType = "auto",
    memory: _Size | None = None,
    threads: int | None = None,
    tmp_dir: _Path | None = None,
    spill_io: _IoMode = "auto",
    input_io: _IoMode = "auto",
    output_io: _IoMode = "auto",
    backend: _Backend = "auto",
    device: int = 0,
    device_memory: _Size | None = None,
    sync: bool = False,
    progress: _Progress | None = None,
    notice: _Notice | None = None,
) -> dict[str, Any]:
    """Applies a permutation that sort_file(..., index_out=index) wrote to another column:
    record i of `output` is record index[i] of `input` (gpusort-file --gather). Returns the
    report as a dict and raises as sort_file() does (SortError where `index` is not a
    permutation)."""

# ---- Arrays (sort, sort_inplace, argsort, sort_by_key) ----

import numpy as np
from numpy.typing import ArrayLike, NDArray

_Order = Union[str, Sequence[str], None]
_Descending = Union[bool, Sequence[bool]]
_FloatOrder = Literal["numpy", "total"]
_Kind = Literal["quicksort", "mergesort", "heapsort", "stable"] | None

def sort(
    a: ArrayLike,
    *,
    descending: _Descending = False,
    order: _Order = None,
    float_order: _FloatOrder = "numpy",
    kind: _Kind = None,
    unique: bool = False,
    backend: _Backend = "auto",
    device: int = 0,
    threads: int | None = None,
    memory: _Size | None = None,
    device_memory: _Size | None = None,
    tmp_dir: _Path | None = None,
    progress: _Progress | None = None,
    notice: _Notice | None = None,
) -> NDArray[Any]:
    """Returns a sorted copy of the 1-D array `a` (any integer, float16/32/64, bool, fixed bytes
    S/V or structured dtype, either byte order), as numpy.sort(a, kind="stable") gives it.

    Floats in numpy's order: NaN last (whatever its sign or payload), -0.0 equal to +0.0, equal
    elements in input order; every bit of each element is kept. float_order="total" orders them
    by IEEE totalOrder instead (-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN).
    descending=True reverses the order as a whole (NaN first), equal elements still in input
    order. Structured arrays sort by the fields of `order` (a name or a list), then by the other
    fields in their order, as numpy does; descending is one bool for every field or a list with
    one bool per field of `order` (the other fields then ascending). At most 32 bytes of key in
    all (float16 fields count 4); subarray and nested fields are refused (ValueError).
    unique=True keeps only the first element of each group of equal ones (a shorter array).
    kind is accepted for numpy's sake: every sort is stable. The other options are those of
    sort_file(); the sort runs with the GIL released, and Ctrl-C (or an exception raised by
    progress) stops it and raises KeyboardInterrupt.
    """

def sort_inplace(
    a: NDArray[Any],
    *,
    descending: _Descending = False,
    order: _Order = None,
    float_order: _FloatOrder = "numpy",
    kind: _Kind = None,
    backend: _Backend = "auto",
    device: int = 0,
    threads: int | None = None,
    memory: _Size | None = None,
    device_memory: _Size | None = None,
    tmp_dir: _Path | None = None,
    progress: _Progress | None = None,
    notice: _Notice | None = None,
) -> None:
    """Sorts the 1-D array `a` in place, as sort() orders it; `a` must be writable and
    C-contiguous (else ValueError). Returns None, as ndarray.sort() does. Where the sort fails or
    is interrupted, `a` holds unspecified bytes."""

def argsort(
    a: ArrayLike,
    *,
    descending: _Descending = False,
    order: _Order = None,
    float_order: _FloatOrder = "numpy",
    kind: _Kind = None,
    backend: _Backend = "auto",
    device: int = 0,
    threads: int | None = None,
    memory: _Size | None = None,
    device_memory: _Size | None = None,
    tmp_dir: _Path | None = None,
    progress: _Progress | None = None,
    notice: _Notice | None = None,
) -> NDArray[np.intp]:
    """Returns the int64 (intp) indices that sort the 1-D array `a` as sort() orders it: stable,
    the same as numpy.argsort(a, kind="stable") (with descending=True: largest first, NaN first,
    equal elements in input order)."""

def sort_by_key(
    keys: ArrayLike,
    *values: ArrayLike,
    descending: _Descending = False,
    order: _Order = None,
    float_order: _FloatOrder = "numpy",
    inplace: bool = False,
    unique: bool = False,
    backend: _Backend = "auto",
    device: int = 0,
    threads: int | None = None,
    memory: _Size | None = None,
    device_memory: _Size | None = None,
    tmp_dir: _Path | None = None,
    progress: _Progress | None = None,
    notice: _Notice | None = None,
) -> tuple[NDArray[Any], list[NDArray[Any]]]:
    """Sorts the 1-D array `keys` as sort() does and carries each array of `values` along:
    returns (sorted keys, [sorted values, ...]). A value array has the keys' length along its
    first axis and any dtype (structured included); its elements (rows) are carried as bytes.
    With inplace=True the arrays themselves are sorted (each writable and C-contiguous) and
    returned; with unique=True only the first element of each group of equal keys is kept, in
    every array alike (in place: the first ones, returned as views of them)."""
