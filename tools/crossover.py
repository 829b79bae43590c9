#!/usr/bin/env python3
"""usage: tools/crossover.py --coopgnn BIN --dataset DIR [--out DIR] [--batches N]
                            [--machine FILE] [--skip-runs]
                            [--size-dataset DIR [--size-only]]
       tools/crossover.py --plot [--out DIR]

The crossover map of cooperative vs independent minibatching in the cost model of
`coopgnn bench modes` (bench/drivers/cost_model.cpp): the modelled time ratio
independent / cooperative (above 1: cooperative is faster) per machine of the machine file, over
hidden width (64, 256, 1024) x P (2, 4, 8) x seeds per PE (512, 1024), LABOR, features in
pinned host memory (UVA); and a sensitivity table at one reference point (hidden 1024, P = 8,
1024 seeds per PE): each model assumption of each machine (nccl_latency_us, kernel_launch_us,
nccl_efficiency, pcie_gbps, hbm_efficiency, flop_efficiency) halved and doubled (fractions
capped at 1), showing which flips the verdict.

Every modelled figure comes from `coopgnn bench modes` (the one implementation of the model):
this script only runs it (one run per hidden width and seeds per PE, all P in one run; bench
modes counts the work by sampling on the host, and the counted work depends on the hidden width,
so each width is its own run) and tabulates its JSON. The sensitivity variants are extra
entries of a machine file written next to the results (machine values changed, nothing else),
modelled in the reference point's own run, so they share its counted work.

Writes in --out (default docs/results): crossover.md, crossover.csv (one row per machine,
hidden, seeds per PE, P: both modelled totals, the ratio and the stages), crossover_sensitivity.csv,
crossover_machines.yaml (the variant machine file), plots/crossover_<machine>.png heat maps when
matplotlib imports, and the bench modes JSON files under --out/crossover_runs/.
--size-dataset DIR also models hidden 1024, P = 8 at each seeds per PE on a larger graph (written
to crossover_size.csv and the report's "Graph size" table; --size-only runs just those points).
--skip-runs rebuilds the tables from the JSON files already there; --plot only draws the heat
maps from --out/crossover.csv (no runs, no --dataset; needs a Python with matplotlib).
Errors: a failing bench modes run stops the script with its exit status and command.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shlex
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import machine_file  # noqa: E402

HIDDEN = [64, 256, 1024]
PES = [2, 4, 8]
SEEDS_PER_PE = [512, 1024]
REFERENCE = (1024, 8, 1024)  # hidden, P, seeds per PE
SIZE_HIDDEN, SIZE_PES = 1024, 8  # the points of --size-dataset, at each of SEEDS_PER_PE
ASSUMPTIONS = ["nccl_latency_us", "kernel_launch_us", "nccl_efficiency", "pcie_gbps",
               "hbm_efficiency", "flop_efficiency"]
STAGES = ["sample", "feature_load", "forward", "backward", "communication", "optimizer"]


def variant_name(machine: str, key: str, factor: float) -> str:
    return f"{machine}~{key}x{factor:g}"


def write_variants(base_file: str, out_yaml: str) -> list[dict]:
    """The machine file of every base machine plus, per machine and assumption, one entry with
    the figure halved and one doubled (a fraction capped at 1); returns the base entries."""
    entries = machine_file.load_base_entries(base_file)
    lines = ["# Sensitivity variants of " + os.path.relpath(os.path.abspath(base_file), ROOT) +
             " written by tools/crossover.py: each entry NAME~KEYxF is NAME with figures.KEY"
             " multiplied by F (fractions capped at 1).", "machines:"]

    def emit(name, e, figs):
        lines.extend([f"  - name: {json.dumps(name)}", f"    gpu: {json.dumps(e['gpu'])}",
                      f"    gpus: {e['gpus']}", f"    link: {json.dumps(e['link'])}",
                      f"    gemm_math: {e.get('gemm_math', 'fp32')}", "    figures:"])
        for k, f in figs.items():
            a = ", assumption: true" if f.get("assumption") else ""
            lines.append(f"      {k}: {{value: {f['value']!r}{a}, source: "
                         f"{json.dumps(f['source'])}}}")

    for e in entries:
        emit(e["name"], e, e["figures"])
        for key in ASSUMPTIONS:
            for factor in (0.5, 2.0):
                figs = {k: dict(f) for k, f in e["figures"].items()}
                v = figs[key]["value"] * factor
                capped = key.endswith("_efficiency") and v > 1
                figs[key]["value"] = 1.0 if capped else v
                figs[key]["source"] = (f"{e['name']} {key} x{factor:g}" +
                                       (" (capped at 1)" if capped else "") + " (tools/crossover.py)")
                emit(variant_name(e["name"], key, factor), e, figs)
    with open(out_yaml, "w") as f:
        f.write("\n".join(lines) + "\n")
    return entries


def size_tag(hidden: int, seeds: int) -> str:
    return f"h{hidden}-s{seeds}-p{SIZE_PES}-size"


def run_modes(exe, dataset, hidden, seeds, machine, batches, runs_dir, log, pes=None,
              tag=None) -> str:
    tag = tag or f"h{hidden}-s{seeds}"
    argv = [exe, "bench", "modes", "--dataset", dataset, "--sampler", "labor", "--fanouts",
            "10,10,10", "--pes", *map(str, pes or PES), "--batch-per-pe", str(seeds), "--batches",
            str(batches), "--warmup", "0", "--hidden", str(hidden), "--feature-placement", "uva",
            "--seed", "1", "--machine", machine, "--tag", tag, "--out", runs_dir]
    log.append(" ".join(shlex.quote(a) for a in argv))
    t0 = time.time()
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"tools/crossover.py: bench modes failed ({p.returncode}): {log[-1]}")
    print(f"  hidden {hidden} seeds/PE {seeds}: {time.time() - t0:.0f} s", flush=True)
    return tag


def load_run(runs_dir: str, tag: str) -> dict:
    names = [n for n in os.listdir(runs_dir) if n.endswith(f"-{tag}.json")]
    if len(names) != 1:
        raise SystemExit(f"tools/crossover.py: expected one bench modes JSON for tag {tag} in "
                         f"{runs_dir}, found {names}")
    with open(os.path.join(runs_dir, names[0])) as f:
        return json.load(f)


def modelled(j: dict) -> dict:
    """(mode, P, machine) -> seconds_per_batch stages, from a bench modes JSON."""
    out = {}
    for row in j["rows"]:
        for m in row["modelled"]:
            out[(row["mode"], row["pes"], m["machine"])] = m["seconds_per_batch"]
    return out


def read_csv(path: str) -> list[dict]:
    """The rows of crossover.csv as written by main(): numeric columns as int or float."""
    if not os.path.exists(path):
        raise SystemExit(f"tools/crossover.py: {path} not found (run the sweep first)")
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append({k: (v if k == "machine" else
                             int(v) if k in ("hidden", "seeds_per_pe", "pes") else float(v))
                         for k, v in r.items()})
    return rows


def heat_maps(rows: list[dict], plots_dir: str) -> list[str]:
    """One PNG per machine of rows (crossover.csv rows): a panel per seeds per PE of the ratio
    independent / cooperative over hidden width (rows) x P (columns), value written in each cell,
    on a diverging colour map centred at 1.0 with one range for all machines. Writes
    plots_dir/crossover_<machine>.png; returns the file names, or [] when matplotlib does not
    import."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import CenteredNorm
    except ImportError:
        return []
    os.makedirs(plots_dir, exist_ok=True)
    machines = list(dict.fromkeys(r["machine"] for r in rows))
    hidden = sorted({r["hidden"] for r in rows})
    pes = sorted({r["pes"] for r in rows})
    seeds_list = sorted({r["seeds_per_pe"] for r in rows})
    half = max(0.05, max(abs(r["ratio"] - 1.0) for r in rows))
    norm = CenteredNorm(vcenter=1.0, halfrange=half)
    files = []
    for mach in machines:
        fig, axes = plt.subplots(1, len(seeds_list), figsize=(3.6 * len(seeds_list) + 1.2, 3.4),
                                 squeeze=False)
        for n, (ax, seeds) in enumerate(zip(axes[0], seeds_list)):
            grid = [[next(r["ratio"] for r in rows if r["machine"] == mach and r["hidden"] == h
                          and r["pes"] == p and r["seeds_per_pe"] == seeds) for p in pes]
                    for h in hidden]
            im = ax.imshow(grid, cmap="RdBu", norm=norm, origin="lower")
            ax.set_xticks(range(len(pes)), [str(p) for p in pes])
            ax.set_yticks(range(len(hidden)), [str(h) for h in hidden])
            ax.set_xlabel("P (GPUs)")
            if n == 0:
                ax.set_ylabel("hidden width")
            ax.set_title(f"{seeds} seeds per PE")
            for i, line in enumerate(grid):
                for k, v in enumerate(line):
                    dark = abs(v - 1.0) > 0.6 * half
                    ax.text(k, i, f"{v:.2f}", ha="center", va="center", fontsize=10,
                            color="white" if dark else "black")
        fig.colorbar(im, ax=list(axes[0]), label="independent / cooperative")
        fig.suptitle(f"{mach}: modelled speed-up of cooperative (>1: cooperative faster)",
                     fontsize=10)
        name = f"crossover_{mach}.png"
        fig.savefig(os.path.join(plots_dir, name), dpi=110, bbox_inches="tight")
        plt.close(fig)
        files.append(name)
    return files


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tools/crossover.py")
    ap.add_argument("--coopgnn", default=os.path.join(ROOT, "build", "default", "coopgnn"))
    ap.add_argument("--dataset")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    ap.add_argument("--batches", type=int, default=1)
    ap.add_argument("--machine", default=os.path.join(ROOT, "bench", "machines.yaml"))
    ap.add_argument("--skip-runs", action="store_true")
    ap.add_argument("--size-dataset",
                    help="a larger graph: model hidden 1024, P = 8, each seeds per PE on it too")
    ap.add_argument("--size-only", action="store_true",
                    help="run only the --size-dataset points (no grid, no tables)")
    ap.add_argument("--plot", action="store_true",
                    help="only draw the heat maps from --out/crossover.csv into --out/plots")
    a = ap.parse_args(argv)
    if a.plot:
        pngs = heat_maps(read_csv(os.path.join(a.out, "crossover.csv")),
                         os.path.join(a.out, "plots"))
        if not pngs:
            raise SystemExit("tools/crossover.py --plot: matplotlib does not import in "
                             f"{sys.executable} (run it with a Python that has matplotlib)")
        print("wrote " + ", ".join(os.path.join(a.out, "plots", p) for p in pngs))
        return 0
    if a.dataset is None:
        ap.error("--dataset is required (except with --plot)")
    if not os.path.isdir(a.dataset):
        ap.error(f"--dataset {a.dataset}: not a directory")
    os.makedirs(a.out, exist_ok=True)
    runs_dir = os.path.join(a.out, "crossover_runs")
    os.makedirs(runs_dir, exist_ok=True)
    # Paths as given (relative to the working directory) so that the commands recorded in the
    # report and in bench modes' JSON name files of the repository, not of this machine.
    a.machine = os.path.relpath(a.machine)
    variants = os.path.relpath(os.path.join(a.out, "crossover_machines.yaml"))
    bases = write_variants(a.machine, variants)
    machines = [e["name"] for e in bases]
    log: list[str] = []
    t0 = time.time()
    if a.size_dataset and not a.skip_runs:
        for seeds in SEEDS_PER_PE:
            run_modes(a.coopgnn, a.size_dataset, SIZE_HIDDEN, seeds, a.machine, a.batches,
                      runs_dir, log, pes=[SIZE_PES], tag=size_tag(SIZE_HIDDEN, seeds))
        if a.size_only:
            return 0
    for hidden in HIDDEN:
        for seeds in SEEDS_PER_PE:
            tag = f"h{hidden}-s{seeds}"
            if a.skip_runs:
                continue
            # The reference point's run models the variant machines too (same counted work).
            ref = (hidden, seeds) == (REFERENCE[0], REFERENCE[2])
            run_modes(a.coopgnn, a.dataset, hidden, seeds, variants if ref else a.machine,
                      a.batches, runs_dir, log)
    elapsed = time.time() - t0
    rows = []
    for hidden in HIDDEN:
        for seeds in SEEDS_PER_PE:
            mod = modelled(load_run(runs_dir, f"h{hidden}-s{seeds}"))
            for mach in machines:
                for p in PES:
                    c, i = mod[("cooperative", p, mach)], mod[("independent", p, mach)]
                    rows.append({"machine": mach, "hidden": hidden, "seeds_per_pe": seeds,
                                 "pes": p, "cooperative_s": c["total"],
                                 "independent_s": i["total"],
                                 "ratio": i["total"] / c["total"],
                                 **{f"coop_{s}": c[s] for s in STAGES},
                                 **{f"indep_{s}": i[s] for s in STAGES}})
    with open(os.path.join(a.out, "crossover.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    ref_run = load_run(runs_dir, f"h{REFERENCE[0]}-s{REFERENCE[2]}")
    ref = modelled(ref_run)
    sens = []
    for mach in machines:
        def ratio(name):
            return (ref[("independent", REFERENCE[1], name)]["total"] /
                    ref[("cooperative", REFERENCE[1], name)]["total"])
        base = ratio(mach)
        for key in ASSUMPTIONS:
            r = {"machine": mach, "assumption": key, "base_ratio": base}
            for factor, col in ((0.5, "halved"), (2.0, "doubled")):
                r[col] = ratio(variant_name(mach, key, factor))
            r["flips"] = ", ".join(c for c in ("halved", "doubled")
                                   if (r[c] > 1) != (base > 1)) or "no"
            sens.append(r)
    with open(os.path.join(a.out, "crossover_sensitivity.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(sens[0].keys()))
        w.writeheader()
        w.writerows(sens)
    size_rows = []
    if a.size_dataset:
        for seeds in SEEDS_PER_PE:
            run = load_run(runs_dir, size_tag(SIZE_HIDDEN, seeds))
            mod = modelled(run)
            for mach in machines:
                c = mod[("cooperative", SIZE_PES, mach)]
                i = mod[("independent", SIZE_PES, mach)]
                small = next(r for r in rows if r["machine"] == mach and r["hidden"] == SIZE_HIDDEN
                             and r["pes"] == SIZE_PES and r["seeds_per_pe"] == seeds)
                size_rows.append({"machine": mach, "dataset": run["dataset"],
                                  "num_nodes": run["num_nodes"], "hidden": SIZE_HIDDEN,
                                  "seeds_per_pe": seeds, "pes": SIZE_PES,
                                  "cooperative_s": c["total"], "independent_s": i["total"],
                                  "ratio": i["total"] / c["total"],
                                  "ratio_grid_graph": small["ratio"],
                                  **{f"coop_{s}": c[s] for s in STAGES},
                                  **{f"indep_{s}": i[s] for s in STAGES}})
        with open(os.path.join(a.out, "crossover_size.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(size_rows[0].keys()))
            w.writeheader()
            w.writerows(size_rows)
    heat_maps(rows, os.path.join(a.out, "plots"))
    write_report(a, rows, sens, machines, ref_run, log, elapsed, size_rows)
    print(f"wrote {os.path.join(a.out, 'crossover.md')}")
    return 0


def write_report(a, rows, sens, machines, ref_run, log, elapsed, size_rows):
    L = ["# Crossover map: cooperative vs independent minibatching in the cost model", "",
         "**Modelled figures** from work counted on the host (CPU sampling of the real graph), "
         "divided by the ceilings of bench/machines.yaml; **not validated on a GPU**. Written by "
         "tools/crossover.py (the tables below are generated; the sections from *Reading* on are "
         "written by hand from them).", "",
         f"Graph: {ref_run['dataset']} ({ref_run['num_nodes']} vertices, {ref_run['num_edges']} "
         f"directed edges, 128 float32 features), LABOR fanouts 10,10,10, GraphSAGE, features "
         f"in pinned host memory (UVA), {a.batches} measured batch per (mode, P), no warm-up, "
         "no cache, batch dependency 1, GEMMs as each machine's gemm_math (fp32).", "",
         "Ratio = independent / cooperative modelled seconds per global batch: above 1 "
         "cooperative is faster.", ""]
    runs = [load_run(os.path.relpath(os.path.join(a.out, "crossover_runs")), f"h{h}-s{s}")
            for h in HIDDEN for s in SEEDS_PER_PE]
    took = f"; {elapsed / 60:.1f} minutes in all on this run" if log else ""
    L += ["Produced by (from the repository root; the graph by `coopgnn generate rmat "
          f"{a.dataset} --scale 20 --with-task --feature-dim 128`):", "", "```",
          "nice -n 10 python3 " + " ".join(shlex.quote(x) for x in sys.argv if x != "--skip-runs"),
          "```", "",
          "which ran bench modes once per hidden width and seeds per PE (as recorded in each "
          f"JSON's `command`{took}; bench modes measured "
          f"{sum(r['seconds'] for r in runs) / 60:.1f} minutes):", "", "```"] + \
        [r["command"] for r in runs] + ["```", ""]
    L += ["## Ratio per machine", ""]
    for mach in machines:
        L += [f"### {mach}", "", "| hidden | seeds/PE | " + " | ".join(f"P={p}" for p in PES) +
              " |", "|---|---|" + "---|" * len(PES)]
        for h in HIDDEN:
            for s in SEEDS_PER_PE:
                cells = [next(r for r in rows if r["machine"] == mach and r["hidden"] == h and
                              r["seeds_per_pe"] == s and r["pes"] == p) for p in PES]
                L.append(f"| {h} | {s} | " + " | ".join(f"{c['ratio']:.3f}" for c in cells) +
                         " |")
        L.append("")
    L += ["Heat maps of the tables above (drawn from crossover.csv by "
          "`python3 tools/crossover.py --plot`, a Python with matplotlib; red: independent "
          "faster, blue: cooperative faster, white: 1.0):", ""]
    L += [f"![{m}: modelled independent / cooperative](plots/crossover_{m}.png)" for m in machines]
    L.append("")
    h, p, s = REFERENCE
    L += [f"## Stages at the reference point (hidden {h}, P = {p}, {s} seeds per PE)", "",
          "Modelled milliseconds per global batch.", "",
          "| machine | mode | " + " | ".join(STAGES) + " | total |", "|---|---|" +
          "---|" * (len(STAGES) + 1)]
    for mach in machines:
        r = next(r for r in rows if r["machine"] == mach and r["hidden"] == h and
                 r["pes"] == p and r["seeds_per_pe"] == s)
        for mode, pre, tot in (("cooperative", "coop_", "cooperative_s"),
                               ("independent", "indep_", "independent_s")):
            L.append(f"| {mach} | {mode} | " + " | ".join(f"{r[pre + st] * 1e3:.3f}"
                                                          for st in STAGES) +
                     f" | {r[tot] * 1e3:.3f} |")
    L += ["", f"## Sensitivity at the reference point", "",
          "Each assumption of the machine file halved and doubled (fractions capped at 1), "
          "everything else as in bench/machines.yaml; the variants are entries of "
          "[crossover_machines.yaml](crossover_machines.yaml) modelled in the reference run.",
          "", "| machine | assumption | ratio | halved | doubled | flips the verdict |",
          "|---|---|---|---|---|---|"]
    for r in sens:
        L.append(f"| {r['machine']} | {r['assumption']} | {r['base_ratio']:.3f} | "
                 f"{r['halved']:.3f} | {r['doubled']:.3f} | {r['flips']} |")
    if size_rows:
        runs = [load_run(os.path.relpath(os.path.join(a.out, "crossover_runs")),
                         size_tag(SIZE_HIDDEN, s)) for s in SEEDS_PER_PE]
        L += ["", f"## Graph size (hidden {SIZE_HIDDEN}, P = {SIZE_PES})", "",
              f"The same options on {runs[0]['dataset']} ({runs[0]['num_nodes']} vertices, "
              f"{runs[0]['num_edges']} directed edges, 128 float32 features; written "
              "to crossover_size.csv), run by:", "", "```"] + [r["command"] for r in runs] + \
             ["```", "", "| machine | seeds/PE | cooperative ms | independent ms | ratio | "
              f"ratio on {ref_run['dataset']} |", "|---|---|---|---|---|---|"]
        for r in size_rows:
            L.append(f"| {r['machine']} | {r['seeds_per_pe']} | {r['cooperative_s'] * 1e3:.3f} | "
                     f"{r['independent_s'] * 1e3:.3f} | {r['ratio']:.3f} | "
                     f"{r['ratio_grid_graph']:.3f} |")
    L += ["", "## Reading", "", "READING", ""]
    path = os.path.join(a.out, "crossover.md")
    old = open(path).read() if os.path.exists(path) else ""
    if "## Reading\n\n" in old and "READING" not in old.split("## Reading\n\n", 1)[1][:20]:
        # Keep a hand-written reading across regenerations.
        L[-2] = old.split("## Reading\n\n", 1)[1].rstrip("\n")
    with open(path, "w") as f:
        f.write("\n".join(L).rstrip("\n") + "\n")


if __name__ == "__main__":
    sys.exit(main())
