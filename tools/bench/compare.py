#!/usr/bin/env python3
"""gpusort beside what a user could pick instead, on this machine, in one sitting.

For each workload the data is generated once (gpusort-gen) and read once so that it sits in the
page cache; then every program sorts the same file into an output that does not exist yet, with
`sync` before each run, --repeat times (3 by default), and the median is kept:
  cp            the copy of the same file: the floor (for the pipe case, `cat | cat`)
  gpusort-gpu   gpusort-file --backend gpu (where a GPU can be used)
  gpusort-cpu   gpusort-file --backend cpu
  ips4o         gpusort-bench-ips4o: parallel pread, IPS4o on all cores, parallel pwrite
  stxxl         gpusort-bench-stxxl: STXXL's sorter (libstxxl-dev), in memory or out of core
  gnu-sort      LC_ALL=C sort --parallel=N -S 50% on the same records as text lines (gensort:
                the only records that have a text form whose line order is their key order)
  zstd          `zstd -d | zstd`, for the .zst case: decompressing and compressing alone
A program that cannot be built or run here is reported as missing, not fatal; a workload whose
files would not fit the free disk (checked before its data are made) is reported as skipped.
Every output is checked with gpusort-check --input (text lines as 100-byte records keyed by their
first 20 bytes). gpusort's phases (--stats) of its median run are kept with its time.

The workloads: random u32 and u64 at each --sizes; u64 with a zipf and a nearly sorted key at
the middle size; at the middle and the largest size the out-of-core settings: --device-memory at
an eighth of the file, and --memory at a quarter (with STXXL given the same memory); a pipe case
(u64, middle size) and a .zst case (40 Mi gensort records, 4.2 GB); 100 Mi gensort records (10.5 GB). STXXL and
GNU sort, far slower than the rest, run on workloads up to --slow-peers-up-to (12G) only.

Writes results.csv, then table.md and the plots (report.py) into --out, and prints the table.
  tools/bench/compare.py --bin build [--quick] [--out bench-results] [--work DIR] [--repeat N]
                         [--sizes 1G,4G,16G] [--only NAME[,NAME...]] [--list] [--plots]
                         [--slow-peers-up-to 12G]
--quick: small sizes (4 and 16 MiB), a check of the whole run in about a minute on 2 cores.
--only: these workloads alone (--list prints their names). --plots: no matplotlib is an error.

Larger than memory (opt-in: --larger-than-memory SIZE, e.g. 16G, adds the workload u64-<SIZE>-cold,
which --only can pick alone): random u64 of that size, sorted by programs held to a quarter of the
data's size of memory (--cgroup-memory SIZE sets another limit), with the input out of the page
cache. It needs root, a cgroup v2 mount with the memory controller, and a writable
/proc/sys/vm/drop_caches; where one is missing it prints one line saying which and the workload is
reported as skipped (the others run). How it runs:
  the cgroup   a child cgroup <cgroup v2 mount>/gpusort-bench-<pid> (the mount from /proc/self/mounts),
               the memory controller enabled in the mount's cgroup.subtree_control when it is not
               yet (that fails when that cgroup has processes in it: cgroup v2 enables controllers for
               the children of a non-root cgroup only while it has none; the line says so), with
               memory.max the limit and memory.swap.max 0 where that file exists. Each timed command
               runs as sh -c 'echo $$ > <cgroup>/cgroup.procs && <command> && sync', so that only
               the command (and that shell) is held to the limit. The cgroup is removed at the end,
               also after an error; the controller, where it was enabled here, is disabled again
               when no other cgroup is left beside it.
  each run     the output deleted first, then `sync` and `echo 3 > /proc/sys/vm/drop_caches` (the
               input cold), then the timed command. The time includes the final `sync`: what a
               buffered writer leaves dirty in the page cache at its exit is counted (cp too).
  dd           first, in the same sitting and outside the cgroup, --repeat runs each of the disk's
               bandwidth with direct I/O (the page cache dropped before each):
                 read:  dd if=<the data> of=/dev/null bs=64M iflag=direct
                 write: dd if=/dev/zero of=<a new file> bs=64M count=<data size> iflag=count_bytes
                        oflag=direct conv=fsync
               (zeros measure the write bandwidth as well as the data would: no compressing file
               system is assumed; a copy of the data with dd would read and write at once). The
               bytes and seconds come from dd's last line; the medians are kept (rows `dd read`,
               `dd write`).
  programs     (--programs picks some; --sort-memory sets the --memory they get)
               cp (into a new file); gpusort-gpu one-chunk (--memory: half the limit; the device
               takes the data whole where it can), gpusort-gpu runs (also --device-memory: an
               eighth of the data, so that runs are spilled), gpusort-gpu default (no budget given:
               gpusort-file takes its own from the memory it sees); gpusort-cpu (--memory: half the
               limit); stxxl (--memory: half the limit; it runs here whatever --slow-peers-up-to
               says).
  the floor    the seconds the program's bytes take at dd's bandwidth: the data read once and
               written once (size / read bandwidth + size / write bandwidth) for cp and for a sort
               that spilled nothing; twice that for a sort that spilled its runs to the same disk
               (gpusort: bytes_spilled > 0 in its --stats; STXXL: the data exceed its --memory).
               Columns floor_s and vs_floor (median / floor), and from gpusort's --stats: its phases,
               each phase's GB/s (the data's bytes over the phase's seconds, for read, write and
               merge), bytes_spilled, spill_io, input_io and output_io (what it chose, where the
               stats say) and the memory budget it took.
"""
import argparse
import csv
import errno
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

MIB = 1 << 20
GIB = 1 << 30
PEERS = ("ips4o", "stxxl", "gnu-sort")
PHASES = ["read", "copy_in", "sort", "copy_out", "write", "merge"]
DROP_CACHES = "/proc/sys/vm/drop_caches"
DD_BLOCK = 64 * MIB


def find(bin_dir, name):
    for sub in ("", "src", "src/distributed", "tools"):
        path = os.path.join(bin_dir, sub, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def timed(command):
    """Seconds of one run of `command` (a list, or a string for bash), after `sync`."""
    subprocess.run(["sync"], check=True)
    shell = isinstance(command, str)
    start = time.perf_counter()
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command] if shell else command,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        shown = command if shell else " ".join(command)
        raise RuntimeError(f"{shown}: exit {result.returncode}: {result.stderr.strip()[-400:]}")
    return seconds


def label(size):
    return f"{size // MIB}MiB" if size < GIB else f"{size // GIB}GiB"


def size_arg(text):
    units = {"K": 1 << 10, "M": MIB, "G": GIB}
    t = text.strip().upper().rstrip("B").rstrip("I")
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


class Workload:
    """One row group of the table: the data (made by gpusort-gen from `gen`; `zst`: compressed),
    the key options of gpusort-file and gpusort-check, the peers' --type (None: no peer), what
    gpusort-file adds (`extra`), and whether it runs through pipes."""

    def __init__(self, name, gen, keys, peer_type, extra=(), pipe=False, zst=False, stxxl_memory=None, cold=False):
        self.name, self.gen, self.keys, self.peer_type = name, list(gen), list(keys), peer_type
        self.extra, self.pipe, self.zst, self.stxxl_memory = list(extra), pipe, zst, stxxl_memory
        self.cold = cold  # the larger-than-memory workload: input cold, every program in a memory cgroup


def workloads(sizes, gensort_records, zst_records, cold_size=None):
    out = []
    for size in sizes:
        for t in ("u32", "u64"):
            out.append(Workload(f"{t}-{label(size)}", ["--type", t, "--size", str(size)], ["--type", t], t))
    middle, top = sizes[len(sizes) // 2], sizes[-1]
    u64 = lambda size: ["--type", "u64", "--size", str(size)]  # noqa: E731
    for dist in ("zipf", "nearly-sorted"):
        out.append(Workload(f"u64-{dist}-{label(middle)}", u64(middle) + ["--dist", dist], ["--type", "u64"], "u64"))
    for size in sorted({middle, top}):
        out.append(Workload(f"u64-{label(size)}-device-memory-eighth", u64(size), ["--type", "u64"], None,
                            ["--device-memory", str(max(size // 8, MIB))]))
        quarter = max(size // 4, MIB)
        out.append(Workload(f"u64-{label(size)}-memory-quarter", u64(size), ["--type", "u64"], None,
                            ["--memory", str(quarter)], stxxl_memory=quarter))
    out.append(Workload(f"u64-{label(middle)}-pipe", u64(middle), ["--type", "u64"], None, pipe=True))
    gensort = ["--format", "gensort", "--count"]
    out.append(Workload(f"gensort-{zst_records}-zst", gensort + [zst_records], ["--format", "gensort"], None, zst=True))
    out.append(Workload(f"gensort-{gensort_records}", gensort + [gensort_records], ["--format", "gensort"], "gensort"))
    if cold_size:
        out.append(Workload(f"u64-{label(cold_size)}-cold", u64(cold_size), ["--type", "u64"], None, cold=True))
    return out


def expected_bytes(w):
    """Bytes of the workload's data, before compression (for the disk check; the table takes the
    size of the file made)."""
    if "--size" in w.gen:
        return int(w.gen[w.gen.index("--size") + 1])
    return size_arg(w.gen[w.gen.index("--count") + 1]) * 100  # gpusort-gen's suffixes are powers of 1024 too


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the build folder (gpusort-file, gpusort-gen, gpusort-check, the peers)")
    ap.add_argument("--work", help="where the data go (default: a temp folder, removed after)")
    ap.add_argument("--out", default="bench-results", help="where results.csv, table.md and the plots go")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", help="sizes of the u32/u64 workloads (default 1G,4G,16G; --quick: 16M)")
    ap.add_argument("--only", help="comma-separated names: only these workloads")
    ap.add_argument("--list", action="store_true", help="print the workloads' names and stop")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--plots", action="store_true", help="fail when the plots cannot be made (no matplotlib)")
    ap.add_argument("--slow-peers-up-to", default="12G",
                    help="stxxl and gnu-sort (which sort at well under 1 GB/s) run on workloads up to this size")
    ap.add_argument("--larger-than-memory", metavar="SIZE",
                    help="add the workload u64-SIZE-cold: random u64 of SIZE (e.g. 16G), the input cold, every "
                         "program in a cgroup of a quarter of SIZE (needs root and cgroup v2; see above)")
    ap.add_argument("--sort-memory", metavar="SIZE",
                    help="larger than memory: the --memory the programs get (default: half the cgroup's limit)")
    ap.add_argument("--programs", metavar="NAME[,NAME...]",
                    help="larger than memory: only the programs whose names start with these (cp always runs)")
    ap.add_argument("--cgroup-memory", metavar="SIZE",
                    help="memory.max of that workload's cgroup (default: a quarter of --larger-than-memory)")
    args = ap.parse_args()
    if args.repeat < 1:
        sys.exit("compare.py: --repeat must be at least 1")
    try:
        cold_size = size_arg(args.larger_than_memory) if args.larger_than_memory else None
        cgroup_memory = size_arg(args.cgroup_memory) if args.cgroup_memory else None
    except (ValueError, IndexError):
        sys.exit("compare.py: --larger-than-memory and --cgroup-memory take a size (e.g. 16G, 4G)")
    if cgroup_memory is not None and not cold_size:
        sys.exit("compare.py: --cgroup-memory is for the workload that --larger-than-memory adds")
    if cold_size is not None and cold_size < MIB:
        sys.exit("compare.py: --larger-than-memory: at least 1M")
    if cgroup_memory is not None and cgroup_memory < 4 * MIB:
        sys.exit("compare.py: --cgroup-memory: at least 4M")

    sizes = [size_arg(s) for s in (args.sizes or ("4M,16M" if args.quick else "1G,4G,16G")).split(",")]
    chosen = workloads(sizes, "200K" if args.quick else "100M", "100K" if args.quick else "40M", cold_size)
    if args.list:
        print("\n".join(w.name for w in chosen))
        return 0
    if args.only:
        names = args.only.split(",")
        unknown = set(names) - {w.name for w in chosen}
        if unknown:
            hint = " (--larger-than-memory SIZE adds u64-SIZE-cold)" if any(n.endswith("-cold") for n in unknown) else ""
            sys.exit(f"compare.py: no workload named {', '.join(sorted(unknown))} (--list shows them){hint}")
        chosen = [w for w in chosen if w.name in names]

    sort_bin, gen_bin, check_bin = (find(args.bin, n) for n in ("gpusort-file", "gpusort-gen", "gpusort-check"))
    if not (sort_bin and gen_bin and check_bin):
        sys.exit(f"compare.py: gpusort-file, gpusort-gen and gpusort-check are needed in {args.bin} (build first)")
    ips4o_bin, stxxl_bin = find(args.bin, "gpusort-bench-ips4o"), find(args.bin, "gpusort-bench-stxxl")
    gnu_sort, zstd = shutil.which("sort"), shutil.which("zstd")
    work = args.work or tempfile.mkdtemp(prefix="gpusort-bench-")
    os.makedirs(work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    threads = os.cpu_count() or 1
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")

    # The GPU backend where a GPU can be used: a tiny sort says.
    probe = os.path.join(work, "probe")
    run([gen_bin, "--count", "1000", probe])
    probe_run = run([sort_bin, "--backend", "gpu", "--quiet", probe, probe + ".out"])
    gpu_ok = probe_run.returncode == 0
    for path in (probe, probe + ".out"):
        if os.path.exists(path):
            os.remove(path)
    missing = {}
    if not gpu_ok:
        why = (probe_run.stderr.strip().splitlines() or [f"exit {probe_run.returncode}"])[-1]
        missing["gpusort-gpu"] = "no usable GPU (" + why[:200] + ")"
    for name, found, why in (("ips4o", ips4o_bin, "gpusort-bench-ips4o not built"),
                             ("stxxl", stxxl_bin, "gpusort-bench-stxxl not built (libstxxl-dev or OpenMP missing)"),
                             ("gnu-sort", gnu_sort, "no sort on PATH"), ("zstd", zstd, "no zstd on PATH")):
        if not found:
            missing[name] = why

    rows = []
    device = None  # the GPU's name, from gpusort's --stats
    slow_limit = size_arg(args.slow_peers_up_to)
    for w in chosen:
        size = expected_bytes(w)
        if w.cold:
            tools = {"sort": sort_bin, "gen": gen_bin, "check": check_bin, "stxxl": stxxl_bin}
            made_rows, seen = run_cold(w, size, cgroup_memory or max(size // 4, 4 * MIB), tools, gpu_ok, work, args,
                                       rows, missing)
            rows += made_rows
            device = seen or device
            continue
        if "--device-memory" in w.extra and not gpu_ok:
            missing[w.name] = "skipped: no GPU"
            continue
        if w.zst and not zstd:
            missing[w.name] = "skipped: zstd, which makes its data, is not on PATH"
            continue
        data = os.path.join(work, w.name + (".bin.zst" if w.zst else ".bin"))
        out = os.path.join(work, w.name + (".out.zst" if w.zst else ".out"))
        stats = os.path.join(work, w.name + ".stats.json")
        # STXXL and GNU sort where they apply (GNU sort: records with a text form), up to the size limit.
        slow_applies = {"stxxl": bool(stxxl_bin and (w.peer_type or w.stxxl_memory)),
                        "gnu-sort": bool(gnu_sort and w.peer_type == "gensort")}
        slow = {peer: applies and size <= slow_limit for peer, applies in slow_applies.items()}
        text = os.path.join(work, w.name + ".txt") if slow["gnu-sort"] else None
        # Disk: the data and one output, the text copy, and what a program may spill (at most the data).
        need = 3 * size + (size if text else 0)
        free = shutil.disk_usage(work).free
        if need > free:
            missing[f"{w.name}"] = f"skipped: needs {need / 1e9:.1f} GB in {work}, {free / 1e9:.1f} GB free"
            continue
        made = run([gen_bin] + w.gen + [data[:-4] if w.zst else data])
        if made.returncode == 0:
            size = os.path.getsize(data[:-4] if w.zst else data)
        if made.returncode == 0 and w.zst:
            made = run(["zstd", "-q", "-T0", "--rm", data[:-4], "-o", data])
        if made.returncode != 0:
            missing[w.name] = "cannot make the data: " + made.stderr.strip()
            continue
        subprocess.run(["cat", data], stdout=subprocess.DEVNULL, check=True)  # into the page cache

        def gpusort(backend):
            command = [sort_bin, "--backend", backend, "--quiet", "--stats", stats] + w.keys + w.extra
            if w.pipe:
                return f"cat {shlex.quote(data)} | {shlex.join(command)} - - | cat > {shlex.quote(out)}"
            return command + [data, out]

        programs = [("cp", f"cat {shlex.quote(data)} | cat > {shlex.quote(out)}" if w.pipe else ["cp", data, out])]
        if w.zst and zstd:
            programs.append(("zstd", f"zstd -q -d -c {shlex.quote(data)} | zstd -q -T0 -c > {shlex.quote(out)}"))
        if gpu_ok:
            programs.append(("gpusort-gpu", gpusort("gpu")))
        if "--device-memory" not in w.extra:  # a budget of the GPU alone
            programs.append(("gpusort-cpu", gpusort("cpu")))
        # The in-memory peer needs the file and its own copy of it in memory.
        if ips4o_bin and w.peer_type and 2 * size < memory:
            programs.append(("ips4o", [ips4o_bin, "--type", w.peer_type, data, out]))
        for peer, applies in slow_applies.items():
            if applies and not slow[peer]:
                missing[f"{peer} on {w.name}"] = f"not run: larger than --slow-peers-up-to {args.slow_peers_up_to}"
        if slow["stxxl"]:
            budget = ["--memory", str(max(w.stxxl_memory // MIB, 16))] if w.stxxl_memory else []
            programs.append(("stxxl", [stxxl_bin, "--type", w.peer_type or "u64"] + budget + [data, out]))
        if text:
            made = run([gen_bin, "--format", "gensort-text"] + w.gen[2:] + [text])
            if made.returncode == 0:
                subprocess.run(["cat", text], stdout=subprocess.DEVNULL, check=True)
                programs.append(("gnu-sort", ["env", "LC_ALL=C", gnu_sort, f"--parallel={threads}", "-S", "50%",
                                              "-T", work, "-o", out, text]))
            else:
                missing[f"gnu-sort on {w.name}"] = "cannot make the text lines: " + made.stderr.strip()

        results = {}
        for program, command in programs:
            times, reports = [], []
            try:
                for _ in range(args.repeat):
                    if os.path.exists(out):
                        os.remove(out)
                    times.append(timed(command))
                    if program.startswith("gpusort"):
                        with open(stats) as f:
                            reports.append(json.load(f))
                        device = reports[-1].get("device") or device
                if program == "gnu-sort":
                    checked = run([check_bin, "--record-size", "100", "--key", "0:bytes:20", "--input", text, out])
                elif program not in ("cp", "zstd"):
                    checked = run([check_bin] + w.keys + ["--input", data, out])
                else:
                    checked = None
                if checked is not None and checked.returncode != 0:
                    raise RuntimeError("gpusort-check: " + (checked.stdout + checked.stderr).strip())
                median = statistics.median(times)
                results[program] = (median, times, reports[sorted(range(len(times)), key=times.__getitem__)[len(times) // 2]]
                                    if reports else None)
                # After each program, so that a run cut short keeps what it measured.
                save(args.out, rows + workload_rows(w.name, size, results), missing)
            except RuntimeError as e:
                missing[f"{program} on {w.name}"] = str(e)
            finally:
                if os.path.exists(out):
                    os.remove(out)
        for path in (text, data, stats):
            if path and os.path.exists(path):
                os.remove(path)

        rows += workload_rows(w.name, size, results)
        print(f"{w.name}: " + ", ".join(f"{p} {r[0]:.2f} s" for p, r in results.items()), file=sys.stderr, flush=True)

    save(args.out, rows, missing)
    machine = f"{cpu_model()}, {threads} CPUs, {memory / GIB:.0f} GiB of memory, " + (
        f"GPU: {device}" if device else "no GPU used")
    print(report.write(args.out, [os.path.join(args.out, "results.csv")], args.repeat, machine,
                       [os.path.join(args.out, "missing.txt")], require_plots=args.plots))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    # A program that failed (its run or its check) is an error; one that cannot run here is not.
    if not rows:
        print("compare.py: nothing was measured", file=sys.stderr)
        return 1
    return 1 if any(" on " in k and not v.startswith(("skipped", "cannot make", "not run")) for k, v in missing.items()) else 0


class Unavailable(Exception):
    """Why the larger-than-memory workload cannot run on this machine."""


def read_text(path):
    with open(path) as f:
        return f.read()


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


def cgroup2_mount():
    """Where the cgroup v2 hierarchy is mounted (/proc/self/mounts), None when it is not."""
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                fields = line.split()
                if len(fields) > 2 and fields[2] == "cgroup2":
                    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[1])
    except OSError:
        pass
    return None


def cgroup1_memory():
    """Whether a cgroup v1 hierarchy holds the memory controller (then v2 cannot have it)."""
    try:
        with open("/proc/self/mounts") as f:
            return any(len(x) > 3 and x[2] == "cgroup" and "memory" in x[3].split(",") for x in map(str.split, f))
    except OSError:
        return False


def drop_caches():
    """`sync`, then the clean page cache dropped: the next read of a file comes from the disk."""
    subprocess.run(["sync"], check=True)
    write_text(DROP_CACHES, "3\n")


class MemoryCgroup:
    """A child cgroup (v2) of the hierarchy's mount whose memory.max is `limit` (swap: none), for the
    timed commands of the larger-than-memory workload. Raises Unavailable, saying why, where it
    cannot be made; close() removes it."""

    def __init__(self, limit):
        self.limit, self.path, self.enabled = limit, None, False
        if os.geteuid() != 0:
            raise Unavailable("needs root (it makes a cgroup and drops the page cache)")
        mount = cgroup2_mount()
        if not mount:
            raise Unavailable("no cgroup v2 mount in /proc/self/mounts")
        self.parent = mount
        try:
            controllers = read_text(os.path.join(mount, "cgroup.controllers")).split()
        except OSError as e:
            raise Unavailable(f"cannot read {mount}/cgroup.controllers: {e.strerror}")
        if "memory" not in controllers:
            v1 = "; a cgroup v1 hierarchy holds it" if cgroup1_memory() else ""
            raise Unavailable(f"the memory controller is not available in the cgroup v2 hierarchy at {mount} "
                              f"(its controllers: {' '.join(controllers) or 'none'}{v1})")
        try:
            os.close(os.open(DROP_CACHES, os.O_WRONLY))
        except OSError as e:
            raise Unavailable(f"{DROP_CACHES} is not writable ({e.strerror})")
        control = os.path.join(mount, "cgroup.subtree_control")
        try:
            if "memory" not in read_text(control).split():
                write_text(control, "+memory")
                self.enabled = True
        except OSError as e:
            if e.errno == errno.EBUSY:
                raise Unavailable(f"cannot enable the memory controller in {control}: the cgroup {mount} has processes "
                                  "in it, and cgroup v2 enables controllers for the children of a non-root cgroup only "
                                  "while it has none (move its processes into a child cgroup first)")
            raise Unavailable(f"cannot enable the memory controller in {control}: {e.strerror}")
        path = os.path.join(mount, f"gpusort-bench-{os.getpid()}")
        try:
            os.mkdir(path)
        except OSError as e:
            self.close()
            raise Unavailable(f"cannot make the cgroup {path}: {e.strerror}")
        self.path = path
        try:
            write_text(os.path.join(path, "memory.max"), str(limit))
            if os.path.exists(os.path.join(path, "memory.swap.max")):
                write_text(os.path.join(path, "memory.swap.max"), "0")
            written = read_text(os.path.join(path, "memory.max")).strip()
        except OSError as e:
            self.close()
            raise Unavailable(f"cannot set the memory limit of {path}: {e.strerror}")
        if not written.isdigit() or abs(int(written) - limit) > 1 << 16:  # the kernel rounds to pages
            self.close()
            raise Unavailable(f"{path}/memory.max reads {written} after {limit} was written")

    def oom_kills(self):
        try:
            for line in read_text(os.path.join(self.path, "memory.events")).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def timed(self, command, out):
        """Seconds of one run of `command` (a list, or a string for sh) inside the cgroup, the output
        deleted and the page cache dropped before; the time includes a `sync` after the command."""
        if os.path.exists(out):
            os.remove(out)
        drop_caches()
        shown = command if isinstance(command, str) else shlex.join(command)
        script = f"echo $$ > {shlex.quote(os.path.join(self.path, 'cgroup.procs'))} && {shown} && sync"
        kills = self.oom_kills()
        start = time.perf_counter()
        result = subprocess.run(["sh", "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seconds = time.perf_counter() - start
        if result.returncode != 0:
            why = f"exit {result.returncode}"
            if self.oom_kills() > kills:
                why += f", killed by the cgroup's OOM killer (memory.max {self.limit / MIB:.0f} MiB)"
            raise RuntimeError(f"{shown}: {why}: {' '.join(result.stderr.split())[-400:]}")
        return seconds

    def close(self):
        """Removes the cgroup (its processes have exited), and disables the memory controller again
        where it was enabled here and no other cgroup is left beside."""
        if self.path:
            for attempt in range(50):
                try:
                    os.rmdir(self.path)
                    break
                except FileNotFoundError:
                    break
                except OSError as e:
                    if e.errno == errno.EBUSY and attempt < 49:  # a process still exiting
                        time.sleep(0.1)
                        continue
                    print(f"compare.py: cannot remove the cgroup {self.path}: {e.strerror} (rmdir it once its "
                          "processes are gone)", file=sys.stderr)
                    return
            self.path = None
        if self.enabled:
            try:
                if not any(os.path.isdir(os.path.join(self.parent, d)) for d in os.listdir(self.parent)):
                    write_text(os.path.join(self.parent, "cgroup.subtree_control"), "-memory")
            except OSError:
                pass
            self.enabled = False


DD_LINE = re.compile(r"^(\d+) bytes?\b.*copied, ([0-9.]+) s", re.M)


def dd_run(what, data, scratch, size):
    """(bytes, seconds) of one dd with direct I/O, the page cache dropped before: reading the data,
    or writing `size` bytes of zeros into a new file (`scratch`)."""
    if what == "read":
        command = ["dd", f"if={data}", "of=/dev/null", f"bs={DD_BLOCK}", "iflag=direct"]
    else:
        if os.path.exists(scratch):
            os.remove(scratch)
        command = ["dd", "if=/dev/zero", f"of={scratch}", f"bs={DD_BLOCK}", f"count={size}", "iflag=count_bytes",
                   "oflag=direct", "conv=fsync"]
    drop_caches()
    start = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, LC_ALL="C"))
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)}: exit {result.returncode}: {' '.join(result.stderr.split())[-400:]}")
    line = DD_LINE.search(result.stderr)
    return (int(line.group(1)), float(line.group(2))) if line and float(line.group(2)) > 0 else (size, seconds)


def run_cold(w, size, limit, tools, gpu_ok, work, args, rows, missing):
    """The larger-than-memory workload (see the module's help): returns its rows and the GPU's name
    (None where no GPU ran). `rows`: those of the workloads before, for the saves along the way."""
    data, out = os.path.join(work, w.name + ".bin"), os.path.join(work, w.name + ".out")
    stats = os.path.join(work, w.name + ".stats.json")
    cgroup, device, results = None, None, {}
    try:
        try:
            cgroup = MemoryCgroup(limit)
        except Unavailable as e:
            print(f"compare.py: {w.name} skipped: {e}", file=sys.stderr, flush=True)
            missing[w.name] = f"skipped: {e}"
            return [], None
        # Disk: the data, one output (or dd's file), and the runs a program spills (at most the data).
        need, free = 3 * size, shutil.disk_usage(work).free
        if need > free:
            why = f"needs {need / 1e9:.1f} GB in {work}, {free / 1e9:.1f} GB free"
            print(f"compare.py: {w.name} skipped: {why}", file=sys.stderr, flush=True)
            missing[w.name] = f"skipped: {why}"
            return [], None
        made = run([tools["gen"]] + w.gen + [data])
        if made.returncode != 0:
            missing[w.name] = "cannot make the data: " + made.stderr.strip()
            return [], None
        size = os.path.getsize(data)
        memory = size_arg(args.sort_memory) if args.sort_memory else max(limit // 2, MIB)
        stxxl_mib = max(memory // MIB, 16)  # STXXL's least: a few of its 2 MiB blocks for each merge

        # The disk's bandwidth with direct I/O, for the floor.
        bandwidth = {}
        for what in ("read", "write"):
            try:
                measured = [dd_run(what, data, out, size) for _ in range(args.repeat)]
                seconds = [t for _, t in measured]
                median = statistics.median(seconds)
                results[f"dd {what}"] = (median, seconds, None)
                bandwidth[what] = measured[0][0] / median
            except RuntimeError as e:
                missing[f"dd {what} on {w.name}"] = str(e)
            finally:
                if os.path.exists(out):
                    os.remove(out)
        floor = size / bandwidth["read"] + size / bandwidth["write"] if len(bandwidth) == 2 else None

        def gpusort(backend, *budget):
            return [tools["sort"], "--backend", backend, "--quiet", "--stats", stats] + w.keys + list(budget) + [data, out]

        programs = [("cp", ["cp", data, out])]
        if gpu_ok:
            programs += [("gpusort-gpu one-chunk", gpusort("gpu", "--memory", str(memory))),
                         ("gpusort-gpu runs", gpusort("gpu", "--device-memory", str(max(size // 8, MIB)),
                                                      "--memory", str(memory))),
                         ("gpusort-gpu default", gpusort("gpu"))]
        programs.append(("gpusort-cpu", gpusort("cpu", "--memory", str(memory))))
        if tools["stxxl"]:
            programs.append(("stxxl", [tools["stxxl"], "--type", "u64", "--memory", str(stxxl_mib), data, out]))

        if args.programs:
            wanted = args.programs.split(",")
            programs = [(p, c) for p, c in programs if p == "cp" or any(p.startswith(n) for n in wanted)]

        def these_rows():
            return workload_rows(w.name, size, results, floor=floor, stxxl_memory=stxxl_mib * MIB, cgroup_memory=limit)

        for program, command in programs:
            times, reports = [], []
            try:
                for _ in range(args.repeat):
                    times.append(cgroup.timed(command, out))
                    if program.startswith("gpusort"):
                        with open(stats) as f:
                            reports.append(json.load(f))
                        device = reports[-1].get("device") or device
                if program != "cp":
                    checked = run([tools["check"]] + w.keys + ["--input", data, out])
                    if checked.returncode != 0:
                        raise RuntimeError("gpusort-check: " + " ".join((checked.stdout + checked.stderr).split()))
                middle = sorted(range(len(times)), key=times.__getitem__)[len(times) // 2]
                results[program] = (statistics.median(times), times, reports[middle] if reports else None)
                save(args.out, rows + these_rows(), missing)
            except RuntimeError as e:
                missing[f"{program} on {w.name}"] = str(e)
            finally:
                if os.path.exists(out):
                    os.remove(out)
        print(f"{w.name}: " + ", ".join(f"{p} {r[0]:.2f} s" for p, r in results.items()), file=sys.stderr, flush=True)
        return these_rows(), device
    finally:
        if cgroup:
            cgroup.close()
        for path in (data, out, stats):
            if os.path.exists(path):
                os.remove(path)


def workload_rows(name, size, results, floor=None, stxxl_memory=None, cgroup_memory=None):
    """The table's rows of one workload: results[program] = (median, times, --stats of the median run).
    A program's name may carry its setting after a space ("gpusort-gpu runs"); `dd read` and `dd write`
    are the disk's bandwidth, not programs. `floor`: the seconds of reading and writing the data once
    at dd's bandwidth (a sort that spilled its runs: twice that); `stxxl_memory`: STXXL's --memory
    there, in bytes."""
    peers = [r[0] for p, r in results.items() if p.split(" ")[0] in PEERS]
    best_peer = min(peers) if peers else None
    cp = results.get("cp", (None,))[0]
    rows = []
    for program, (median, times, stats_report) in results.items():
        base = program.split(" ")[0]
        row = {"workload": name, "bytes": size, "program": program, "median_s": round(median, 3),
               "runs_s": " ".join(f"{t:.3f}" for t in times),
               "gb_per_s": round(size / median / 1e9, 3) if median > 0 else "",
               "vs_cp": round(median / cp, 2) if cp and base != "dd" else "",
               "vs_best_peer": round(median / best_peer, 2) if best_peer and base not in ("cp", "zstd", "dd") else ""}
        if cgroup_memory:
            row["cgroup_memory"] = cgroup_memory
        if floor and base != "dd":
            if stats_report:
                spilled = stats_report.get("bytes_spilled", 0) > 0
            else:
                spilled = base == "stxxl" and bool(stxxl_memory) and size > stxxl_memory
            row["floor_s"] = round(floor * (2 if spilled else 1), 3)
            row["vs_floor"] = round(median / (floor * (2 if spilled else 1)), 2)
        if stats_report:
            seconds = stats_report["seconds"]
            for phase in PHASES:
                row[phase] = round(seconds[phase], 3)
            for phase in ("read", "write", "merge"):
                row[phase + "_gb_per_s"] = round(size / seconds[phase] / 1e9, 3) if seconds[phase] > 0 else ""
            row["runs"] = stats_report["runs"]
            row["merge_passes"] = stats_report["merge_passes"]
            for key in ("bytes_spilled", "spill_io", "input_io", "output_io"):
                row[key] = stats_report.get(key, "")
            row["memory_budget"] = stats_report.get("budgets", {}).get("memory", "")
        rows.append(row)
    return rows


FIELDS = ["workload", "bytes", "program", "median_s", "runs_s", "gb_per_s", "vs_cp", "vs_best_peer"] + PHASES + [
    "runs", "merge_passes", "floor_s", "vs_floor", "read_gb_per_s", "write_gb_per_s", "merge_gb_per_s",
    "bytes_spilled", "spill_io", "input_io", "output_io", "memory_budget", "cgroup_memory"]


def save(out, rows, missing):
    fields = FIELDS
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(out, "missing.txt"), "w") as f:
        f.writelines(f"{k}: {v}\n" for k, v in missing.items())


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "CPU"


if __name__ == "__main__":
    sys.exit(main())
