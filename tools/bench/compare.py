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
"""
import argparse
import csv
import json
import os
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

    def __init__(self, name, gen, keys, peer_type, extra=(), pipe=False, zst=False, stxxl_memory=None):
        self.name, self.gen, self.keys, self.peer_type = name, list(gen), list(keys), peer_type
        self.extra, self.pipe, self.zst, self.stxxl_memory = list(extra), pipe, zst, stxxl_memory


def workloads(sizes, gensort_records, zst_records):
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
    args = ap.parse_args()
    if args.repeat < 1:
        sys.exit("compare.py: --repeat must be at least 1")

    sizes = [size_arg(s) for s in (args.sizes or ("4M,16M" if args.quick else "1G,4G,16G")).split(",")]
    chosen = workloads(sizes, "200K" if args.quick else "100M", "100K" if args.quick else "40M")
    if args.list:
        print("\n".join(w.name for w in chosen))
        return 0
    if args.only:
        names = args.only.split(",")
        unknown = set(names) - {w.name for w in chosen}
        if unknown:
            sys.exit(f"compare.py: no workload named {', '.join(sorted(unknown))} (--list shows them)")
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


def workload_rows(name, size, results):
    """The table's rows of one workload: results[program] = (median, times, --stats of the median run)."""
    peers = [r[0] for p, r in results.items() if p in PEERS]
    best_peer = min(peers) if peers else None
    cp = results.get("cp", (None,))[0]
    rows = []
    for program, (median, times, stats_report) in results.items():
        row = {"workload": name, "bytes": size, "program": program, "median_s": round(median, 3),
               "runs_s": " ".join(f"{t:.3f}" for t in times),
               "gb_per_s": round(size / median / 1e9, 3) if median > 0 else "",
               "vs_cp": round(median / cp, 2) if cp else "",
               "vs_best_peer": round(median / best_peer, 2) if best_peer and program not in ("cp", "zstd") else ""}
        if stats_report:
            for phase in PHASES:
                row[phase] = round(stats_report["seconds"][phase], 3)
            row["runs"] = stats_report["runs"]
            row["merge_passes"] = stats_report["merge_passes"]
        rows.append(row)
    return rows


def save(out, rows, missing):
    fields = ["workload", "bytes", "program", "median_s", "runs_s", "gb_per_s", "vs_cp", "vs_best_peer"] + PHASES + [
        "runs", "merge_passes"]
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
