#!/usr/bin/env python3
"""The table and plots of a benchmark run (compare.py), from its results.csv (or several, from
runs of parts of the workloads on the same machine in one sitting):
  table.md                the medians, each with its ratio to cp and to the best peer, and
                          gpusort's phases; the larger-than-memory workloads (u64-SIZE-cold) in a
                          table of their own, with the floor from dd's bandwidth
  time_vs_cp.png          every program's time on every workload, as a multiple of cp's
  throughput_vs_size.png  GB/s against file size, per program, for random u32 and u64 keys
  gpusort_phases.png      where gpusort-file's time goes, per workload: its phases (--stats)
                          stacked, beside the wall clock
The plots need matplotlib (Debian: python3-matplotlib); without it the table says they were not made.

  tools/bench/report.py --out DIR [--repeat N] [--machine TEXT] [--missing FILE]... RESULTS.csv...
"""
import argparse
import csv
import os
import sys

PHASES = ["read", "copy_in", "sort", "copy_out", "write", "merge"]
ORDER = ["dd", "cp", "zstd", "gpusort-gpu", "gpusort-cpu", "ips4o", "stxxl", "gnu-sort"]
COLORS = {"dd": "#c7c7c7", "cp": "#7f7f7f", "zstd": "#bcbd22", "gpusort-gpu": "#2ca02c", "gpusort-cpu": "#98df8a",
          "ips4o": "#1f77b4", "stxxl": "#ff7f0e", "gnu-sort": "#d62728"}
HATCHES = ["", "//", "..", "xx", "\\\\"]


def base(program):
    """The program without its setting: "gpusort-gpu runs" -> "gpusort-gpu"."""
    return program.split(" ")[0]


def program_order(rows):
    """The programs of `rows` in the table's order: by ORDER, settings of one program as they came."""
    seen = []
    for r in rows:
        if r["program"] not in seen:
            seen.append(r["program"])
    rank = {p: i for i, p in enumerate(ORDER)}
    return sorted(seen, key=lambda p: (rank.get(base(p), len(ORDER)), seen.index(p)))


def is_cold(workload):
    """The larger-than-memory workloads: input cold, every program in a memory cgroup."""
    return workload.endswith("-cold")


def load(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    return rows


def floor_note(workload):
    """The workload's name, with what "cp" is where it is not a plain copy of the data."""
    if workload.endswith("-pipe"):
        return workload + "\n(cp here: cat | cat)"
    if workload.endswith("-zst"):
        return workload + "\n(cp here: of the compressed file;\nzstd: decompress + compress)"
    if is_cold(workload):
        return workload + "\n(input cold, in a memory cgroup;\ncp here: cp + sync)"
    return workload


def workload_order(rows):
    seen = []
    for r in rows:
        if r["workload"] not in seen:
            seen.append(r["workload"])
    return seen


def cell(row, key):
    return row.get(key) or ""


def gb(text):
    return f"{int(text) / 1e9:.2f}" if text not in (None, "") else ""


def cold_table(rows, repeat):
    """The larger-than-memory workloads: each program's time beside its floor."""
    limits = sorted({int(r["cgroup_memory"]) for r in rows if r.get("cgroup_memory")})
    held = " or ".join(f"{m / 2**30:g} GiB" if m >= 2**30 else f"{m / 2**20:g} MiB" for m in limits) or "a quarter of the data"
    lines = ["", "Larger than memory: median of "
             f"{repeat} runs, each into a fresh output, the page cache dropped before each (the input cold), "
             f"each program in a cgroup with memory.max {held} and no swap; the time includes a `sync` after "
             "the program (what a buffered writer leaves dirty is counted). dd read / dd write: the disk's "
             "bandwidth with direct I/O (dd's own seconds). floor: the data read once at dd's read bandwidth and "
             "written once at its write bandwidth; twice that for a sort that spilled its runs to the disk "
             "(gpusort: bytes spilled > 0; stxxl: the data exceed its memory). vs floor: time / floor. "
             "Phase GB/s: the data's bytes over gpusort's read / write / merge seconds (--stats, summed over "
             "chunks). I/O: what gpusort chose for its input / output / runs, where its stats say.", "",
             "| workload | program | median s | GB/s | vs cp | vs best peer | floor s | vs floor | spilled GB | "
             "gpusort phases: read / copy in / sort / copy out / write / merge (s) | phase GB/s: read / write / merge "
             "| runs | I/O: in / out / runs | memory budget GB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for w, shown, r, phases in ordered_rows(rows):
        speeds = " / ".join(cell(r, p + "_gb_per_s") or "-" for p in ("read", "write", "merge")) if phases else ""
        io = " / ".join(cell(r, k) or "-" for k in ("input_io", "output_io", "spill_io")) if phases else ""
        lines.append(f"| {w} ({shown}) | {r['program']} | {float(r['median_s']):.2f} | {r['gb_per_s']} | "
                     f"{r['vs_cp']} | {r['vs_best_peer']} | {cell(r, 'floor_s')} | {cell(r, 'vs_floor')} | "
                     f"{gb(r.get('bytes_spilled'))} | {phases} | {speeds} | {cell(r, 'runs')} | {io} | "
                     f"{gb(r.get('memory_budget'))} |")
    return lines


def ordered_rows(rows):
    """The rows in the table's order, each as (workload, its size shown, row, gpusort's phases or "")."""
    for w in workload_order(rows):
        mine = [r for r in rows if r["workload"] == w]
        for p in program_order(mine):
            r = next(r for r in mine if r["program"] == p)
            size = int(r["bytes"])
            shown = f"{size / 1e9:.2f} GB" if size >= 1e9 else f"{size / 1e6:.1f} MB"
            yield w, shown, r, " / ".join(r[p] for p in PHASES) if r.get("read") else ""


def table(rows, repeat, machine, missing):
    cold = [r for r in rows if is_cold(r["workload"])]
    rows = [r for r in rows if not is_cold(r["workload"])]
    lines = [f"Machine: {machine}."]
    if rows:
        lines += warm_table(rows, repeat)
    if cold:
        lines += cold_table(cold, repeat)
    if missing:
        lines += ["", "Not run here:"] + [f"- {m}" for m in missing]
    return "\n".join(lines) + "\n"


def warm_table(rows, repeat):
    """The workloads with the input in the page cache."""
    lines = ["", f"Median of {repeat} runs, each into a fresh output, the input in the page cache. "
             "vs cp: time / time of `cp` of the same file (of `cat | cat` for the pipe case); "
             "vs best peer: time / time of the fastest of ips4o, stxxl and GNU sort on the same workload. "
             "gpusort's phases come from `--stats` of its median run, summed over chunks (they overlap).", "",
             "| workload | program | median s | GB/s | vs cp | vs best peer | gpusort phases: read / copy in / sort / "
             "copy out / write / merge (s) | runs |",
             "|---|---|---|---|---|---|---|---|"]
    for w, shown, r, phases in ordered_rows(rows):
        lines.append(f"| {w} ({shown}) | {r['program']} | {float(r['median_s']):.2f} | "
                     f"{r['gb_per_s']} | {r['vs_cp']} | {r['vs_best_peer']} | {phases} | {r.get('runs', '')} |")
    return lines


def plots(rows, out, repeat, machine):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    note = f"median of {repeat} runs; {machine}"

    # 1. Every program's time as a multiple of cp's, per workload.
    names = workload_order(rows)
    programs = [p for p in program_order(rows) if base(p) not in ("cp", "dd")]
    fig, ax = plt.subplots(figsize=(12, 0.55 * len(names) * max(1, len(programs)) / 3 + 2))
    height = 0.8 / max(1, len(programs))
    for i, p in enumerate(programs):
        ys, xs = [], []
        for j, w in enumerate(names):
            r = next((r for r in rows if r["workload"] == w and r["program"] == p), None)
            if r and r["vs_cp"]:
                ys.append(j + i * height)
                xs.append(float(r["vs_cp"]))
        variant = [q for q in programs if base(q) == base(p)].index(p)
        ax.barh(ys, xs, height=height, color=COLORS.get(base(p), "#333333"), hatch=HATCHES[variant % len(HATCHES)],
                edgecolor="white" if variant else None, label=p)
        for y, x in zip(ys, xs):
            ax.text(x, y, f" {x:.2f}", va="center", fontsize=7)
    ax.axvline(1.0, color="black", linewidth=1, label="cp of the same file (1x)")
    ax.set_yticks([j + height * (len(programs) - 1) / 2 for j in range(len(names))])
    ax.set_yticklabels([floor_note(n) for n in names])
    ax.invert_yaxis()
    ax.set_xscale("log")
    top = max([float(r["vs_cp"]) for r in rows if r["vs_cp"]] + [1.0])
    ticks = [t for t in (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128) if t <= 2 * top]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:g}x" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("time as a multiple of cp of the same file (log scale; left of the line: faster than cp)")
    ax.set_title(f"Sort time relative to copying the file: shorter is faster\n({note})", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    fig.text(0.01, 0.005, "No bar: the program did not run on that workload (it does not take those options, or is "
             "too slow for its size); table.md says which and why.", fontsize=8)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(os.path.join(out, "time_vs_cp.png"), dpi=110)
    plt.close(fig)
    made.append("time_vs_cp.png")

    # 2. Throughput against size for the plain random keys.
    series = {}
    for r in rows:
        parts = r["workload"].split("-")
        if len(parts) == 2 and parts[0] in ("u32", "u64"):
            series.setdefault(parts[0], {}).setdefault(r["program"], []).append(
                (int(r["bytes"]) / 2**30, float(r["gb_per_s"])))
    if series:
        fig, axes = plt.subplots(1, len(series), figsize=(6 * len(series), 4.5), squeeze=False)
        for ax, (key, by_program) in zip(axes[0], sorted(series.items())):
            for p in program_order([{"program": q} for q in by_program]):
                points = sorted(by_program[p])
                ax.plot([x for x, _ in points], [y for _, y in points], marker="o",
                        color=COLORS.get(base(p), "#333333"), label=p)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            sizes = sorted({x for points in by_program.values() for x, _ in points})
            ax.set_xticks(sizes)
            ax.set_xticklabels([f"{x * 1024:g} MiB" if x < 1 else f"{x:g} GiB" for x in sizes])
            ax.minorticks_off()
            speeds = sorted({y for points in by_program.values() for _, y in points})
            yticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20) if speeds[0] / 2 <= t <= speeds[-1] * 2]
            ax.set_yticks(yticks)
            ax.set_yticklabels([f"{t:g}" for t in yticks])
            ax.set_xlabel("file size (log scale)")
            ax.set_ylabel("GB/s of input, log scale (higher is faster)")
            ax.set_title(f"random {key} keys, file to file", fontsize=10)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(f"Throughput against file size ({note})", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "throughput_vs_size.png"), dpi=110)
        plt.close(fig)
        made.append("throughput_vs_size.png")

    # 3. gpusort's phases per workload, beside its wall clock.
    mine = [r for r in rows if r["program"].startswith("gpusort") and r.get("read")]
    if mine:
        labels = [f"{r['workload']} ({r['program'][8:]})" for r in mine]
        fig, ax = plt.subplots(figsize=(12, 0.35 * len(mine) + 2))
        left = [0.0] * len(mine)
        phase_colors = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b07aa1"]
        for phase, color in zip(PHASES, phase_colors):
            widths = [float(r[phase]) for r in mine]
            ax.barh(range(len(mine)), widths, left=left, color=color, label=phase.replace("_", " "))
            left = [a + b for a, b in zip(left, widths)]
        ax.scatter([float(r["median_s"]) for r in mine], range(len(mine)), marker="D", color="black", zorder=3,
                   label="wall clock")
        ax.set_yticks(range(len(mine)))
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("seconds")
        ax.set_title("Where gpusort-file's time goes: its phases (--stats), summed over chunks.\n"
                     "Phases of different chunks run at once, so a bar may reach past the wall clock (black diamond).\n"
                     f"({note})", fontsize=9)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
        fig.tight_layout()
        fig.savefig(os.path.join(out, "gpusort_phases.png"), dpi=110)
        plt.close(fig)
        made.append("gpusort_phases.png")
    return made


def write(out, csv_paths, repeat, machine, missing_paths=(), require_plots=False):
    """Writes table.md and the plots into `out`; returns the table (with a line on the plots)."""
    rows = load(csv_paths)
    missing = []
    for path in missing_paths:
        if os.path.exists(path):
            with open(path) as f:
                missing += [line.rstrip("\n") for line in f if line.strip()]
    text = table(rows, repeat, machine, missing)
    try:
        made = plots(rows, out, repeat, machine) if rows else []
        text += "\nPlots: " + (", ".join(made) if made else "none (no results)") + "\n"
    except ImportError:
        if require_plots:
            raise
        text += "\nPlots: not made (matplotlib is missing: Debian's python3-matplotlib)\n"
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeat", type=int, default=3, help="runs per median, as compare.py was told")
    ap.add_argument("--machine", default="this machine")
    ap.add_argument("--missing", action="append", default=[], help="a missing.txt of the runs (repeatable)")
    ap.add_argument("results", nargs="+")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print(write(args.out, args.results, args.repeat, args.machine, args.missing, require_plots=True))


if __name__ == "__main__":
    sys.exit(main())
