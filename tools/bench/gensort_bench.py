#!/usr/bin/env python3
"""Sort Benchmark style records end to end: gpusort-file beside cp and GNU sort.

Generates --size bytes of 100-byte gensort records with gpusort-gen (--format gensort) and the
same records as 100-byte text lines (--format gensort-text: the 10-byte key as 20 hex digits, so
that LC_ALL=C line order is the binary key order), reads both once so that they sit in the page
cache, then times (wall clock, median of --repeat runs; before each run, untimed: the input is
read again to keep it cached, the previous output is deleted, and `sync`)
  cp BINARY OUT
  gpusort-file --format gensort --stats STATS BINARY OUT
  LC_ALL=C sort --parallel=P -S MEM -T DIR -o OUT TEXT
and prints each median with all samples, its ratio to cp, gpusort beside GNU sort, the gpusort
phases from --stats (seconds; phases overlap), and whether the outputs are right (checked once,
untimed: gpusort-check --format gensort --input BINARY OUT, and LC_ALL=C sort -c OUT).
Big files are deleted as soon as they are no longer needed, unless --keep.

Sizes are decimal: 10G = 10*10^9 bytes = 100M records; 1G, 500M, 0.01G also work.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

RECORD = 100
PHASES = ["read", "copy_in", "sort", "copy_out", "write", "merge"]


def parse_size(text):
    units = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    t = text.strip().upper()
    if t.endswith("B"):
        t = t[:-1]
    suffix = t[-1] if t and t[-1] in units else ""
    number = t[: len(t) - len(suffix)]
    try:
        value = float(number) * units[suffix]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: '{text}' (e.g. 10G, 500M, 0.01G)")
    if value < RECORD:
        raise argparse.ArgumentTypeError(f"size '{text}' is less than one {RECORD}-byte record")
    return int(value)


def run(cmd, env=None):
    subprocess.run(cmd, check=True, env=env)


def timed(cmd, env=None):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    return time.perf_counter() - start


def warm(path):
    with open(path, "rb") as f:
        while f.read(16 << 20):
            pass


def remove(*paths):
    for path in paths:
        if path and os.path.exists(path):
            os.remove(path)


def fmt_samples(times):
    return ", ".join(f"{t:.3f}" for t in times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build", help="build folder holding src/ and tools/ (default: build)")
    ap.add_argument("--dir", default="/tmp/gpusort-gensort-bench", help="folder for the data")
    ap.add_argument("--size", type=parse_size, default=parse_size("10G"),
                    help="input size in bytes, decimal suffixes K M G T (default 10G = 100M records)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each command (default 3)")
    ap.add_argument("--seed", type=int, default=2026, help="gpusort-gen --seed (default 2026)")
    ap.add_argument("--dist", default="uniform", help="gpusort-gen --dist (default uniform)")
    ap.add_argument("--backend", default=None, help="gpusort-file --backend (auto, gpu, cpu)")
    ap.add_argument("--device-memory", default=None, help="gpusort-file --device-memory, e.g. 40G")
    ap.add_argument("--memory", default=None, help="gpusort-file --memory, e.g. 32G")
    ap.add_argument("--tmp-dir", default=None, help="spill folder for both sorters (default: --dir)")
    ap.add_argument("--sort-bin", default="sort", help="GNU sort program (default: sort)")
    ap.add_argument("--sort-parallel", type=int, default=16, help="GNU sort --parallel (default 16)")
    ap.add_argument("--sort-memory", default="50%", help="GNU sort -S (default 50%%)")
    ap.add_argument("--skip-gnu-sort", action="store_true", help="do not time GNU sort (and write no text file)")
    ap.add_argument("--skip-gpusort", action="store_true", help="do not time gpusort-file")
    ap.add_argument("--no-check", action="store_true", help="do not check the sorted outputs")
    ap.add_argument("--keep", action="store_true", help="keep the generated inputs (and reuse them next time)")
    ap.add_argument("--json", default=None, metavar="FILE", help="also write every figure as JSON to FILE")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")

    gen = os.path.join(args.bin, "tools", "gpusort-gen")
    check = os.path.join(args.bin, "tools", "gpusort-check")
    sorter = os.path.join(args.bin, "src", "gpusort-file")
    for program in [gen] + ([] if args.no_check or args.skip_gpusort else [check]) + ([] if args.skip_gpusort else [sorter]):
        if not os.access(program, os.X_OK):
            sys.exit(f"gensort_bench: no program {program} (see --bin)")
    if not args.skip_gnu_sort and shutil.which(args.sort_bin) is None:
        sys.exit(f"gensort_bench: no program {args.sort_bin} (see --sort-bin)")

    records = args.size // RECORD
    nbytes = records * RECORD
    os.makedirs(args.dir, exist_ok=True)
    tmp_dir = args.tmp_dir or args.dir
    tag = f"{records}r-{args.dist}-s{args.seed}"
    binary = os.path.join(args.dir, f"gensort-{tag}.bin")
    text = os.path.join(args.dir, f"gensort-{tag}.txt")
    out = os.path.join(args.dir, "out.bench")
    stats = os.path.join(args.dir, "stats.json")
    c_env = dict(os.environ, LC_ALL="C")

    report = {
        "bytes": nbytes, "records": records, "record_size": RECORD, "seed": args.seed, "dist": args.dist,
        "repeat": args.repeat, "host": platform.node(), "cpus": os.cpu_count(),
        "generate_seconds": {}, "samples": {}, "commands": {}, "medians": {}, "ratios": {},
        "gpusort_stats": [], "checks": {},
    }
    failed_checks = []
    try:
        # Inputs (reused with --keep when the size matches: same name means same seed, count, dist).
        inputs = [("gensort", binary)] + ([] if args.skip_gnu_sort else [("gensort-text", text)])
        for fmt, path in inputs:
            if os.path.exists(path) and os.path.getsize(path) == nbytes:
                print(f"reusing {path}", flush=True)
                continue
            print(f"generating {path} ({nbytes / 1e9:.2f} GB, {records} records, --format {fmt})", flush=True)
            report["generate_seconds"][fmt] = timed(
                [gen, "--format", fmt, "--count", str(records), "--dist", args.dist, "--seed", str(args.seed), path])
        for _, path in inputs:
            warm(path)

        configs = [("cp", ["cp", binary, out], None, binary)]
        if not args.skip_gpusort:
            cmd = [sorter, "--format", "gensort", "--stats", stats, "--tmp-dir", tmp_dir]
            for option, value in (("--backend", args.backend), ("--device-memory", args.device_memory),
                                  ("--memory", args.memory)):
                if value:
                    cmd += [option, value]
            configs.append(("gpusort", cmd + [binary, out], None, binary))
        if not args.skip_gnu_sort:
            configs.append(("gnu-sort", [args.sort_bin, f"--parallel={args.sort_parallel}", "-S", args.sort_memory,
                                         "-T", tmp_dir, "-o", out, text], c_env, text))
        for name, cmd, env, _ in configs:
            report["commands"][name] = ("LC_ALL=C " if env else "") + " ".join(cmd)

        last_use = {source: i for i, (_, _, _, source) in enumerate(configs)}
        for rep in range(args.repeat):
            for i, (name, cmd, env, source) in enumerate(configs):
                remove(out, stats)
                warm(source)
                run(["sync"])
                seconds = timed(cmd, env)
                report["samples"].setdefault(name, []).append(seconds)
                print(f"  run {rep + 1}/{args.repeat} {name:8s} {seconds:8.3f} s", flush=True)
                if name == "gpusort":
                    with open(stats) as f:
                        report["gpusort_stats"].append(json.load(f))
                if rep == 0 and not args.no_check and name != "cp":
                    if name == "gpusort":
                        rc = subprocess.run([check, "--format", "gensort", "--input", binary, out]).returncode
                    else:
                        size_ok = os.path.getsize(out) == nbytes
                        rc = subprocess.run([args.sort_bin, "-c", out], env=c_env).returncode if size_ok else -1
                    report["checks"][name] = "ok" if rc == 0 else f"FAILED (status {rc})"
                    if rc != 0:
                        failed_checks.append(name)
                remove(out)
                if rep == args.repeat - 1 and last_use[source] == i and not args.keep:
                    remove(source)  # its last run: free the disk for the rest
    finally:
        remove(out, stats)
        if not args.keep:
            remove(binary, text)

    # Summary.
    med = {name: statistics.median(times) for name, times in report["samples"].items()}
    report["medians"] = med
    cp_median = med["cp"]
    for name, m in med.items():
        report["ratios"][f"{name}/cp"] = m / cp_median
    if "gpusort" in med and "gnu-sort" in med:
        report["ratios"]["gnu-sort/gpusort"] = med["gnu-sort"] / med["gpusort"]

    print(f"\n== {nbytes / 1e9:.2f} GB of gensort records ({records} x {RECORD} B, --dist {args.dist}), "
          f"page cache warm, median of {args.repeat} ==")
    print(f"{'':9s} {'median s':>9s} {'GB/s':>7s} {'x cp':>6s}  samples")
    for name, m in med.items():
        print(f"{name:9s} {m:9.3f} {nbytes / 1e9 / m:7.2f} {m / cp_median:6.2f}  ({fmt_samples(report['samples'][name])})")
    if "gnu-sort/gpusort" in report["ratios"]:
        print(f"gpusort is {report['ratios']['gnu-sort/gpusort']:.2f}x as fast as GNU sort "
              f"(--parallel={args.sort_parallel} -S {args.sort_memory}, on the text lines)")
    if report["gpusort_stats"]:
        reports = report["gpusort_stats"]
        phase_med = {k: statistics.median(r["seconds"][k] for r in reports) for k in PHASES}
        total = statistics.median(r["seconds"]["total"] for r in reports)
        summed = sum(phase_med.values())
        report["gpusort_phase_medians"] = dict(phase_med, total=total)
        r0 = reports[0]
        print("gpusort phases (s): " + "  ".join(f"{k} {phase_med[k]:.3f}" for k in PHASES) +
              f"  | total {total:.3f}, phases sum {summed:.3f}, overlapped {max(0.0, summed - total):.3f}")
        print(f"gpusort: backend {r0.get('backend')}, runs {r0.get('runs')}, merge passes {r0.get('merge_passes')}, "
              f"spilled {r0.get('bytes_spilled', 0) / 1e9:.2f} GB, memory budget {r0.get('memory_budget', 0) / 2**20:.0f} MiB")
    if report["checks"]:
        print("checks: " + ", ".join(f"{name} {result}" for name, result in report["checks"].items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    return 1 if failed_checks else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as e:
        sys.exit(f"gensort_bench: failed (status {e.returncode}): {' '.join(map(str, e.cmd))}")
