#!/usr/bin/env python3
"""Soak test of gpusort-file: many random sort configurations, each checked against a reference
of its own.

Every case draws, from --seed and its number alone (so `--only K` replays case K):
  a layout      --type T (any key type, sometimes in larger records), --record-size with 1-3
                --key fields (numbers of any type and byte order, byte strings, descending
                fields), or --format gensort;
  a size        none, one record, a few, or log-uniform up to --max-size, and the data's
                distribution (gpusort-gen --dist, --special for floats; records with --key
                fields get raw bytes from a generated key array);
  options       --memory and --device-memory from the defaults down to the smallest accepted
                budgets (many runs, several merge passes), --threads, --unique, --stable,
                --descending, --verify, --tmp-dir, and the backend (--backend, sometimes cpu);
  a path        file to file, pipes (stdin to stdout), .zst or .gz input and/or output (by name
                or, for pipes, by --input-compression/--output-compression), or in place.

The output is compared byte for byte with the reference, computed here with numpy from the
input's records and from the definitions of the order, not from gpusort's key rules: a stable
sort by the key fields (numbers read in their byte order and compared by value, floats in IEEE
754 totalOrder: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN, NaNs by payload; byte
strings as memcmp; descending fields reversed), with --unique the first record of each group of
equal keys. A case whose reference would not fit in half the available memory is compared with
the other references alone, and its row says so. Also, as further checks: gpusort-check (order,
and but for --unique the same records as the input), and the same bytes as gpusort-file
--backend cpu, file to file, default budgets, same input and order options. Also checked: every
process of the path succeeds, nothing is printed on stderr, the input (the file the sort reads,
and the data it was made from) has the same bytes after the sort as before (SHA-256), and no file
is left behind in the case's folder or temp folder.

Needs Python 3 with numpy (Debian: python3-numpy; run by a python3 without numpy, the script runs
itself again with /usr/bin/python3 where that one has it) and cat; zstd (on PATH or in a --bin
folder) for .zst paths, which use .gz without it.
Data are removed after each case (kept for failed cases with --keep); a case whose data would
not fit in the free space of --work is skipped and says so. Each case writes its commands and
their output to WORK/logs/case-NNN.log. Prints one table row per case and totals at the end;
exits 1 when a case failed or none ran.
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:
    # Debian's python3-numpy is for the system's python3, which may not be the first on PATH.
    SYSTEM_PYTHON = "/usr/bin/python3"
    if (os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) and os.access(SYSTEM_PYTHON, os.X_OK)
            and subprocess.run([SYSTEM_PYTHON, "-c", "import numpy"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL).returncode == 0):
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)
    sys.exit(f"soak: needs numpy for its reference sort, which {sys.executable} lacks "
             "(Debian: apt-get install python3-numpy)")

KEY_WIDTHS = {"u8": 1, "u16": 2, "u32": 4, "u64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f32": 4, "f64": 8}
DISTS = ["uniform", "sorted", "reversed", "equal", "few-unique", "nearly-sorted", "zipf", "normal"]
RAW_TYPES = ["u8", "u16", "u32", "u64"]  # key arrays whose bytes become records with --key fields
MIB = 1 << 20
GZ_LIMIT = 256 * MIB        # larger cases use .zst instead of .gz (Python's gzip is slow)
MAX_RUNS = 512              # the smallest budgets only for inputs of at most this many budgets (about 2x runs)
BLOCK = 8 * MIB


def parse_size(text):
    """'64M' -> bytes (K, M, G, T: powers of 1024), as gpusort-file reads sizes."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    text = text.strip().upper().rstrip("B").rstrip("I")
    suffix = text[-1:] if text[-1:] in units else ""
    return int(float(text[: len(text) - len(suffix)]) * units[suffix])


def human(n):
    for unit in ["B", "K", "M", "G"]:
        if n < 1024 or unit == "G":
            return f"{n}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024


def budget_arg(n):
    """A budget for the command line, in whole KiB (rounded up), or MiB where exact."""
    kib = -(-n // 1024)
    return f"{kib // 1024}M" if kib % 1024 == 0 else f"{kib}K"


# ---------------------------------------------------------------------------------------------
# Drawing a case


def draw_key_fields(rng, record_size):
    """1-3 --key fields that fit records of record_size bytes, at most 32 bytes of key in all."""
    fields, used = [], 0
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        room = min(record_size, 32 - used)
        numbers = [t for t, w in KEY_WIDTHS.items() if w <= room]
        if room < 1:
            break
        if rng.random() < 0.3 or not numbers:
            length = rng.randint(1, min(room, 20))
            spec = f"bytes:{length}"
        else:
            name = rng.choice(numbers)
            length = KEY_WIDTHS[name]
            spec = name + rng.choice(["", ":be", ":le"])
        offset = rng.randint(0, record_size - length)
        if rng.random() < 0.3:
            spec += ":desc"
        fields.append((offset, length, f"{offset}:{spec}"))
        used += length
    return fields


def draw_record_size(rng):
    low, high = rng.choices([(1, 16), (17, 64), (65, 512), (513, 4096), (4097, 65536)], [30, 35, 20, 10, 5])[0]
    return rng.randint(low, high)


def draw_layout(rng):
    """The layout: options of gpusort-file and gpusort-check, the record size, the key's fields
    (as --key gives them, for the reference) and how to generate the data."""
    kind = rng.choices(["type", "records", "gensort"], [45, 40, 15])[0]
    dist = rng.choice(DISTS)
    if kind == "gensort":
        return dict(name="gensort", args=["--format", "gensort"], check_args=["--format", "gensort"],
                    record_size=100, fields=["0:bytes:10"], gen=["--format", "gensort", "--dist", dist],
                    gen_width=100, dist=dist)
    if kind == "type":
        key_type = rng.choice(list(KEY_WIDTHS))
        width = KEY_WIDTHS[key_type]
        if rng.random() < 0.15:
            # The key is a little-endian T at offset 0 of larger records; the data are raw bytes.
            record_size = width + draw_record_size(rng)
            raw = rng.choice(RAW_TYPES)
            args = ["--type", key_type, "--record-size", str(record_size)]
            return dict(name=f"{key_type}/r{record_size}", args=args, check_args=args, record_size=record_size,
                        fields=[f"0:{key_type}"], gen=["--type", raw, "--dist", dist],
                        gen_width=KEY_WIDTHS[raw], dist=f"{dist}({raw})")
        gen = ["--type", key_type, "--dist", dist]
        if key_type.startswith("f") and rng.random() < 0.3:
            gen.append("--special")
            dist += "+special"
        return dict(name=key_type, args=["--type", key_type], check_args=["--type", key_type], record_size=width,
                    fields=[f"0:{key_type}"], gen=gen, gen_width=width, dist=dist)
    record_size = draw_record_size(rng)
    fields = draw_key_fields(rng, record_size)
    if rng.random() < 0.15:
        record_size = max(offset + length for offset, length, _ in fields)  # gpusort-file's default
        size_args = []
    else:
        size_args = ["--record-size", str(record_size)]
    keys = [a for _, _, spec in fields for a in ("--key", spec)]
    raw = rng.choice(RAW_TYPES)
    return dict(name=f"r{record_size}[{','.join(spec for _, _, spec in fields)}]", args=size_args + keys,
                check_args=["--record-size", str(record_size)] + keys, record_size=record_size,
                fields=[spec for _, _, spec in fields],
                gen=["--type", raw, "--dist", dist], gen_width=KEY_WIDTHS[raw], dist=f"{dist}({raw})")


def draw_records(rng, record_size, max_size):
    """Record count: none, one, a few, or log-uniform from max_size/4096 (at least 4 KiB) to max_size."""
    r = rng.random()
    if r < 0.04:
        return 0
    if r < 0.08:
        return 1
    if r < 0.15:
        return rng.randint(2, 100)
    low = max(4096, max_size // 4096)
    size = int(math.exp(rng.uniform(math.log(low), math.log(max(low, max_size)))))
    return max(1, size // record_size)


def draw_budget(rng, size, floor):
    """None (the default), a fraction of the input, or the smallest accepted budget."""
    r = rng.random()
    if r < 0.4:
        return None
    if r < 0.85 or size > floor * MAX_RUNS:
        return max(floor, int(size / rng.choice([1.5, 2, 4, 16, 64, 256])))
    return floor


def draw_side(rng, small):
    """One side of the path: 'file' or 'pipe', possibly compressed ('.zst', '.gz')."""
    medium = "pipe" if rng.random() < 0.35 else "file"
    compression = rng.choices(["", ".zst", ".gz"], [70, 20, 10])[0]
    if compression == ".gz" and not small:
        compression = ".zst"
    return medium + compression


def draw_case(seed, number, args, programs):
    rng = random.Random(f"gpusort-soak:{seed}:{number}")
    layout = draw_layout(rng)
    records = draw_records(rng, layout["record_size"], args.max_bytes)
    size = records * layout["record_size"]
    backend = "cpu" if args.backend != "cpu" and rng.random() < 0.15 else args.backend
    options = []
    # The smallest budgets the sorters accept hold a few dozen records in each of two chunks.
    floor = max(MIB, 64 * layout["record_size"])
    memory = draw_budget(rng, size, floor)
    if memory is not None:
        options += ["--memory", budget_arg(memory)]
    device_memory = draw_budget(rng, size, floor)
    if device_memory is not None and backend != "cpu":
        options += ["--device-memory", budget_arg(device_memory)]
    if rng.random() < 0.5:
        options += ["--threads", str(rng.choice([1, 2, 3, 4, 8, 16]))]
    order = [flag for flag, p in (("--unique", 0.2), ("--stable", 0.2), ("--descending", 0.25)) if rng.random() < p]
    if rng.random() < 0.2:
        options.append("--verify")
    if rng.random() < 0.3:
        options.append("--tmp-dir")  # the case's temp folder, filled in when run
    if rng.random() < 0.12:
        path = ("in-place", "in-place")
    else:
        small = size <= GZ_LIMIT
        path = (draw_side(rng, small), draw_side(rng, small))
    if not programs.get("zstd"):
        path = tuple(p.replace(".zst", ".gz" if size <= GZ_LIMIT else "") for p in path)
    return dict(number=number, layout=layout, records=records, size=size, backend=backend, order=order,
                options=options, path=path, gen_seed=rng.randrange(1, 1 << 62))


def describe_options(case):
    short = {"--unique": "uniq", "--stable": "stable", "--descending": "desc", "--verify": "verify",
             "--tmp-dir": "tmpdir", "--memory": "mem=", "--device-memory": "dmem=", "--threads": "t="}
    words, options = [], case["order"] + case["options"]
    i = 0
    while i < len(options):
        name = short[options[i]]
        if name.endswith("="):
            words.append(name + options[i + 1])
            i += 2
        else:
            words.append(name)
            i += 1
    return " ".join(words) or "-"


def describe_path(case):
    source, target = case["path"]
    return "in-place" if source == "in-place" else f"{source}>{target}"


# ---------------------------------------------------------------------------------------------
# Running a case


class CaseFailed(Exception):
    def __init__(self, kind, detail):
        super().__init__(detail)
        self.kind = kind  # "FAIL" or "MISMATCH"
        self.detail = detail


class Runner:
    """Runs the commands of one case, logging each with its status, time and output."""

    def __init__(self, log, env, timeout):
        self.log = log
        self.env = env
        self.timeout = timeout

    def note(self, text):
        self.log.write(text + "\n")
        self.log.flush()

    def pipeline(self, stages, stdout_path=None, what=None):
        """Runs argv lists joined by pipes, the last writing to stdout_path (or captured).
        Returns (statuses, stdout text, stderr texts, seconds)."""
        shown = " | ".join(shlex.join(s) for s in stages) + (f" > {shlex.quote(stdout_path)}" if stdout_path else "")
        self.note(f"$ {shown}")
        out_file = open(stdout_path, "wb") if stdout_path else None
        procs, errs = [], []
        start = time.monotonic()
        try:
            for i, argv in enumerate(stages):
                last = i == len(stages) - 1
                err = tempfile.TemporaryFile()
                errs.append(err)
                stdin = procs[-1].stdout if procs else subprocess.DEVNULL
                stdout = (out_file if out_file else subprocess.PIPE) if last else subprocess.PIPE
                procs.append(subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=err, env=self.env,
                                              start_new_session=True))
                if i > 0:
                    procs[-2].stdout.close()  # the next stage holds the pipe now
            captured = procs[-1].communicate(timeout=self.timeout)[0] if not out_file else None
            for p in procs:
                p.wait(timeout=max(1, self.timeout - (time.monotonic() - start)))
        except BaseException as error:  # a timeout, or Ctrl-C: no process of the case outlives it
            for p in procs:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
            if isinstance(error, OSError):  # no process could be started (e.g. no more processes allowed)
                self.note(f"  {error}")
                raise CaseFailed("FAIL", f"cannot start {os.path.basename(stages[len(procs)][0])}: {error}")
            if not isinstance(error, subprocess.TimeoutExpired):
                raise
            self.note(f"  timed out after {self.timeout:.0f} s")
            raise CaseFailed("FAIL", f"{what or stages[0][0]}: timed out after {self.timeout:.0f} s")
        finally:
            if out_file:
                out_file.close()
        seconds = time.monotonic() - start
        texts = []
        for err in errs:
            err.seek(0)
            texts.append(err.read().decode(errors="replace"))
            err.close()
        statuses = [p.returncode for p in procs]
        self.note(f"  status {statuses}, {seconds:.2f} s")
        for text in texts:
            if text:
                self.note("  stderr: " + text.rstrip().replace("\n", "\n          "))
        out = captured.decode(errors="replace") if captured else ""
        if out:
            self.note("  stdout: " + out.rstrip())
        return statuses, out, texts, seconds

    def run(self, argv, what, stdout_path=None):
        """One command that must succeed; returns its stdout."""
        statuses, out, errs, _ = self.pipeline([argv], stdout_path, what)
        if statuses[0] != 0:
            first = (errs[0].strip() or out.strip() or f"status {statuses[0]}").splitlines()[0]
            raise CaseFailed("FAIL", f"{what}: {first}")
        return out


def compare_files(a, b, record_size):
    """None when the files are equal, else where they first differ."""
    size_a, size_b = os.path.getsize(a), os.path.getsize(b)
    with open(a, "rb") as fa, open(b, "rb") as fb:
        offset = 0
        while True:
            block_a, block_b = fa.read(BLOCK), fb.read(BLOCK)
            if block_a != block_b:
                n = min(len(block_a), len(block_b))
                i = next((i for i in range(0, n, 4096) if block_a[i:i + 4096] != block_b[i:i + 4096]), n)
                while i < n and block_a[i] == block_b[i]:
                    i += 1
                if i == n and size_a != size_b:
                    return f"{size_a} bytes against {size_b}"
                return f"first difference at record {(offset + i) // record_size}"
            if not block_a:
                return None
            offset += len(block_a)


# ---------------------------------------------------------------------------------------------
# The reference: numpy, from the definitions of the order


NUMPY_TYPES = {"u8": "u1", "u16": "u2", "u32": "u4", "u64": "u8", "i8": "i1", "i16": "i2", "i32": "i4", "i64": "i8",
               "f32": "f4", "f64": "f8"}


def parse_field(text):
    """OFFSET:TYPE[:be|le][:desc] or OFFSET:bytes:LEN[:desc] -> (offset, length, type or 'bytes',
    big_endian, descending), as docs/cli.md describes --key."""
    parts = text.split(":")
    offset, kind, rest = int(parts[0]), parts[1], parts[2:]
    if kind == "bytes":
        length, rest = int(rest[0]), rest[1:]
    else:
        length = KEY_WIDTHS[kind]
    for word in rest:
        if word not in ("be", "le", "desc") or (kind == "bytes" and word != "desc"):
            raise ValueError(f"not a key field: {text}")
    return offset, length, kind, "be" in rest, "desc" in rest


def total_order_keys(values, width):
    """np.lexsort keys (the last most significant) that put floats in IEEE 754 totalOrder:
    -NaN (larger payload first) < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN (larger payload last)."""
    negative = np.signbit(values)
    nan = np.isnan(values)
    # -NaN, the other negatives (-0.0 the largest), the other positives (+0.0 the smallest), +NaN.
    group = np.where(nan, np.where(negative, 0, 3), np.where(negative, 1, 2)).astype(np.int8)
    with np.errstate(invalid="ignore"):  # signalling NaNs (raw bytes hold them) raise the flag as they widen
        number = np.where(nan, 0.0, values.astype(np.float64))
    bits = values.view(np.dtype(f"u{width}").newbyteorder(values.dtype.byteorder))
    magnitude = (bits.astype(np.uint64) & np.uint64((1 << (8 * width - 1)) - 1)).astype(np.int64)
    payload = np.where(nan, np.where(negative, -magnitude, magnitude), 0)
    return payload, number, group


def field_ranks(records, field):
    """For every record, the rank of its key field among the distinct values of the field in
    ascending order (equal keys, equal ranks): numbers by value, floats in totalOrder (which
    tells every bit pattern apart), byte strings as memcmp."""
    offset, length, kind, big_endian, _ = field
    n = len(records)
    column = np.ascontiguousarray(records[:, offset:offset + length])
    if kind == "bytes":
        order = np.lexsort(column.T[::-1])  # the first byte most significant
    else:
        dtype = np.dtype(NUMPY_TYPES[kind]).newbyteorder(">" if big_endian else "<")
        values = column.view(dtype).reshape(n)
        if kind.startswith("f"):
            order = np.lexsort(total_order_keys(values, length))
        else:
            order = np.argsort(values, kind="stable")
    # Equal keys are equal bytes (totalOrder tells every float bit pattern apart), and lie together.
    ordered = column[order]
    new = np.any(ordered[1:] != ordered[:-1], axis=1)
    ranks = np.empty(n, np.int64)
    ranks[order] = np.concatenate(([0], np.cumsum(new)))
    return ranks


def reference_order(data_path, record_size, fields, descending, unique):
    """The records of the file in the order of the reference: the indices of a stable sort by
    the fields (the first most significant; every field reversed with descending), with unique
    only the first of each group of equal keys. Returns (records, order)."""
    records = np.fromfile(data_path, dtype=np.uint8)
    n = len(records) // record_size
    records = records.reshape(n, record_size)
    if n == 0:
        return records, np.empty(0, np.int64)
    ranks = []
    for text in fields:
        field = parse_field(text)
        rank = field_ranks(records, field)
        ranks.append(-rank if field[4] != descending else rank)
    order = np.lexsort(ranks[::-1])
    if unique:
        same = np.ones(n - 1, bool)  # the record has the key of the one before it
        for rank in ranks:
            ordered = rank[order]
            same &= ordered[1:] == ordered[:-1]
        order = order[np.concatenate(([True], ~same))]
    return records, order


def reference_memory(size, records, fields):
    """Bytes the reference takes at most: the data, and a few 8-byte arrays per record and field."""
    return size + records * 8 * (4 + 2 * len(fields)) + 64 * MIB


def available_memory():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def compare_with_reference(output, records, order):
    """None when the file at output holds records[order], else where it first differs."""
    record_size = records.shape[1] if records.ndim == 2 else 1
    expected_bytes = len(order) * record_size
    actual_bytes = os.path.getsize(output)
    block = max(1, BLOCK // record_size)
    with open(output, "rb") as f:
        for start in range(0, len(order), block):
            expected = records[order[start:start + block]].tobytes()
            actual = f.read(len(expected))
            if actual != expected:
                n = min(len(actual), len(expected))
                i = next((i for i in range(n) if actual[i] != expected[i]), n)
                if i == n:
                    break
                return f"first difference at record {start + i // record_size}"
    if actual_bytes != expected_bytes:
        return f"{actual_bytes} bytes against {expected_bytes}"
    return None


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def gzip_copy(source, target, compress):
    opener = (lambda: (open(source, "rb"), gzip.open(target, "wb", compresslevel=1))) if compress else \
        (lambda: (gzip.open(source, "rb"), open(target, "wb")))
    src, dst = opener()
    with src, dst:
        shutil.copyfileobj(src, dst, BLOCK)


def run_case(case, args, programs, log):
    """Runs one case; returns (result, detail, stats)."""
    layout, size = case["layout"], case["size"]
    directory = os.path.join(args.work, f"case-{case['number']:03d}")
    shutil.rmtree(directory, ignore_errors=True)
    tmp = os.path.join(directory, "tmp")
    os.makedirs(tmp)
    env = dict(os.environ, TMPDIR=tmp)
    runner = Runner(log, env, timeout=600 + size / 4e6)
    runner.note(json.dumps({k: v for k, v in case.items() if k != "layout"}))
    runner.note(json.dumps(layout))
    source, target = case["path"]
    compressed = sum(".zst" in p or ".gz" in p for p in case["path"])
    # Input, reference, output, a spill of up to twice the input, compressed copies.
    need = size * (5 + compressed) + 64 * MIB
    free = shutil.disk_usage(args.work).free
    if need > free:
        shutil.rmtree(directory)
        return "SKIP", f"needs {human(need)} of disk, {human(free)} free", {}
    passed, stats = False, {}
    try:
        data = os.path.join(directory, "in.bin")
        total = case["records"] * layout["record_size"]
        count = -(-total // layout["gen_width"])
        runner.run([programs["gpusort-gen"]] + layout["gen"] + ["--count", str(count), "--seed", str(case["gen_seed"]),
                                                               data], "gpusort-gen")
        if os.path.getsize(data) != total:
            os.truncate(data, total)
        reference = os.path.join(directory, "ref.bin")
        sort = [programs["gpusort-file"]] + layout["args"] + case["order"]
        runner.run(sort + ["--backend", "cpu", data, reference], "reference sort")

        options = [a for o in case["options"] for a in ((o, tmp) if o == "--tmp-dir" else (o,))]
        stats_path = os.path.join(directory, "stats.json")
        argv = sort + ["--backend", case["backend"]] + options + ["--stats", stats_path]
        stages, out_path, result = [], None, os.path.join(directory, "out.bin")
        expected = {"in.bin", "ref.bin", "stats.json", "tmp"}
        if source == "in-place":
            shutil.copyfile(data, result)
            argv += [result, result]
        else:
            source_file = data + source[4:]
            if source_file != data:
                if source.endswith(".zst"):
                    runner.run([programs["zstd"], "-q", "-1", "-T0", data, "-o", source_file], "zstd")
                else:
                    gzip_copy(data, source_file, compress=True)
                expected.add(os.path.basename(source_file))
            target_file = result + target[4:]
            if source.startswith("pipe"):
                stages.append(["cat", source_file])
                argv.append("-")
                if source_file != data:
                    argv[-1:-1] = ["--input-compression", source[5:]]
            else:
                argv.append(source_file)
            if target.startswith("pipe"):
                if target_file != result:
                    argv += ["--output-compression", target[5:]]
                argv.append("-")
                stages += [argv, ["cat"]]
                out_path = target_file
            else:
                argv.append(target_file)
                stages.append(argv)
        if not stages:
            stages = [argv]
        watched = [data] if source == "in-place" or source_file == data else [data, source_file]
        before = {path: digest(path) for path in watched}
        statuses, _, errs, seconds = runner.pipeline(stages, out_path, "gpusort-file")
        if os.path.exists(stats_path):
            with open(stats_path) as f:
                stats = json.load(f)
        stats["seconds_measured"] = seconds
        if any(statuses):
            # The sorter's own failure first: a pipe's other end fails only because of it.
            bad = stages.index(argv) if statuses[stages.index(argv)] else next(i for i, s in enumerate(statuses) if s)
            first = (errs[bad].strip() or f"status {statuses[bad]}").splitlines()[0]
            raise CaseFailed("FAIL", first if stages[bad] is argv else f"{stages[bad][0]}: {first}")
        if any(errs):
            raise CaseFailed("FAIL", "unexpected stderr: " + next(e for e in errs if e).strip().splitlines()[0])
        changed = [os.path.basename(path) for path in watched if digest(path) != before[path]]
        if changed:
            raise CaseFailed("FAIL", "the input changed: " + " ".join(changed))

        output = result
        expected.add(os.path.basename(result if source == "in-place" else target_file))
        left = set(os.listdir(directory)) - expected
        left |= {"tmp/" + name for name in os.listdir(tmp)}
        if left:
            raise CaseFailed("FAIL", "files left behind: " + " ".join(sorted(left)))
        if source != "in-place" and target_file != result:
            if target.endswith(".zst"):
                runner.run([programs["zstd"], "-q", "-d", target_file, "-o", result], "zstd -d")
            else:
                gzip_copy(target_file, result, compress=False)
            os.remove(target_file)

        # The numpy reference, from the input's bytes (the same as before the sort: checked above).
        detail = ""
        need, available = reference_memory(size, case["records"], layout["fields"]), available_memory()
        if available is not None and need > available // 2:
            detail = f"no numpy reference: it needs {human(need)}, {human(available)} available"
            runner.note("  " + detail)
        else:
            start = time.monotonic()
            records, order = reference_order(data, layout["record_size"], layout["fields"],
                                             "--descending" in case["order"], "--unique" in case["order"])
            difference = compare_with_reference(output, records, order)
            del records, order
            runner.note(f"  numpy reference: {difference or 'the same bytes'}, {time.monotonic() - start:.2f} s")
            if difference:
                raise CaseFailed("MISMATCH", "differs from the numpy reference: " + difference)

        check = [programs["gpusort-check"]] + layout["check_args"]
        if "--descending" in case["order"]:
            check.append("--descending")
        if "--unique" not in case["order"]:
            check += ["--input", data]
        statuses, out, errs, _ = runner.pipeline([check + [output]])
        if statuses[0] != 0:  # 1: out of order or other records; 2: the check itself failed
            raise CaseFailed("MISMATCH" if statuses[0] == 1 else "FAIL", (out.strip() or errs[0].strip()).splitlines()[0])
        difference = compare_files(output, reference, layout["record_size"])
        if difference:
            raise CaseFailed("MISMATCH", "differs from the CPU backend's output: " + difference)
        passed = True
        return "ok", detail, stats
    except CaseFailed as failure:
        runner.note(f"{failure.kind}: {failure.detail}")
        return failure.kind, failure.detail, stats
    finally:
        if passed or not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


# ---------------------------------------------------------------------------------------------


COLUMNS = [("#", 4), ("layout", 30), ("size", 8), ("dist", 22), ("options", 34), ("path", 18), ("backend", 7),
           ("runs", 5), ("passes", 6), ("s", 7), ("result", 0)]


def row(values):
    return " ".join(str(v).ljust(w) if w else str(v) for v, (_, w) in zip(values, COLUMNS)).rstrip()


def find_programs(dirs):
    """The programs by name, from the --bin folders (or their src/ and tools/); zstd from there or
    PATH, None when missing (the others must be there)."""
    programs = {}
    for name in ("gpusort-file", "gpusort-gen", "gpusort-check", "zstd"):
        candidates = [os.path.join(d, sub, name) for d in dirs for sub in ("", "src", "tools")]
        found = next((c for c in candidates if os.path.isfile(c) and os.access(c, os.X_OK)), None)
        programs[name] = os.path.abspath(found) if found else shutil.which(name)
        if not programs[name] and name != "zstd":
            sys.exit(f"soak: {name} not found in {', '.join(dirs)} (nor in their src/ and tools/)")
    return programs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", required=True, metavar="DIR",
                    help="where gpusort-file, gpusort-gen, gpusort-check (and zstd, if not on PATH) are; "
                         "also DIR/src and DIR/tools, so a build folder will do; repeatable")
    ap.add_argument("--work", help="scratch folder for data and logs (default: a new one under $TMPDIR)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--only", help="run only these case numbers, e.g. 7,12 (as drawn with the same --seed, "
                                   "--max-size and --backend)")
    ap.add_argument("--max-size", default="64M", help="largest input, e.g. 64M, 4G (default 64M)")
    ap.add_argument("--backend", choices=["gpu", "cpu", "auto"], default="auto")
    ap.add_argument("--time-limit", type=float, help="start no case after this many seconds")
    ap.add_argument("--keep", action="store_true", help="keep the data of failed cases")
    args = ap.parse_args()
    args.max_bytes = parse_size(args.max_size)
    programs = find_programs(args.bin)
    args.work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="gpusort-soak-"))
    logs = os.path.join(args.work, "logs")
    os.makedirs(logs, exist_ok=True)
    numbers = [int(n) for n in args.only.split(",")] if args.only else range(1, args.runs + 1)

    print(f"gpusort soak: seed {args.seed}, {len(numbers)} cases, inputs up to {args.max_size}, "
          f"backend {args.backend}; logs in {logs}")
    if not programs.get("zstd"):
        print("zstd not found (on PATH or in --bin): .zst paths use .gz, or no compression above the .gz size limit")
    print(row([name for name, _ in COLUMNS]))
    start = time.monotonic()
    results, total_bytes = {}, 0
    for number in numbers:
        if args.time_limit is not None and time.monotonic() - start > args.time_limit:
            print(f"time limit of {args.time_limit:.0f} s reached: {len(numbers) - len(results)} cases not started")
            break
        case = draw_case(args.seed, number, args, programs)
        try:
            with open(os.path.join(logs, f"case-{number:03d}.log"), "w") as log:
                result, detail, stats = run_case(case, args, programs, log)
        except KeyboardInterrupt:
            print(f"interrupted in case {number}")
            results[number] = "FAIL"
            break
        results[number] = result
        if result != "SKIP":
            total_bytes += case["size"]
        backend = case["backend"]
        if stats.get("backend") and stats["backend"] != backend:
            backend += f"({stats['backend']})"
        seconds = stats.get("seconds_measured")
        print(row([number, case["layout"]["name"], human(case["size"]), case["layout"]["dist"], describe_options(case),
                   describe_path(case), backend, stats.get("runs", "-"), stats.get("merge_passes", "-"),
                   f"{seconds:.2f}" if seconds is not None else "-", result + (": " + detail if detail else "")]),
              flush=True)

    counts = {kind: sum(r == kind for r in results.values()) for kind in ("ok", "MISMATCH", "FAIL", "SKIP")}
    print(f"{len(results)} cases in {time.monotonic() - start:.0f} s, {human(total_bytes)} sorted: "
          f"{counts['ok']} ok, {counts['MISMATCH']} MISMATCH, {counts['FAIL']} FAIL, {counts['SKIP']} skipped")
    failed = [n for n, r in results.items() if r in ("MISMATCH", "FAIL")]
    if failed:
        print(f"failed: {', '.join(map(str, failed))} (replay: --seed {args.seed} --max-size {args.max_size} "
              f"--backend {args.backend} --only {','.join(map(str, failed))}; logs in {logs})")
    sys.exit(1 if failed or counts["ok"] == 0 else 0)


if __name__ == "__main__":
    main()
