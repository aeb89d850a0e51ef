"""gpusort: sort binary files of fixed-size keys or records, and numpy arrays, on the GPU or the CPU.

The functions are those of the extension _gpusort (C++); docs/python.md describes them all.
"""

# ---- Files and errors (sort_file, plan_file, gather_file) ----
from ._gpusort import Error, GpuError, IoError, SortError, gather_file, plan_file, sort_file

__all__ = ["Error", "GpuError", "IoError", "SortError", "gather_file", "plan_file", "sort_file"]

for _error in (Error, GpuError, IoError, SortError):
    _error.__module__ = __name__
del _error

# ---- Arrays (sort, sort_inplace, argsort, sort_by_key: numpy's conventions, in _arrays.py) ----
from ._arrays import argsort, sort, sort_by_key, sort_inplace

__all__ += ["argsort", "sort", "sort_by_key", "sort_inplace"]
