#!/usr/bin/env python3
"""Renders the plots of `coopgnn report` (bench/drivers/report.hpp) from a JSON spec.

Usage: python3 tools/plot_results.py SPEC.json

SPEC.json is {"plots": [PLOT, ...]}; paths inside it are relative to the spec's directory.
Every PLOT has "type", "csv" (data, header first), "out" (PNG) and "title", and one of:

  line         x, xlabel, log2x, xticks [[x, label], ...], logy,
               panels [{y, ylabel, where {col: value}, title}], color_by, style_by,
               label (a str.format pattern over the row), optional hline, optional columns
               (panels per row of the figure; default: all panels in one row)
  stacked_bar  group (column giving the x groups), bar (one bar per value in a group),
               stack [columns stacked bottom-up], ylabel
  grouped_bar  group, bar, panels [{y, ylabel}]

Needs only matplotlib (Debian: python3-matplotlib) and the standard library; uses the Agg
backend, so no display is needed. Exits non-zero with a message naming the plot on failure.
"""

import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, NullLocator  # noqa: E402

STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P"]
SHORT = {"cooperative": "coop", "independent": "indep"}
STAGE_COLOURS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def distinct(rows, col):
    seen = []
    for r in rows:
        if r[col] not in seen:
            seen.append(r[col])
    return seen


def matches(row, where):
    return all(str(row.get(k)) == str(v) for k, v in (where or {}).items())


def pow2_axis(ax, xs):
    """A log2 x axis labelled at the measured batch sizes (every other one when crowded)."""
    ax.set_xscale("log", base=2)
    xs = sorted(set(xs))
    step = 1 if len(xs) <= 8 else 2
    ticks = xs[::step]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([f"{int(x)}" if x < 1024 else f"{int(x) // 1024}k" for x in ticks])


def plot_line(spec, base):
    rows = read_rows(os.path.join(base, spec["csv"]))
    panels = spec["panels"]
    ncols = max(1, min(len(panels), int(spec.get("columns", len(panels)))))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.4 * ncols, 4.8 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    color_by, style_by = spec.get("color_by"), spec.get("style_by")
    colour_values = distinct(rows, color_by) if color_by else [None]
    style_values = distinct(rows, style_by) if style_by else [None]
    ncolours = 20 if len(colour_values) > 10 else 10
    cmap = plt.get_cmap("tab20" if ncolours == 20 else "tab10")
    for ax, panel in zip(axes.flat, panels):
        sub = [r for r in rows if matches(r, panel.get("where"))]
        groups = {}
        for r in sub:
            key = (r.get(color_by) if color_by else None, r.get(style_by) if style_by else None)
            groups.setdefault(key, []).append(r)
        xs_all = []
        for (cv, sv), g in groups.items():
            g.sort(key=lambda r: float(r[spec["x"]]))
            xs = [float(r[spec["x"]]) for r in g]
            ys = [float(r[panel["y"]]) for r in g]
            xs_all += xs
            ci = colour_values.index(cv)
            si = style_values.index(sv)
            ax.plot(xs, ys, color=cmap(ci % ncolours), linestyle=STYLES[si % len(STYLES)],
                    marker=MARKERS[si % len(MARKERS)], markersize=4, linewidth=1.6,
                    label=spec.get("label", "{}").format(**g[0]))
        if spec.get("log2x") and xs_all:
            pow2_axis(ax, xs_all)
        if "xticks" in spec:
            ax.set_xticks([float(x) for x, _ in spec["xticks"]])
            ax.set_xticklabels([str(label) for _, label in spec["xticks"]])
        if spec.get("logy"):
            ax.set_yscale("log")
        if "hline" in spec:
            ax.axhline(spec["hline"], color="grey", linewidth=0.8, linestyle=":")
        ax.set_xlabel(spec.get("xlabel", spec["x"]))
        ax.set_ylabel(panel.get("ylabel", panel["y"]))
        if "title" in panel:
            ax.set_title(panel["title"], fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, ncol=2 if len(groups) > 6 else 1)
    fig.suptitle(spec["title"])
    return fig


def plot_stacked_bar(spec, base):
    rows = read_rows(os.path.join(base, spec["csv"]))
    groups, bars, stack = distinct(rows, spec["group"]), distinct(rows, spec["bar"]), spec["stack"]
    fig, ax = plt.subplots(figsize=(max(6.4, 1.6 * len(groups) * len(bars)) + 2.0, 4.8))
    width = 0.8 / max(1, len(bars))
    hatches = ["", "//", "..", "xx"]
    for gi, g in enumerate(groups):
        for bi, b in enumerate(bars):
            row = next((r for r in rows if r[spec["group"]] == g and r[spec["bar"]] == b), None)
            if row is None:
                continue
            x = gi + (bi - (len(bars) - 1) / 2) * width
            bottom = 0.0
            for si, s in enumerate(stack):
                v = float(row[s])
                ax.bar(x, v, width * 0.95, bottom=bottom, color=STAGE_COLOURS[si % 6],
                       hatch=hatches[bi % 4], edgecolor="white",
                       label=s if gi == 0 and bi == 0 else None)
                bottom += v
            ax.text(x, bottom, SHORT.get(b, b), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylabel(spec.get("ylabel", "seconds"))
    title = "stage\n(hatched: " + ", ".join(bars[1:]) + ")" if len(bars) > 1 else "stage"
    ax.legend(fontsize=8, title=title, title_fontsize=8, loc="upper left",
              bbox_to_anchor=(1.01, 1.0))
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(spec["title"])
    return fig


def plot_grouped_bar(spec, base):
    rows = read_rows(os.path.join(base, spec["csv"]))
    groups, bars, panels = distinct(rows, spec["group"]), distinct(rows, spec["bar"]), spec["panels"]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.8), squeeze=False)
    width = 0.8 / max(1, len(bars))
    cmap = plt.get_cmap("tab10")
    for ax, panel in zip(axes[0], panels):
        for bi, b in enumerate(bars):
            xs, ys = [], []
            for gi, g in enumerate(groups):
                row = next((r for r in rows if r[spec["group"]] == g and r[spec["bar"]] == b), None)
                if row is not None:
                    xs.append(gi + (bi - (len(bars) - 1) / 2) * width)
                    ys.append(float(row[panel["y"]]))
            ax.bar(xs, ys, width * 0.95, color=cmap(bi), label=b)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups)
        ax.set_ylabel(panel.get("ylabel", panel["y"]))
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(spec["title"])
    return fig


KINDS = {"line": plot_line, "stacked_bar": plot_stacked_bar, "grouped_bar": plot_grouped_bar}


def main(argv):
    if len(argv) != 2:
        print("usage: plot_results.py SPEC.json", file=sys.stderr)
        return 2
    base = os.path.dirname(os.path.abspath(argv[1]))
    with open(argv[1]) as f:
        spec = json.load(f)
    failed = 0
    for p in spec.get("plots", []):
        try:
            fig = KINDS[p["type"]](p, base)
            fig.tight_layout()
            fig.savefig(os.path.join(base, p["out"]), dpi=110)
            plt.close(fig)
            print(f"wrote {p['out']}")
        except Exception as e:  # report every plot, then fail
            print(f"plot {p.get('out', '?')}: {type(e).__name__}: {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
