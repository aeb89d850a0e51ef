#!/usr/bin/env python3
"""gpusort's numpy API beside numpy and cupy, on random u64 in a numpy array, in one sitting.

Each operation runs once to warm up (the CUDA context, the pools), then --repeat times; the
median is kept. Every result of gpusort is checked against numpy's (numpy.sort, and
numpy.argsort(kind="stable"), whose indices a stable sort must give exactly):
  gpusort.sort(a)                 the GPU (backend "gpu"), and the CPU (backend "cpu")
  gpusort.argsort(a)              the GPU, and the CPU
  numpy.sort(a)                   numpy's default sort
  numpy.argsort(a, kind=stable)   --numpy-argsort-repeat times (it takes a minute on 2^28 keys)
  cupy sort round trip            cp.sort(cp.asarray(a)).get()
  cupy argsort round trip         cp.argsort(cp.asarray(a)).get()  (cupy is left out where absent)

  tools/bench/python_arrays.py [--log2-count 28] [--repeat 3] [--numpy-argsort-repeat 1]
"""
import argparse
import statistics
import sys
import time

import numpy as np

import gpusort


def timed(fn, repeat):
    """The median seconds of `repeat` calls of fn, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def cupy_cases():
    try:
        import cupy as cp
    except ImportError:
        return {}
    def sort(a):
        out = cp.sort(cp.asarray(a)).get()
        cp.cuda.Device().synchronize()
        return out
    def argsort(a):
        out = cp.argsort(cp.asarray(a)).get()
        cp.cuda.Device().synchronize()
        return out
    return {"cupy sort round trip": sort, "cupy argsort round trip": argsort}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log2-count", type=int, default=28)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--numpy-argsort-repeat", type=int, default=1)
    args = parser.parse_args()

    a = np.random.default_rng(1).integers(0, 2**64, size=1 << args.log2_count, dtype=np.uint64, endpoint=False)
    print(f"{a.size} random u64 ({a.nbytes / 2**30:.1f} GiB), numpy {np.__version__}", flush=True)
    rows = []

    t, expected = timed(lambda: np.sort(a), args.repeat)
    rows.append(("numpy.sort", t))
    t, expected_index = timed(lambda: np.argsort(a, kind="stable"), args.numpy_argsort_repeat)
    rows.append((f"numpy.argsort(kind='stable') ({args.numpy_argsort_repeat} run)", t))

    cases = {}
    for backend in ("gpu", "cpu"):
        cases[f"gpusort.sort, {backend}"] = (lambda b: lambda: gpusort.sort(a, backend=b))(backend)
        cases[f"gpusort.argsort, {backend}"] = (lambda b: lambda: gpusort.argsort(a, backend=b))(backend)
    for name, fn in cases.items():
        try:
            fn()  # warm-up
        except gpusort.SortError as error:
            print(f"{name}: {error}", flush=True)
            continue
        t, result = timed(fn, args.repeat)
        want = expected_index if "argsort" in name else expected
        if not np.array_equal(result, want):
            sys.exit(f"{name}: the result differs from numpy's")
        rows.append((name, t))
    for name, fn in cupy_cases().items():
        fn(a)
        t, result = timed(lambda: fn(a), args.repeat)
        if "argsort" not in name and not np.array_equal(result, expected):
            sys.exit(f"{name}: the result differs from numpy's")
        rows.append((name, t))

    times = dict(rows)
    print("| operation | median (s) | numpy.sort / it |")
    print("|---|---|---|")
    for name, t in rows:
        print(f"| {name} | {t:.3f} | {times['numpy.sort'] / t:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
