#!/usr/bin/env python3
"""End-to-end benchmark of gpusort-file beside cp of the same file and the CPU backend.

For each size: generates random u64 keys with gpusort-gen, reads the file once so that it sits in
the page cache, then times (wall clock, median of --repeat runs, `sync` between runs, untimed)
  cp INPUT OUT, gpusort-file --backend gpu, gpusort-file --backend cpu (optional),
prints each beside cp as a ratio, the phases from --stats (seconds; phases overlap) and how much
of their sum overlapped, the merge's own phases (merge_phases: seconds and bytes), and checks
every sorted output with gpusort-check.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def run(cmd):
    subprocess.run(cmd, check=True)


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build", help="build folder holding src/ and tools/")
    ap.add_argument("--dir", default="/tmp/gpusort-bench", help="folder for the data")
    ap.add_argument("--sizes", default="4G", help="comma-separated sizes in GiB, e.g. 4G,16G")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--device-memory", default=None, help="passed to the GPU runs, e.g. 2G")
    ap.add_argument("--cpu", action="store_true", help="also time --backend cpu")
    ap.add_argument("--memory", default=None, help="--memory for gpusort-file")
    args = ap.parse_args()

    gen = os.path.join(args.bin, "tools", "gpusort-gen")
    check = os.path.join(args.bin, "tools", "gpusort-check")
    sorter = os.path.join(args.bin, "src", "gpusort-file")
    os.makedirs(args.dir, exist_ok=True)

    for size in args.sizes.split(","):
        gib = int(size.rstrip("Gg"))
        data = os.path.join(args.dir, f"random-{gib}g.u64")
        out = os.path.join(args.dir, "out.u64")
        stats = os.path.join(args.dir, "stats.json")
        if not os.path.exists(data) or os.path.getsize(data) != gib << 30:
            run([gen, "--type", "u64", "--count", f"{gib * 128}M", "--seed", "2026", data])
        subprocess.run(f"cat '{data}' > /dev/null", shell=True, check=True)

        results = {}
        phases = {}
        configs = [("cp", ["cp", data, out])]
        gpu_cmd = [sorter, "--backend", "gpu", "--stats", stats, data, out]
        if args.device_memory:
            gpu_cmd[1:1] = ["--device-memory", args.device_memory]
        if args.memory:
            gpu_cmd[1:1] = ["--memory", args.memory]
        configs.append(("gpu", gpu_cmd))
        if args.cpu:
            cpu_cmd = [sorter, "--backend", "cpu", "--stats", stats, data, out]
            if args.memory:
                cpu_cmd[1:1] = ["--memory", args.memory]
            configs.append(("cpu", cpu_cmd))
        for rep in range(args.repeat):
            for name, cmd in configs:
                if os.path.exists(out):
                    os.remove(out)
                run(["sync"])
                seconds = timed(cmd)
                results.setdefault(name, []).append(seconds)
                if name != "cp":
                    with open(stats) as f:
                        phases.setdefault(name, []).append(json.load(f))
                    if rep == 0:
                        run([check, "--type", "u64", "--input", data, out])
        for path in (out, data):
            if os.path.exists(path):
                os.remove(path)

        cp_median = statistics.median(results["cp"])
        print(f"\n== {gib} GiB of random u64 (page cache warm), median of {args.repeat} ==")
        for name, times in results.items():
            median = statistics.median(times)
            line = f"{name:4s} {median:7.3f} s  ({', '.join(f'{t:.3f}' for t in times)})  ratio to cp {median / cp_median:5.2f}x"
            print(line)
        for name, reports in phases.items():
            keys = ["read", "copy_in", "sort", "copy_out", "write", "merge"]
            med = {k: statistics.median(r["seconds"][k] for r in reports) for k in keys}
            total = statistics.median(r["seconds"]["total"] for r in reports)
            r0 = reports[0]
            summed = sum(med.values())
            print(f"{name} phases (s): " + "  ".join(f"{k} {med[k]:.3f}" for k in keys) +
                  f"  | total {total:.3f}, phases sum {summed:.3f}, overlapped {max(0.0, summed - total):.3f}"
                  f"  | backend {r0['backend']}, runs {r0['runs']}, merge passes {r0['merge_passes']}")
            if med["merge"] > 0:
                merge = {k: (statistics.median(r["merge_phases"][k]["seconds"] for r in reports),
                             statistics.median(r["merge_phases"][k]["bytes"] for r in reports))
                         for k in r0["merge_phases"]}
                print(f"{name} merge phases (s / GiB, summed over overlapping slices): " +
                      "  ".join(f"{k} {sec:.3f}/{b / 2**30:.1f}" for k, (sec, b) in merge.items() if sec or b))


if __name__ == "__main__":
    sys.exit(main())
