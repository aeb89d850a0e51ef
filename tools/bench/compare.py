#!/usr/bin/env python3
"""gpusort beside what a user could pick instead, on this machine, in one sitting.

For each workload the data is generated once (gpusort-gen) and read once so that it sits in the
page cache; then every program sorts the same file into an output that does not exist yet, with
`sync` before each run, --repeat times (3 by default), and the median is kept:
  cp            the copy of the file: the floor
  gpusort-gpu   gpusort-file --backend gpu (where a GPU can be used)
  gpusort-cpu   gpusort-file --backend cpu
  ips4o         gpusort-bench-ips4o: parallel pread, IPS4o on all cores, parallel pwrite
  gnu-sort      LC_ALL=C sort --parallel=N -S 50% on the same records as text lines (gensort only)
A program that cannot run here is reported as missing. Every output is checked: gpusort-check
--input for binary outputs, `sort -c` for text. Prints a table of medians with each one's ratio to
cp and to the best peer, and writes it (table.md) with a CSV (results.csv) into --out.

  tools/bench/compare.py --bin build [--quick] [--out bench-results] [--work DIR] [--repeat N]
--quick: small sizes (tens of MB), for a check of the whole run in about a minute on 2 cores.
"""
import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def find(bin_dir, name):
    for sub in ("", "src", "tools"):
        path = os.path.join(bin_dir, sub, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def timed(cmd, stdout=None):
    subprocess.run(["sync"], check=True)
    start = time.perf_counter()
    result = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {result.returncode}: {result.stderr.strip()}")
    return seconds


def workloads(quick):
    """(name, gpusort-gen options, gpusort-file key options, peer type, extra gpusort options)."""
    mib = 1 << 20
    if quick:
        sizes = [16 * mib]
        gensort_count = "200K"
    else:
        sizes = [1 << 30, 4 << 30, 16 << 30]
        gensort_count = "100M"
    out = []
    for size in sizes:
        label = f"{size // mib}MiB" if size < (1 << 30) else f"{size >> 30}GiB"
        out.append((f"u32-{label}", ["--type", "u32", "--size", str(size)], ["--type", "u32"], "u32", []))
        out.append((f"u64-{label}", ["--type", "u64", "--size", str(size)], ["--type", "u64"], "u64", []))
    top = sizes[-1]
    label = f"{top // mib}MiB" if top < (1 << 30) else f"{top >> 30}GiB"
    out.append((f"u64-zipf-{label}", ["--type", "u64", "--dist", "zipf", "--size", str(top)], ["--type", "u64"], "u64", []))
    out.append((f"u64-nearly-sorted-{label}", ["--type", "u64", "--dist", "nearly-sorted", "--size", str(top)],
                ["--type", "u64"], "u64", []))
    out.append((f"u64-{label}-memory-quarter", ["--type", "u64", "--size", str(top)], ["--type", "u64"], None,
                ["--memory", str(max(top // 4, mib))]))
    out.append((f"gensort-{gensort_count}", ["--format", "gensort", "--count", gensort_count], ["--format", "gensort"],
                "gensort", []))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the build folder (gpusort-file, gpusort-gen, gpusort-check, gpusort-bench-ips4o)")
    ap.add_argument("--work", help="where the data go (default: a temp folder, removed after)")
    ap.add_argument("--out", default="bench-results", help="where table.md and results.csv go")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()

    sort_bin, gen_bin, check_bin = (find(args.bin, n) for n in ("gpusort-file", "gpusort-gen", "gpusort-check"))
    if not (sort_bin and gen_bin and check_bin):
        sys.exit(f"compare.py: gpusort-file, gpusort-gen and gpusort-check are needed in {args.bin} (build first)")
    peer_bin = find(args.bin, "gpusort-bench-ips4o")
    gnu_sort = shutil.which("sort")
    work = args.work or tempfile.mkdtemp(prefix="gpusort-bench-")
    os.makedirs(work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    threads = os.cpu_count() or 1

    # The GPU backend where a GPU can be used: a tiny sort says.
    probe = os.path.join(work, "probe")
    run([gen_bin, "--count", "1000", probe])
    gpu_ok = run([sort_bin, "--backend", "gpu", "--quiet", probe, probe + ".out"]).returncode == 0
    missing = {}
    if not gpu_ok:
        missing["gpusort-gpu"] = "no usable GPU"
    if not peer_bin:
        missing["ips4o"] = "gpusort-bench-ips4o not built"
    if not gnu_sort:
        missing["gnu-sort"] = "no sort on PATH"

    rows = []
    for name, gen_opts, keys, peer_type, extra in workloads(args.quick):
        data = os.path.join(work, name + ".bin")
        out = os.path.join(work, name + ".out")
        r = run([gen_bin] + gen_opts + [data])
        if r.returncode != 0:
            print(f"{name}: cannot generate the data: {r.stderr.strip()}", file=sys.stderr)
            continue
        size = os.path.getsize(data)
        with open(data, "rb") as f:  # into the page cache
            while f.read(64 << 20):
                pass
        programs = [("cp", lambda: ["cp", data, out], None)]
        if gpu_ok:
            programs.append(("gpusort-gpu", lambda: [sort_bin, "--backend", "gpu", "--quiet"] + keys + extra + [data, out], "binary"))
        programs.append(("gpusort-cpu", lambda: [sort_bin, "--backend", "cpu", "--quiet"] + keys + extra + [data, out], "binary"))
        if peer_bin and peer_type and not extra:
            programs.append(("ips4o", lambda: [peer_bin, "--type", peer_type, data, out], "binary"))
        text = None
        if gnu_sort and peer_type == "gensort" and not extra:
            text = os.path.join(work, name + ".txt")
            r = run([gen_bin, "--format", "gensort-text"] + gen_opts[2:] + [text])
            if r.returncode == 0:
                programs.append(("gnu-sort", lambda: ["env", "LC_ALL=C", gnu_sort, f"--parallel={threads}", "-S", "50%",
                                                      "-T", work, "-o", out, text], "text"))
        medians = {}
        for program, command, check in programs:
            times = []
            try:
                for _ in range(args.repeat):
                    if os.path.exists(out):
                        os.remove(out)
                    times.append(timed(command()))
                if check == "binary":
                    r = run([check_bin] + keys + ["--input", data, out])
                    if r.returncode != 0:
                        raise RuntimeError("gpusort-check: " + (r.stdout + r.stderr).strip())
                elif check == "text":
                    r = run(["env", "LC_ALL=C", gnu_sort, "-c", out])
                    if r.returncode != 0:
                        raise RuntimeError("sort -c: " + r.stderr.strip())
                medians[program] = statistics.median(times)
            except RuntimeError as e:
                missing[f"{program} on {name}"] = str(e)
            finally:
                if os.path.exists(out):
                    os.remove(out)
        if text and os.path.exists(text):
            os.remove(text)
        os.remove(data)
        peers = [s for p, s in medians.items() if p in ("ips4o", "gnu-sort")]
        best_peer = min(peers) if peers else None
        for program, seconds in medians.items():
            rows.append({
                "workload": name, "bytes": size, "program": program, "median_s": round(seconds, 3),
                "gb_per_s": round(size / seconds / 1e9, 3) if seconds > 0 else "",
                "vs_cp": round(seconds / medians["cp"], 2) if medians.get("cp") else "",
                "vs_best_peer": round(seconds / best_peer, 2) if best_peer else "",
            })

    fields = ["workload", "bytes", "program", "median_s", "gb_per_s", "vs_cp", "vs_best_peer"]
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    lines = [f"median of {args.repeat} runs, {threads} CPUs; ratios: time / time of cp, time / time of the best peer",
             "", "| " + " | ".join(fields) + " |", "|" + "---|" * len(fields)]
    lines += ["| " + " | ".join(str(row[k]) for k in fields) + " |" for row in rows]
    if missing:
        lines += ["", "missing here:"] + [f"- {k}: {v}" for k, v in missing.items()]
    table = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(table)
    print(table)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    # A program that failed its check is an error; one that cannot run here is not.
    return 1 if any(" on " in k for k in missing) else 0


if __name__ == "__main__":
    sys.exit(main())
