#!/usr/bin/env python3
"""Benchmark of gpusort-file in pipelines: pipes and compressed files beside the plain sort.

Generates gensort records (--format gensort: 100-byte records, random 10-byte key, a text-like
payload that compresses as real dumps do) or random u64 keys, keeps them in the page cache and
times, wall clock, median of --repeat runs with `sync` between runs (untimed):
  cp INPUT OUT                                  the reference
  cat INPUT | cat > OUT                         the reference for pipes
  gpusort-file INPUT OUT                        the plain sort, file to file
  cat INPUT | gpusort-file - - | cat > OUT      through pipes both ways
  gpusort-file INPUT OUT.F                      writing each format F (gz, bz2, xz, zst)
  gpusort-file IN.F OUT                         reading each format F (IN.F made once, untimed,
                                                by gpusort-file itself with --output-compression)
and prints each beside cp and beside the plain sort as ratios. Every output is checked once with
gpusort-check --input (which reads compressed outputs itself).
"""
import argparse
import os
import statistics
import subprocess
import time


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True, executable="/bin/bash")


def timed(cmd):
    sh("sync")
    start = time.perf_counter()
    sh("set -o pipefail; " + cmd)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build", help="build folder holding src/ and tools/")
    ap.add_argument("--dir", default="/tmp/gpusort-pipeline-bench", help="folder for the data")
    ap.add_argument("--records", default="10M", help="records to generate (gpusort-gen --count)")
    ap.add_argument("--data", choices=["gensort", "u64"], default="gensort")
    ap.add_argument("--formats", default="gz,bz2,xz,zst")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--extra", default="", help="more gpusort-file options, e.g. '--backend cpu'")
    args = ap.parse_args()

    gen = os.path.join(args.bin, "tools", "gpusort-gen")
    check = os.path.join(args.bin, "tools", "gpusort-check")
    sorter = os.path.join(args.bin, "src", "gpusort-file")
    kind = ["--format", "gensort"] if args.data == "gensort" else ["--type", "u64"]
    opts = " ".join(kind + ([args.extra] if args.extra else []))
    os.makedirs(args.dir, exist_ok=True)
    data = os.path.join(args.dir, "in.bin")
    out = os.path.join(args.dir, "out.bin")
    sh(f"{gen} {' '.join(kind)} --count {args.records} --seed 7 {data}")
    sh(f"cat {data} > /dev/null")
    size = os.path.getsize(data)
    formats = [f for f in args.formats.split(",") if f]
    for f in formats:
        sh(f"{sorter} {opts} --quiet --output-compression {f} {data} {data}.{f}")

    configs = [("cp", f"cp {data} {out}", out),
               ("sort file -> file", f"{sorter} {opts} {data} {out}", out),
               ("cat | cat (pipe copy)", f"cat {data} | cat > {out}", out),
               ("sort pipe -> pipe", f"cat {data} | {sorter} {opts} - - | cat > {out}", out)]
    for f in formats:
        configs.append((f"sort file -> .{f}", f"{sorter} {opts} {data} {out}.{f}", f"{out}.{f}"))
    for f in formats:
        configs.append((f"sort .{f} -> file", f"{sorter} {opts} {data}.{f} {out}", out))

    times = {name: [] for name, *_ in configs}
    for _ in range(args.repeat):
        for name, cmd, _ in configs:
            times[name].append(timed(cmd))
    for name, cmd, result in configs:
        if name in ("cp", "cat | cat (pipe copy)"):
            continue
        sh(f"{check} {' '.join(kind)} --input {data} {result} > /dev/null")

    cp = statistics.median(times["cp"])
    base = statistics.median(times["sort file -> file"])
    print(f"{size / 1e9:.2f} GB ({args.records} records, {args.data}), median of {args.repeat}")
    print(f"{'what':24} {'seconds':>8} {'x cp':>7} {'x sort':>7} {'MB/s':>8}  runs")
    for name, *_ in configs:
        m = statistics.median(times[name])
        runs = ", ".join(f"{t:.3f}" for t in times[name])
        print(f"{name:24} {m:8.3f} {m / cp:7.2f} {m / base:7.2f} {size / 1e6 / m:8.0f}  {runs}")
    for f in formats:
        print(f".{f}: {os.path.getsize(data + '.' + f) / size:.3f} of the plain size")


if __name__ == "__main__":
    main()
