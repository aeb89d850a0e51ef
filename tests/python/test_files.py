"""Tests of the Python module's file API: gpusort.sort_file(), plan_file() and gather_file().

Every output is checked against numpy's own sort of the same data (np.sort, a stable np.argsort
or np.lexsort) or a stable sort of Python's; the failures against the exception and message
the C++ library gives.
"""

import faulthandler
import os
import signal
import threading

import numpy as np
import pytest

import gpusort

RNG_SEED = 20261128


def rng():
    return np.random.default_rng(RNG_SEED)


def folder_files(path):
    return sorted(os.listdir(path))


def gpu_unavailable(error):
    """Skips the test where `error` says that no GPU can be used; fails where one is required."""
    message = str(error)
    if "no usable GPU" not in message and "GPU layer" not in message:
        raise error
    if os.environ.get("GPUSORT_REQUIRE_GPU") == "1":
        pytest.fail("GPUSORT_REQUIRE_GPU=1, but no GPU can be used: " + message)
    pytest.skip(message)


# ---- Keys of a type ----


@pytest.mark.parametrize(
    "dtype, name",
    [(np.uint64, "u64"), (np.uint32, "u32"), (np.int16, "i16")],
)
def test_keys_of_a_type_ascending_and_descending(tmp_path, dtype, name):
    info = np.iinfo(dtype)
    keys = rng().integers(info.min, info.max, size=50_000, dtype=dtype, endpoint=True)
    keys[::7] = keys[3]  # equal keys
    keys.tofile(tmp_path / "in")
    report = gpusort.sort_file(tmp_path / "in", tmp_path / "up", type=name, backend="cpu")
    assert np.array_equal(np.fromfile(tmp_path / "up", dtype=dtype), np.sort(keys))
    assert report["type"] == name
    assert report["input_records"] == keys.size and report["output_records"] == keys.size
    assert report["backend"] == "cpu"
    gpusort.sort_file(str(tmp_path / "in"), str(tmp_path / "down"), type=name, descending=True, threads=2)
    assert np.array_equal(np.fromfile(tmp_path / "down", dtype=dtype), np.sort(keys)[::-1])


def test_unique_keeps_one_of_each_key(tmp_path):
    keys = rng().integers(0, 1000, size=20_000, dtype=np.uint32)
    keys.tofile(tmp_path / "in")
    report = gpusort.sort_file(tmp_path / "in", tmp_path / "out", type="u32", unique=True)
    assert np.array_equal(np.fromfile(tmp_path / "out", dtype=np.uint32), np.unique(keys))
    assert report["output_records"] == np.unique(keys).size


def test_u64_keys_on_the_gpu(tmp_path):
    keys = rng().integers(0, 2**64 - 1, size=100_000, dtype=np.uint64, endpoint=True)
    keys.tofile(tmp_path / "in")
    try:
        report = gpusort.sort_file(tmp_path / "in", tmp_path / "out", backend="gpu")
    except (gpusort.SortError, gpusort.GpuError) as error:
        gpu_unavailable(error)
    assert report["backend"] == "gpu"
    assert np.array_equal(np.fromfile(tmp_path / "out", dtype=np.uint64), np.sort(keys))


# ---- Records ----

EDGE = np.dtype([("source", "<u8"), ("weight", "<u4"), ("pad", "<u4")])


def test_records_by_a_key_spec_stable(tmp_path):
    edges = np.zeros(30_000, dtype=EDGE)
    edges["source"] = rng().integers(0, 50, size=edges.size, dtype=np.uint64)
    edges["weight"] = rng().integers(0, 20, size=edges.size, dtype=np.uint32)
    edges["pad"] = np.arange(edges.size, dtype=np.uint32)  # tells equal keys apart
    edges.tofile(tmp_path / "in")
    gpusort.sort_file(tmp_path / "in", tmp_path / "out", record_size=16, key=["8:u32", "0:u64:desc"])
    # By weight ascending, then source descending (~ reverses u64), equal keys in input order.
    order = np.lexsort((~edges["source"], edges["weight"]))
    assert np.array_equal(np.fromfile(tmp_path / "out", dtype=EDGE), edges[order])


def test_gensort_records_stable(tmp_path):
    records = rng().integers(0, 256, size=(3000, 100), dtype=np.uint8)
    records[:, :10] = rng().integers(0, 3, size=(3000, 10), dtype=np.uint8)  # many equal keys
    records[:, 5:10] = 0
    records.tofile(tmp_path / "in")
    report = gpusort.sort_file(tmp_path / "in", tmp_path / "out", format="gensort")
    expected = sorted(range(len(records)), key=lambda i: records[i, :10].tobytes())  # stable
    got = np.fromfile(tmp_path / "out", dtype=np.uint8).reshape(-1, 100)
    assert np.array_equal(got, records[expected])
    assert report["type"] == "records" and report["record_size"] == 100


# ---- Columns: values carried along, the index, gather_file ----


def test_values_and_index_against_a_stable_argsort(tmp_path):
    keys = rng().integers(0, 500, size=40_000, dtype=np.uint32)
    scores = rng().random(keys.size)
    tags = rng().integers(0, 256, size=(keys.size, 3), dtype=np.uint8)
    keys.tofile(tmp_path / "keys")
    scores.tofile(tmp_path / "scores")
    tags.tofile(tmp_path / "tags")
    report = gpusort.sort_file(
        tmp_path / "keys",
        None,
        type="u32",
        values=[(tmp_path / "scores", tmp_path / "scores.out"), (str(tmp_path / "tags"), str(tmp_path / "tags.out"), 3)],
        index_out=tmp_path / "index",
    )
    order = np.argsort(keys, kind="stable")
    assert np.array_equal(np.fromfile(tmp_path / "index", dtype=np.uint32), order)
    assert np.array_equal(np.fromfile(tmp_path / "scores.out"), scores[order])
    assert np.array_equal(np.fromfile(tmp_path / "tags.out", dtype=np.uint8).reshape(-1, 3), tags[order])
    assert report["index_width"] == 4
    assert [v["output"] for v in report["values"]] == [str(tmp_path / "scores.out"), str(tmp_path / "tags.out")]


def test_index_u64_descending_and_gather_file(tmp_path):
    keys = rng().standard_normal(25_000).astype(np.float32)
    names = rng().integers(0, 2**63, size=keys.size, dtype=np.int64)
    keys.tofile(tmp_path / "keys")
    names.tofile(tmp_path / "names")
    gpusort.sort_file(tmp_path / "keys", tmp_path / "sorted", type="f32", descending=True,
                      index_out=tmp_path / "index", index_type="u64")
    # Descending and stable: equal keys keep their input order, as a stable sort of -key does.
    order = np.argsort(-keys, kind="stable")
    assert np.array_equal(np.fromfile(tmp_path / "index", dtype=np.uint64), order)
    assert np.array_equal(np.fromfile(tmp_path / "sorted", dtype=np.float32), keys[order])
    report = gpusort.gather_file(tmp_path / "index", tmp_path / "names", tmp_path / "names.out", index_type="u64")
    assert np.array_equal(np.fromfile(tmp_path / "names.out", dtype=np.int64), names[order])
    assert report["input_records"] == keys.size


def test_gather_file_refuses_an_index_that_is_no_permutation(tmp_path):
    np.array([0, 1, 1, 3], dtype=np.uint32).tofile(tmp_path / "index")
    np.arange(4, dtype=np.uint64).tofile(tmp_path / "column")
    with pytest.raises(gpusort.SortError):
        gpusort.gather_file(tmp_path / "index", tmp_path / "column", tmp_path / "out")
    assert folder_files(tmp_path) == ["column", "index"]


# ---- The plan ----


def test_plan_file_gives_the_plan_and_writes_nothing(tmp_path):
    keys = rng().integers(0, 2**64 - 1, size=1_000_000, dtype=np.uint64, endpoint=True)
    keys.tofile(tmp_path / "in")
    options = dict(memory="4M", threads=2, backend="cpu")
    plan = gpusort.plan_file(tmp_path / "in", tmp_path / "out", **options)
    assert plan["records"] == keys.size
    assert plan["record_size"] == 8
    assert plan["memory_bytes"] == 4 << 20
    assert plan["threads"] == 2
    assert plan["runs"] > 1  # 8 MB of keys do not fit in one chunk of a 4 MiB budget
    assert folder_files(tmp_path) == ["in"]
    # The sort then does as planned.
    report = gpusort.sort_file(tmp_path / "in", tmp_path / "out", **options)
    assert report["runs"] == plan["runs"]


# ---- Progress ----

PHASES = ["starting", "reading", "sorting", "merging", "writing", "flushing", "verifying", "done"]


def test_progress_phases_in_order_and_done_within_total(tmp_path):
    keys = rng().integers(0, 2**64 - 1, size=2_000_000, dtype=np.uint64, endpoint=True)
    keys.tofile(tmp_path / "in")
    calls = []
    report = gpusort.sort_file(tmp_path / "in", tmp_path / "out", memory="4M", backend="cpu",
                               progress=lambda phase, done, total: calls.append((phase, done, total)))
    assert np.array_equal(np.fromfile(tmp_path / "out", dtype=np.uint64), np.sort(keys))
    assert calls[-1] == ("done", keys.nbytes, keys.nbytes)  # the call at the end
    positions = [PHASES.index(phase) for phase, _, _ in calls]
    assert positions == sorted(positions)
    assert all(0 <= done <= total for _, done, total in calls[:-1] if total > 0)
    assert report["runs"] > 1


# ---- Errors ----


def test_a_missing_input_raises_io_error_naming_it(tmp_path):
    missing = str(tmp_path / "missing.u64")
    with pytest.raises(gpusort.IoError) as raised:
        gpusort.sort_file(missing, tmp_path / "out")
    assert isinstance(raised.value, gpusort.Error) and isinstance(raised.value, RuntimeError)
    assert str(raised.value) == f"cannot open '{missing}': No such file or directory"
    assert folder_files(tmp_path) == []


@pytest.mark.parametrize(
    "options, message",
    [
        ({"type": "u128"}, "type: unknown type 'u128'"),
        ({"memory": "lots"}, "memory: 'lots' is not a size"),
        ({"memory": 1000}, "memory: at least 1M is needed"),
        ({"threads": 0}, "threads: from 1 to"),
        ({"backend": "tpu"}, "backend: 'tpu' is not one of auto, gpu, cpu"),
        ({"key": "0:u32", "record_size": 2}, "key: "),
        ({"format": "gensort", "type": "u32"}, "format gensort excludes type and key"),
        ({"values": [("a",)]}, "values: each is (V, OUT) or (V, OUT, width)"),
        ({"values": ["in:out"]}, "values: each is (V, OUT) or (V, OUT, width)"),
        ({"compression_level": 42}, "compression_level: must be between 0 and 19"),
    ],
)
def test_a_bad_option_raises_value_error(tmp_path, options, message):
    np.arange(10, dtype=np.uint64).tofile(tmp_path / "in")
    with pytest.raises(ValueError) as raised:
        gpusort.sort_file(tmp_path / "in", tmp_path / "out", **options)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)
    assert folder_files(tmp_path) == ["in"]


def test_output_left_out_needs_columns_and_unknown_keywords_are_type_errors(tmp_path):
    np.arange(10, dtype=np.uint64).tofile(tmp_path / "in")
    with pytest.raises(ValueError, match="output: needed unless values or index_out"):
        gpusort.sort_file(tmp_path / "in")
    with pytest.raises(TypeError, match="unexpected keyword argument 'memroy'"):
        gpusort.sort_file(tmp_path / "in", tmp_path / "out", memroy="1G")
    with pytest.raises(TypeError, match="unexpected keyword argument 'progress'"):
        gpusort.plan_file(tmp_path / "in", tmp_path / "out", progress=print)
    assert folder_files(tmp_path) == ["in"]


# ---- Ctrl-C, and the GIL ----


@pytest.fixture(scope="module")
def large_input(tmp_path_factory):
    """200 MB of u64 keys: on the CPU under a 16 MiB budget, a sort of many runs and merges."""
    path = tmp_path_factory.mktemp("large") / "keys.u64"
    rng().integers(0, 2**64 - 1, size=25_000_000, dtype=np.uint64, endpoint=True).tofile(path)
    return path


def interrupted_sort(tmp_path, large_input, progress):
    """Sorts `large_input` with `progress`, expecting KeyboardInterrupt; returns the folders' files."""
    out_dir, tmp_dir = tmp_path / "out", tmp_path / "tmp"
    out_dir.mkdir()
    tmp_dir.mkdir()
    with pytest.raises(KeyboardInterrupt):
        gpusort.sort_file(large_input, out_dir / "sorted", memory="16M", backend="cpu", tmp_dir=tmp_dir,
                          progress=progress, values=[(large_input, out_dir / "values")], index_out=out_dir / "index")
    return folder_files(out_dir) + folder_files(tmp_dir)


def test_keyboard_interrupt_raised_by_the_progress_callback_leaves_nothing(tmp_path, large_input):
    seen = []

    def progress(phase, done, total):
        seen.append(phase)
        if done > 0:
            raise KeyboardInterrupt

    assert interrupted_sort(tmp_path, large_input, progress) == []
    assert "done" not in seen
    assert folder_files(large_input.parent) == ["keys.u64"]


def test_sigint_during_the_sort_raises_keyboard_interrupt_and_leaves_nothing(tmp_path, large_input):
    started = threading.Event()

    def progress(phase, done, total):
        if done > 0:
            started.set()

    # SIGINT sent from another thread, as Ctrl-C would be: Python's handler only marks it, and the
    # waiting thread raises KeyboardInterrupt the next time it looks.
    sort_over = threading.Event()

    def kill():
        started.wait()
        if not sort_over.is_set():
            os.kill(os.getpid(), signal.SIGINT)

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        assert interrupted_sort(tmp_path, large_input, progress) == []
    finally:
        sort_over.set()
        started.set()
        killer.join()


def test_other_python_threads_run_during_the_sort(tmp_path):
    # The input is a FIFO that a Python thread fills: the sort can only end if that thread runs
    # while the sort waits for its input, that is, if the sort does not hold the GIL.
    keys = rng().integers(0, 2**32, size=1_000_000, dtype=np.uint32)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "wb") as pipe:
            for part in np.array_split(keys, 16):
                pipe.write(part.tobytes())

    thread = threading.Thread(target=writer)
    thread.start()
    # Were the GIL held, the sort would wait for ever: the process ends instead, showing where.
    faulthandler.dump_traceback_later(120, exit=True)
    try:
        report = gpusort.sort_file(fifo, tmp_path / "out", type="u32", backend="cpu")
    finally:
        faulthandler.cancel_dump_traceback_later()
        # A sort that failed before it opened the FIFO leaves the writer waiting for a reader.
        if thread.is_alive():
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        thread.join()
    assert report["input_streamed"]
    assert np.array_equal(np.fromfile(tmp_path / "out", dtype=np.uint32), np.sort(keys))
