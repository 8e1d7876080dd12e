#!/usr/bin/env python3
"""Charts and tables of nabla's benchmark figures, from the CSV the benchmark programs write.

A development tool, not part of the build or the tests: it needs Python 3 and matplotlib
(Debian: `apt-get install python3-matplotlib`). scripts/bench.sh runs the benchmarks and then
this script; to draw again from figures already measured:

    python3 scripts/plot_results.py --images docs/images \\
        --gcc build-bench/results-gcc.csv --clang build-bench/results-clang.csv

    # the figures as the Markdown tables of bench/RESULTS.md (no matplotlib needed)
    python3 scripts/plot_results.py --tables --gcc ... --clang ...

    # how far the runs in one file are apart (figures more than 3% apart)
    python3 scripts/plot_results.py --spread --gcc ... --clang ...

Each CSV row is program,workload,contender,measure,value,ratio (bench/bench_util.hpp). A file may
hold several runs of the programs: for every figure the best (smallest) counts, and a ratio is
recomputed from the best times of the contender and of the workload's first contender, the
hand-written baseline.

The charts (PNG, under --images):
  bench_ratios.png   every workload's time per gradient as a ratio to hand-written code, for
                     nabla and each peer, g++ and clang++ side by side, log scale;
  bench_scaling.png  time per gradient against the problem size, where a workload has sizes.
The other pictures under docs/images/, the graphs of docs/guide.md, come from nabla::to_dot and
Graphviz: the commands are at the top of scripts/bench.sh.
"""

import argparse
import csv
import os
import re
import sys
from collections import OrderedDict, defaultdict

TIME = "ns per call"

# The libraries, in the order of the legend, with their colours.
LIBRARIES = OrderedDict(
    [
        ("nabla (grad, value_and_grad, derivatives)", "#1f5fb4"),
        ("nabla, mode::forward", "#8fb8e8"),
        ("nabla, the tape used directly", "#5fa8d3"),
        ("Ceres Jet", "#e08a1e"),
        ("Eigen AutoDiffScalar", "#2e9e4a"),
        ("Boost.Math autodiff", "#c0392b"),
        ("ADOL-C, traced each call", "#7d3c98"),
        ("ADOL-C, trace reused", "#c39bd3"),
        ("Sacado Rad", "#8c6d31"),
    ]
)


NABLA = next(iter(LIBRARIES))


def library_of(contender):
    """The legend entry of a contender's name as the benchmarks print it, or None for the
    baseline and for what the charts leave out."""
    name = contender.lower()
    if name.startswith("hand-written") or name.startswith("closed form"):
        return None
    if "mode::forward" in name:
        return "nabla, mode::forward"
    if "nabla tape" in name:
        return "nabla, the tape used directly"
    if name.startswith("nabla"):
        return NABLA
    if "jet" in name:
        return "Ceres Jet"
    if "eigen" in name:
        return "Eigen AutoDiffScalar"
    if "boost" in name:
        return "Boost.Math autodiff"
    if "adol-c" in name:
        return "ADOL-C, trace reused" if "reused" in name else "ADOL-C, traced each call"
    if "sacado" in name:
        return "Sacado Rad"
    return contender


def short_title(program, workload):
    """A chart label for a workload title."""
    size = re.search(r"\b([nN]) = (\d+)", workload)
    size_text = f"{size.group(1)} = {int(size.group(2)):,}".replace(",", "\u2009") if size else ""
    if program == "static_gradient":
        if workload.startswith("seed"):
            return "seed function, static graph"
        return "Lennard-Jones pair, static graph"
    if program.startswith("forward_gradient"):
        if workload.startswith("seed"):
            return "seed function, forward"
        if workload.startswith("extended Rosenbrock"):
            return f"Rosenbrock {size_text}, forward"
        return workload.split(" (")[0].split(",")[0] + ", forward"
    if program == "taylor_ode":
        return "Taylor integrator, " + ("Lorenz" if "Lorenz" in workload else "Kepler")
    if program == "taylor_derivatives":
        order = re.search(r"0\.\.(\d+)", workload)
        return f"Taylor, orders 0..{order.group(1)}" if order else workload
    if program == "reverse_gradient":
        if workload.startswith("extended Rosenbrock"):
            return f"Rosenbrock {size_text}, tape"
        if workload.startswith("Lennard-Jones"):
            return f"Lennard-Jones {size_text}, tape"
        if workload.startswith("log-sum-exp"):
            return f"log-sum-exp {size_text}, tape"
        if workload.startswith("RK4"):
            return "RK4 Lotka-Volterra, tape"
    return workload


class Results:
    """The figures of one CSV file: best value per (program, workload, contender, measure), and
    the values of each run."""

    def __init__(self, path):
        self.path = path
        self.values = defaultdict(list)  # key -> value of each run, in order
        self.workloads = OrderedDict()  # (program, workload) -> contenders in order
        with open(path, newline="") as file:
            for row in csv.DictReader(file):
                key = (row["program"], row["workload"], row["contender"], row["measure"])
                self.values[key].append(float(row["value"]))
                contenders = self.workloads.setdefault((row["program"], row["workload"]), [])
                if row["contender"] not in contenders:
                    contenders.append(row["contender"])

    def best(self, program, workload, contender, measure=TIME):
        values = self.values.get((program, workload, contender, measure))
        return min(values) if values else None

    def timed(self, program, workload):
        """The contenders of a timed workload, baseline first."""
        return [
            c
            for c in self.workloads.get((program, workload), [])
            if self.best(program, workload, c) is not None
        ]

    def ratio(self, program, workload, contender):
        contenders = self.timed(program, workload)
        if not contenders:
            return None
        base = self.best(program, workload, contenders[0])
        time = self.best(program, workload, contender)
        return None if base is None or time is None else time / base

    def run_ratios(self, program, workload, contender):
        """The ratio to the baseline in each run."""
        contenders = self.timed(program, workload)
        base = self.values[(program, workload, contenders[0], TIME)]
        mine = self.values[(program, workload, contender, TIME)]
        return [m / b for m, b in zip(mine, base)]


def three_digits(value):
    """A number to three significant digits, trailing zeros kept (18.0, 3.00, 256, 1205)."""
    return f"{value:#.3g}" if value < 100 else f"{value:.0f}"


def format_time(ns):
    if ns is None:
        return "-"
    if ns < 1e3:
        return f"{three_digits(ns)} ns"
    if ns < 1e6:
        return f"{three_digits(ns / 1e3)} µs"
    return f"{three_digits(ns / 1e6)} ms"


def format_ratio(ratio):
    if ratio is None:
        return "-"
    if ratio >= 100:
        return f"{ratio:.0f}x"
    if ratio >= 10:
        return f"{ratio:.1f}x"
    return f"{ratio:.2f}x"


# ---------------------------------------------------------------------------------------------
# Tables


def print_tables(compilers):
    """One Markdown table per workload: each contender's time and ratio per compiler."""
    first = next(iter(compilers.values()))
    for program, workload in first.workloads:
        contenders = first.timed(program, workload)
        if not contenders:
            continue
        print(f"#### {program}: {workload}\n")
        header = "| contender |"
        rule = "|---|"
        for name in compilers:
            header += f" {name}: time | {name}: ratio |"
            rule += "---:|---:|"
        print(header)
        print(rule)
        for contender in contenders:
            line = f"| {contender} |"
            for results in compilers.values():
                time = results.best(program, workload, contender)
                ratio = results.ratio(program, workload, contender)
                line += f" {format_time(time)} | {format_ratio(ratio)} |"
            print(line)
        print()
    # Memory figures (bench/reverse_gradient).
    measures = []
    for key in first.values:
        if key[3] != TIME and key[3] not in measures:
            measures.append(key[3])
    if measures:
        print("#### memory (first file)\n")
        for program, workload in first.workloads:
            parts = []
            for contender in first.workloads[(program, workload)]:
                for measure in measures:
                    value = first.best(program, workload, contender, measure)
                    if value is not None:
                        parts.append(f"{contender} {measure} {value:.6g}")
            if parts:
                print(f"- {workload}: " + "; ".join(parts))
        print()


def print_spread(compilers, limit=0.03):
    """The figures whose runs are more than `limit` apart (times and ratios)."""
    for name, results in compilers.items():
        runs = max(len(v) for v in results.values.values())
        print(f"{name}: {runs} run(s) in {results.path}")
        worst = 0.0
        for (program, workload), contenders in results.workloads.items():
            for contender in results.timed(program, workload):
                values = results.values[(program, workload, contender, TIME)]
                ratios = results.run_ratios(program, workload, contender)
                time_spread = max(values) / min(values) - 1
                ratio_spread = max(ratios) / min(ratios) - 1
                worst = max(worst, ratio_spread)
                if time_spread > limit or ratio_spread > limit:
                    print(
                        f"  {program}: {workload}: {contender}: times "
                        + ", ".join(format_time(v) for v in values)
                        + "; ratios "
                        + ", ".join(format_ratio(r) for r in ratios)
                    )
        print(f"  largest spread of a ratio between runs: {100 * worst:.1f}%")


# ---------------------------------------------------------------------------------------------
# Charts

# The workloads of the ratio chart, in order, and what the chart leaves out: the build without
# SIMD (a table of its own) and the order-16 Taylor series (no closed form to compare with).
CHART_PROGRAMS = ["static_gradient", "forward_gradient", "taylor_derivatives", "reverse_gradient"]


def chart_rows(results):
    rows = []
    for program in CHART_PROGRAMS:
        for prog, workload in results.workloads:
            if prog != program:
                continue
            contenders = results.timed(prog, workload)
            if not contenders or library_of(contenders[0]) is not None:
                continue  # no hand-written baseline
            rows.append((prog, workload))
    return rows


def plot_ratios(compilers, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    first = next(iter(compilers.values()))
    rows = chart_rows(first)
    # The bars of each row: one per library present, in legend order.
    row_bars = []
    for program, workload in rows:
        bars = []
        for contender in first.timed(program, workload)[1:]:
            library = library_of(contender)
            if library is not None:
                bars.append((library, contender))
        bars.sort(key=lambda bar: list(LIBRARIES).index(bar[0]))
        row_bars.append(bars)

    bar_height = 0.8
    gap = 0.9
    positions = []  # y of each bar, per row
    centres = []
    y = 0.0
    for bars in row_bars:
        ys = [y + i * bar_height for i in range(len(bars))]
        positions.append(ys)
        centres.append((ys[0] + ys[-1]) / 2)
        y = ys[-1] + bar_height + gap
    total = y

    figure, axes = plt.subplots(
        1, len(compilers), figsize=(15, 0.26 * total + 1.6), sharey=True, squeeze=False
    )
    largest = 1.0
    smallest = 1.0
    for results in compilers.values():
        for (program, workload), bars in zip(rows, row_bars):
            for _, contender in bars:
                ratio = results.ratio(program, workload, contender)
                if ratio:
                    largest = max(largest, ratio)
                    smallest = min(smallest, ratio)

    low = 0.8 if smallest >= 1.0 else min(0.45, smallest * 0.8)
    high = largest * 3.0
    for axis, (name, results) in zip(axes[0], compilers.items()):
        for (program, workload), bars, ys in zip(rows, row_bars, positions):
            for (library, contender), bar_y in zip(bars, ys):
                ratio = results.ratio(program, workload, contender)
                if ratio is None:
                    continue
                axis.barh(
                    bar_y,
                    ratio - 1.0 if ratio >= 1.0 else 1.0 - ratio,
                    left=1.0 if ratio >= 1.0 else ratio,
                    height=bar_height * 0.9,
                    color=LIBRARIES[library],
                    edgecolor="none",
                )
                axis.text(
                    max(ratio, 1.0) * 1.06,
                    bar_y,
                    format_ratio(ratio),
                    va="center",
                    ha="left",
                    fontsize=7.5,
                )
        axis.set_xscale("log")
        axis.set_xlim(low, high)
        axis.axvline(1.0, color="black", linewidth=0.8)
        ticks = [t for t in (0.5, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500) if low <= t <= high]
        axis.set_xticks(ticks)
        axis.set_xticklabels([f"{t:g}x" for t in ticks])
        axis.minorticks_off()
        axis.grid(axis="x", color="#dddddd", linewidth=0.6)
        axis.set_axisbelow(True)
        axis.set_title(name, fontsize=12)
        axis.set_xlabel("time / hand-written code's time (log scale)")
        for boundary in range(1, len(rows)):
            axis.axhline(
                (positions[boundary - 1][-1] + positions[boundary][0]) / 2,
                color="#bbbbbb",
                linewidth=0.5,
            )
    first_axis = axes[0][0]
    first_axis.set_yticks(centres)
    first_axis.set_yticklabels([short_title(p, w) for p, w in rows], fontsize=9)
    first_axis.set_ylim(total - gap + 0.2, -bar_height)
    present = [lib for lib in LIBRARIES if any(lib == b[0] for bars in row_bars for b in bars)]
    figure.legend(
        handles=[Patch(color=LIBRARIES[lib], label=lib) for lib in present],
        loc="lower center",
        ncol=min(len(present), 5),
        fontsize=8.5,
        frameon=False,
    )
    figure.suptitle(
        "nabla and its peers: time per gradient as a ratio to hand-written code "
        "(smaller is faster; 1x = hand-written, for Taylor sympy's closed form)",
        fontsize=12,
    )
    figure.tight_layout(rect=(0, 0.04, 1, 0.97))
    figure.savefig(path, dpi=110)
    plt.close(figure)


# Workloads with sizes: panel title, program, workload titles (smallest size first), and the
# size of each.
SCALING = [
    (
        "extended Rosenbrock, forward mode",
        "forward_gradient",
        ["extended Rosenbrock, n = 16, gradient", "extended Rosenbrock, n = 64, gradient"],
        [16, 64],
        "n",
    ),
    (
        "extended Rosenbrock, tape",
        "reverse_gradient",
        ["extended Rosenbrock, n = 1000", "extended Rosenbrock, n = 100000"],
        [1000, 100000],
        "n",
    ),
    (
        "Lennard-Jones, all pairs, tape",
        "reverse_gradient",
        ["Lennard-Jones, N = 256", "Lennard-Jones, N = 1024"],
        [256, 1024],
        "N",
    ),
]


def plot_scaling(compilers, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    colours = dict(LIBRARIES)
    colours["hand-written"] = "#000000"
    styles = list(zip(["-", "--"], ["o", "s"]))
    figure, axes = plt.subplots(1, len(SCALING), figsize=(15, 5.2))
    for axis, (title, program, workloads, sizes, symbol) in zip(axes, SCALING):
        for (name, results), (line_style, marker) in zip(compilers.items(), styles):
            # The contenders of each size by library (nabla's default call changes its name
            # with the size: the dual numbers, then the tape).
            by_library = [
                {library_of(c) or "hand-written": c for c in results.timed(program, w)}
                for w in workloads
            ]
            for library in by_library[0]:
                if any(library not in sizes_of for sizes_of in by_library):
                    continue
                times = [
                    results.best(program, w, sizes_of[library])
                    for w, sizes_of in zip(workloads, by_library)
                ]
                axis.plot(
                    sizes,
                    [t / 1e3 for t in times],
                    linestyle=line_style,
                    marker=marker,
                    color=colours[library],
                    markerfacecolor=colours[library] if line_style == "-" else "white",
                    linewidth=1.4,
                )
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xticks(sizes)
        axis.set_xticklabels([f"{symbol} = {s:,}".replace(",", "\u2009") for s in sizes])
        axis.minorticks_off()
        axis.set_xlim(sizes[0] / 1.6, sizes[-1] * 1.6)
        axis.set_title(title, fontsize=11)
        axis.set_ylabel("µs per gradient (log scale)")
        axis.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,g}".replace(",", "\u2009")))
        axis.grid(color="#dddddd", linewidth=0.6, which="major")
    libraries = ["hand-written"] + [lib for lib in LIBRARIES]
    used = set()
    for results in compilers.values():
        for _, program, workloads, _, _ in SCALING:
            for contender in results.timed(program, workloads[0]):
                used.add(library_of(contender) or "hand-written")
    handles = [
        Line2D([], [], color=colours[lib], linewidth=3, label=lib)
        for lib in libraries
        if lib in used
    ]
    handles += [
        Line2D(
            [],
            [],
            color="grey",
            linestyle=style,
            marker=marker,
            markerfacecolor="grey" if style == "-" else "white",
            label=name,
        )
        for name, (style, marker) in zip(compilers, styles)
    ]
    figure.legend(handles=handles, loc="lower center", ncol=5, fontsize=8.5, frameon=False)
    figure.suptitle("Time per gradient against the problem size", fontsize=13)
    figure.tight_layout(rect=(0, 0.13, 1, 0.95))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gcc", required=True, help="CSV of the g++ build")
    parser.add_argument("--clang", help="CSV of the clang++ build")
    parser.add_argument("--gcc-name", default="g++", help="the g++ build's label")
    parser.add_argument("--clang-name", default="clang++", help="the clang++ build's label")
    parser.add_argument("--images", help="folder for the PNG charts")
    parser.add_argument("--tables", action="store_true", help="print Markdown tables")
    parser.add_argument("--spread", action="store_true", help="print how far the runs differ")
    arguments = parser.parse_args()

    compilers = OrderedDict([(arguments.gcc_name, Results(arguments.gcc))])
    if arguments.clang:
        compilers[arguments.clang_name] = Results(arguments.clang)
    if arguments.tables:
        print_tables(compilers)
    if arguments.spread:
        print_spread(compilers)
    if arguments.images:
        os.makedirs(arguments.images, exist_ok=True)
        plot_ratios(compilers, os.path.join(arguments.images, "bench_ratios.png"))
        plot_scaling(compilers, os.path.join(arguments.images, "bench_scaling.png"))
        print(f"charts written to {arguments.images}/bench_ratios.png and bench_scaling.png")
    if not (arguments.tables or arguments.spread or arguments.images):
        parser.error("nothing to do: give --images, --tables or --spread")
    return 0


if __name__ == "__main__":
    sys.exit(main())
