#!/usr/bin/env python3
"""How gpusort-mpi scales with ranks on this host: one rank per GPU, the same input for every row.

For each count of ranks n (--ranks, default 1, 2, 4, 8 up to the GPUs found), in one sitting, on
one file made once by gpusort-gen and kept in the page cache, each run into an output that does
not exist yet, `sync` before each, --repeat runs (median kept):
  gpusort-mpi   mpirun -n n gpusort-mpi --stats ... INPUT OUTPUT (checked by gpusort-check --input)
  ceiling       n gpusort-file processes at once, process i on GPU i, each sorting its n-th of the
                file (made once as a file of its own, untimed): what the host gives n ranks when
                nothing is exchanged (each share checked by gpusort-check --input); with 1 rank,
                gpusort-file on the whole file, the one-process baseline
  cp            cp of the same file, once per sitting
The table gives, per row: the times, gpusort-mpi over the ceiling and over cp, the efficiency
(time on 1 rank / (n x time on n)), the partition imbalance, the exchange's GB/s per rank, and the
steps of the slowest rank (samples, counting, exchange and of it the transfer in its rounds, sort, output)
from --stats of the median
run. Writes scaling.csv, scaling.md and (with matplotlib) scaling.png into --out.

  tools/bench/scaling.py --bin DIR [--size 64G | --format gensort --count 1G] [--ranks 1,2,4,8]
                         [--backend gpu|cpu] [--repeat 3] [--work DIR] [--out bench-results]
                         [--mpirun "mpirun --bind-to none"] [--mpi-options "--exchange messages"]
                         [--mpi-tmpdir /dev/shm] [--quick] [-- OPTIONS OF gpusort-file]
--size: random u64 (default: 16 GiB per GPU found, at most 128 GiB; --quick: 8 MiB).
--quick: 8 MiB on the CPU backend with 1 and 2 ranks, a check of the whole run in seconds.
--mpi-options: options for gpusort-mpi alone, as one string (e.g. "--exchange messages"); the
table's `exchange` column says how the records crossed.
--mpi-tmpdir: the TMPDIR of the launcher, where Open MPI keeps its session folder (default
/dev/shm where it exists, as docs/distributed.md advises: in a folder on the disk that OUTPUT's writeback
keeps busy, removing it at the end of the job took 0.4-0.8 s more; "" keeps the environment's).
The disk must hold the input and, at once, either gpusort-mpi's output or the shares with their
outputs (3 times the data, checked up front; with 1 rank the share is the input itself), and the
temp files of any run that spills (each program checks its own room and says so).
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
from compare import find, size_arg  # noqa: E402

STEPS = ["samples", "counting", "exchange", "transfer", "sort", "output"]


def gpus():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, check=True).stdout
        return [line.strip() for line in out.splitlines() if line.strip()]
    except (OSError, subprocess.CalledProcessError):
        return []


def timed(commands, envs=None):
    """Wall seconds of running `commands` (lists) all at once, after `sync`; each must succeed."""
    subprocess.run(["sync"], check=True)
    start = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env=(envs[i] if envs else None)) for i, c in enumerate(commands)]
    errors = [p.communicate()[1] for p in procs]
    errors = [(c, p.returncode, err) for c, p, err in zip(commands, procs, errors)]
    seconds = time.perf_counter() - start
    for c, code, err in errors:
        if code != 0:
            raise RuntimeError(f"{shlex.join(c)}: exit {code}: {err.strip()[-600:]}")
    return seconds


def check(check_bin, keys, original, sorted_file):
    r = subprocess.run([check_bin] + keys + ["--input", original, sorted_file], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"gpusort-check {sorted_file}: {r.stdout.strip()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="folder with gpusort-mpi, gpusort-file, gpusort-gen, gpusort-check")
    ap.add_argument("--size", help="bytes of random u64 (e.g. 64G)")
    ap.add_argument("--format", choices=["gensort"], help="gensort records instead of u64 (with --count)")
    ap.add_argument("--count", help="records of --format gensort (e.g. 1G: 10^9 records are --count 1000000000)")
    ap.add_argument("--ranks", help="comma-separated counts of ranks")
    ap.add_argument("--backend", choices=["gpu", "cpu"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", help="where the data go (default: a temp folder, removed after)")
    ap.add_argument("--out", default="bench-results")
    ap.add_argument("--mpirun", default="mpirun --bind-to none",
                    help="the launcher and its options, as one string (unbound, so that the ranks' threads may use "
                         "every CPU, an equal share each: Open MPI binds a rank to one core by default when there "
                         "are at most two)")
    ap.add_argument("--mpi-options", default="", help="options for gpusort-mpi alone, as one string")
    ap.add_argument("--mpi-tmpdir", default="/dev/shm" if os.path.isdir("/dev/shm") else "",
                    help="TMPDIR of the launcher: where Open MPI keeps its session folder")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("sort_options", nargs="*", help="after --: options for gpusort-mpi and gpusort-file")
    args = ap.parse_args()

    names = {n: find(args.bin, n) for n in ("gpusort-mpi", "gpusort-file", "gpusort-gen", "gpusort-check")}
    if not all(names.values()):
        sys.exit(f"scaling.py: {', '.join(n for n, p in names.items() if not p)} not found in {args.bin} (build first)")
    found = gpus()
    backend = args.backend or ("cpu" if args.quick or not found else "gpu")
    if backend == "gpu" and not found:
        sys.exit("scaling.py: --backend gpu, but nvidia-smi lists no GPU")
    if args.ranks:
        ranks = [int(n) for n in args.ranks.split(",")]
    else:
        most = 2 if args.quick else (len(found) if backend == "gpu" else os.cpu_count() or 1)
        ranks = [n for n in (1, 2, 4, 8) if n <= most] or [1]
    if args.format == "gensort":
        if not args.count:
            sys.exit("scaling.py: --format gensort needs --count")
        gen, keys, size = ["--format", "gensort", "--count", args.count], ["--format", "gensort"], int(args.count) * 100
        record = 100
    else:
        size = size_arg(args.size) if args.size else (8 << 20 if args.quick else min(128 << 30, (16 << 30) * max(1, len(found))))
        gen, keys, record = ["--type", "u64", "--size", str(size)], ["--type", "u64"], 8
    work = args.work or tempfile.mkdtemp(prefix="gpusort-scaling-")
    os.makedirs(work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    free = shutil.disk_usage(work).free
    if 3 * size > free:
        sys.exit(f"scaling.py: {size / 1e9:.1f} GB of data need about {3 * size / 1e9:.0f} GB in {work}; "
                 f"{free / 1e9:.0f} GB are free (a smaller --size)")
    env = dict(os.environ)
    if os.geteuid() == 0:  # Open MPI refuses root without these
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    mpi_env = dict(env)  # the launcher's (and so its ranks')
    if args.mpi_tmpdir:
        mpi_env["TMPDIR"] = args.mpi_tmpdir

    data, out, stats = (os.path.join(work, n) for n in ("input.bin", "output.bin", "stats.json"))
    subprocess.run([names["gpusort-gen"]] + gen + [data], check=True)
    subprocess.run(["cat", data], stdout=subprocess.DEVNULL, check=True)

    def fresh(*paths):
        for p in paths:
            if os.path.exists(p):
                os.remove(p)

    cp_times = []
    for _ in range(args.repeat):
        fresh(out)
        cp_times.append(timed([["cp", data, out]]))
    fresh(out)
    cp = statistics.median(cp_times)

    rows = []
    options = ["--backend", backend, "--quiet"] + keys + args.sort_options
    for n in ranks:
        # gpusort-mpi on n ranks.
        launcher = shlex.split(args.mpirun) + ["-n", str(n), names["gpusort-mpi"]] + shlex.split(args.mpi_options)
        times, reports = [], []
        for _ in range(args.repeat):
            fresh(out)
            times.append(timed([launcher + options + ["--stats", stats, data, out]], [mpi_env]))
            with open(stats) as f:
                reports.append(json.load(f))
        check(names["gpusort-check"], keys, data, out)
        fresh(out)
        median = statistics.median(times)
        report = reports[sorted(range(len(times)), key=times.__getitem__)[len(times) // 2]]

        # The ceiling: n gpusort-file processes at once, each on its own share (with 1 rank, the input).
        shares = [data] if n == 1 else [os.path.join(work, f"share{i}.bin") for i in range(n)]
        records = size // record
        for i, share in enumerate(shares if n > 1 else []):
            first, last = records * i // n, records * (i + 1) // n
            with open(data, "rb") as src, open(share, "wb") as dst:
                src.seek(first * record)
                left = (last - first) * record
                while left:
                    block = src.read(min(left, 256 << 20))
                    dst.write(block)
                    left -= len(block)
        subprocess.run(["cat"] + shares, stdout=subprocess.DEVNULL, check=True)
        envs = []
        for i in range(n):
            e = dict(env)
            if backend == "gpu":
                e["CUDA_VISIBLE_DEVICES"] = str(i % len(found))
            envs.append(e)
        ceiling_times = []
        commands = [[names["gpusort-file"]] + options + [s, s + ".out"] for s in shares]
        for _ in range(args.repeat):
            fresh(*(s + ".out" for s in shares))
            ceiling_times.append(timed(commands, envs))
        for s in shares:
            check(names["gpusort-check"], keys, s, s + ".out")
        fresh(*(s for s in shares if s != data), *(s + ".out" for s in shares))
        ceiling = statistics.median(ceiling_times)

        slowest = max(report["per_rank"], key=lambda r: r["seconds"]["total"])
        senders = [r for r in report["per_rank"] if r["exchange_bytes_sent"] > 0]
        rates = [r["exchange_gb_per_s"] for r in senders]
        mpi_rates = [r["transfer_gb_per_s"] for r in senders]
        # Sorting first, what crosses between ranks is read from each other's runs by their merges.
        readers = [r["peer_read_gb_per_s"] for r in report["per_rank"] if r["peer_bytes_read"] > 0]
        rows.append({
            "ranks": n, "bytes": size, "backend": backend, "gpusort_mpi_s": round(median, 3),
            "runs_s": " ".join(f"{t:.3f}" for t in times), "ceiling_s": round(ceiling, 3), "cp_s": round(cp, 3),
            "vs_ceiling": round(median / ceiling, 2), "vs_cp": round(median / cp, 2),
            "imbalance": round(report["imbalance"], 4), "exchange": report["exchange"],
            "exchange_gb_per_s_per_rank": round(statistics.median(rates), 2) if rates else "",
            "transfer_gb_per_s_per_rank": round(statistics.median(mpi_rates), 2) if mpi_rates else "",
            "peer_read_gb_per_s_per_rank": round(statistics.median(readers), 2) if readers else "",
            **{f"slowest_{s}_s": round(slowest["seconds"][s], 3) for s in STEPS},
        })
        print(f"{n} ranks: gpusort-mpi {median:.2f} s, ceiling {ceiling:.2f} s, cp {cp:.2f} s", file=sys.stderr, flush=True)
    one = next((r["gpusort_mpi_s"] for r in rows if r["ranks"] == 1), None)
    for r in rows:
        r["efficiency"] = round(one / (r["ranks"] * r["gpusort_mpi_s"]), 2) if one else ""
    fresh(data, out, stats)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)

    fields = list(rows[0].keys())
    with open(os.path.join(args.out, "scaling.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    what = (f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.1f} MB") + " of " + (
        "gensort records" if args.format else "random u64")
    machine = f"{os.cpu_count()} CPUs" + (f", {len(found)} x {found[0]}" if found else "")
    lines = [f"{what}, {backend} backend, {machine}; median of {args.repeat} runs, fresh outputs, input in the page cache.",
             "ceiling: n gpusort-file processes at once, each on its n-th of the data (one GPU each); "
             "efficiency: time on 1 rank / (n x time on n); steps: the slowest rank's, from --stats."
             + (f" gpusort-mpi options: {args.mpi_options}." if args.mpi_options else "")
             + f" Launcher: {args.mpirun}" + (f", TMPDIR={args.mpi_tmpdir}." if args.mpi_tmpdir else "."), "",
             "| ranks | gpusort-mpi s | ceiling s | cp s | vs ceiling | vs cp | efficiency | imbalance | exchange | "
             "exchange GB/s per rank: step (rounds), or sorting first: read from the others' runs over the merge | "
             "steps: samples / counting / exchange (of it rounds) / sort / output (s) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t = {s: r[f"slowest_{s}_s"] for s in STEPS}
        steps = f"{t['samples']} / {t['counting']} / {t['exchange']} ({t['transfer']}) / {t['sort']} / {t['output']}"
        rate = (f"{r['peer_read_gb_per_s_per_rank']} (merge)" if r["exchange"] == "runs" else
                f"{r['exchange_gb_per_s_per_rank']} ({r['transfer_gb_per_s_per_rank']})")
        lines.append(f"| {r['ranks']} | {r['gpusort_mpi_s']} | {r['ceiling_s']} | {r['cp_s']} | {r['vs_ceiling']}x | "
                     f"{r['vs_cp']}x | {r['efficiency']} | {r['imbalance'] * 100:.2f}% | {r['exchange']} | "
                     f"{rate} | {steps} |")
    try:
        plot(rows, args.out, what, machine, shared=backend == "gpu" and max(ranks) > len(found))
        lines += ["", "Plot: scaling.png"]
    except ImportError:
        lines += ["", "Plot: not made (matplotlib is missing: Debian's python3-matplotlib)"]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "scaling.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


def plot(rows, out, what, machine, shared=False):
    """scaling.png; `shared`: more ranks than GPUs, so that ranks share them."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = [r["ranks"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    left.plot(n, [r["gpusort_mpi_s"] for r in rows], marker="o", color="#2ca02c", label="gpusort-mpi")
    left.plot(n, [r["ceiling_s"] for r in rows], marker="s", color="#1f77b4",
              label="ceiling: n gpusort-file at once, each on 1/n of the data")
    left.plot(n, [r["cp_s"] for r in rows], linestyle="--", color="#7f7f7f", label="cp of the file")
    ranks_label = "ranks (more than the GPUs: they share them)" if shared else "ranks (one per GPU)"
    left.set_xlabel(ranks_label)
    left.set_ylabel("seconds (lower is faster)")
    left.set_xticks(n)
    left.set_ylim(bottom=0)
    left.grid(alpha=0.3)
    left.legend(fontsize=8)
    left.set_title("Time against ranks", fontsize=10)
    if all(r["efficiency"] != "" for r in rows):
        right.plot(n, [r["efficiency"] for r in rows], marker="o", color="#2ca02c")
        right.axhline(1.0, color="black", linewidth=1)
        right.set_ylim(0, max(1.1, max(r["efficiency"] for r in rows) * 1.1))
    right.set_xlabel(ranks_label)
    right.set_ylabel("efficiency: t(1) / (n x t(n)); 1 = perfect")
    right.set_xticks(n)
    right.grid(alpha=0.3)
    right.set_title("Parallel efficiency of gpusort-mpi", fontsize=10)
    fig.suptitle(f"gpusort-mpi scaling: {what}; {machine}", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "scaling.png"), dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
