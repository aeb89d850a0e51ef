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
