#!/usr/bin/env python3
"""usage: tools/crossover.py --coopgnn BIN --dataset DIR [--feature-dataset DIR ...] [--out DIR]
                            [--batches N] [--machine FILE] [--skip-runs]
                            [--only-missing] [--size-dataset DIR [--size-feature-bytes B]] ...
                            [--size-only]
       tools/crossover.py --plot [--out DIR]

The crossover map of cooperative vs independent minibatching in the cost model of
`coopgnn bench modes` (bench/drivers/cost_model.cpp): the modelled time ratio
independent / cooperative (above 1: cooperative is faster) per machine of the machine file, over
feature configuration (width and dtype: one per graph, --dataset and each --feature-dataset) x
hidden width (64, 256, 1024) x P (2, 4, 8) x seeds per PE (512, 1024), LABOR, features in
pinned host memory (UVA); and a sensitivity table at one reference point (hidden 1024, P = 8,
1024 seeds per PE, the --dataset graph): each model assumption of each machine (nccl_latency_us,
kernel_launch_us, nccl_efficiency, pcie_gbps, hbm_efficiency, flop_efficiency) halved and doubled
(fractions capped at 1), showing which flips the verdict.

Every modelled figure comes from `coopgnn bench modes` (the one implementation of the model):
this script only runs it (one run per graph, hidden width and seeds per PE, all P in one run;
bench modes counts the work by sampling on the host, and the counted work depends on the hidden
width, so each width is its own run) and tabulates its JSON. The sensitivity variants are extra
entries of a machine file written next to the results (machine values changed, nothing else),
modelled in the reference point's own run, so they share its counted work.

Feature configurations: --dataset's runs are tagged h<hidden>-s<seeds>; each --feature-dataset's
are tagged f<width>-<dtype>-h<hidden>-s<seeds>, width and dtype read by `coopgnn info --json`.
A run's configuration in the tables comes from its tag, or (untagged) from its JSON: the width
is the counted feature bytes per row over the stored bytes per element, the dtype named by that
element size (4: float32, 2: float16, the two dtypes `coopgnn generate` writes).

Writes in --out (default docs/results): crossover.md, crossover.csv (one row per machine,
feature width and dtype, hidden, seeds per PE, P: both modelled totals, the ratio and the
stages), crossover_sensitivity.csv, crossover_machines.yaml (the variant machine file),
plots/crossover_<machine>.png heat maps (a row of panels per feature configuration) when
matplotlib imports, and the bench modes JSON files under --out/crossover_runs/.
--size-dataset DIR (repeatable) also models hidden 1024, P = 8 at each seeds per PE on a larger
graph; --size-feature-bytes B (given once per --size-dataset, in the same order, 0 = none) runs
that graph's points a second time with `bench modes --feature-bytes B` (the modelled bytes per
stored feature element; tag suffix -fb<B>), so a graph stored in float16 can be compared with
float32 ones. --only-missing runs only the points whose JSON is not yet there. The size table
(crossover_size.csv and the report's "Graph size" table) holds every size run found under
--out/crossover_runs; --size-only runs just those points.
--skip-runs rebuilds the tables from the JSON files already there (the dataset directories need
not exist then); --plot only draws the heat maps from --out/crossover.csv (no runs, no --dataset;
needs a Python with matplotlib).
Errors: a failing bench modes or info run stops the script with its exit status and command; a
missing or duplicated run JSON is an error naming the tag.
"""
from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import re
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
# Bytes per stored feature element -> dtype name, for an untagged run's JSON (which records the
# width, not the type): the two dtypes `coopgnn generate` writes.
ELEMENT_DTYPE = {4: "float32", 2: "float16"}
GRID_RUN = re.compile(r"^modes_.+-labor-(f\d+-[a-z0-9]+-)?h(\d+)-s(\d+)\.json$")
SIZE_RUN = re.compile(r"^modes_(.+)-labor-h(\d+)-s(\d+)-p(\d+)-size(?:-fb(\d+))?\.json$")


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


def size_tag(hidden: int, seeds: int, feature_bytes: int | None = None) -> str:
    """The tag of a size run; with feature_bytes, of its run at `--feature-bytes feature_bytes`."""
    return f"h{hidden}-s{seeds}-p{SIZE_PES}-size" + (f"-fb{feature_bytes}" if feature_bytes else "")


def grid_tag(prefix: str, hidden: int, seeds: int) -> str:
    """The tag of a grid run: prefix "" for --dataset, "f<width>-<dtype>-" for a
    --feature-dataset."""
    return f"{prefix}h{hidden}-s{seeds}"


def dataset_features(exe: str, dataset: str) -> tuple[int, str]:
    """(width, dtype) of a dataset directory's input features, from `coopgnn info DIR --json`
    (feature_shape[1], feature_dtype). Errors: a failing info run, or a dataset without features."""
    argv = [exe, "info", dataset, "--json"]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"tools/crossover.py: coopgnn info failed ({p.returncode}): "
                         + " ".join(shlex.quote(x) for x in argv))
    info = json.loads(p.stdout)
    shape = info.get("feature_shape") or []
    if len(shape) != 2 or not info.get("feature_dtype"):
        raise SystemExit(f"tools/crossover.py: {dataset} has no input feature table "
                         "(coopgnn info shows no feature_shape)")
    return int(shape[1]), str(info["feature_dtype"])


def run_modes(exe, dataset, hidden, seeds, machine, batches, runs_dir, log, pes=None,
              tag=None, feature_bytes=None) -> str:
    tag = tag or grid_tag("", hidden, seeds)
    argv = [exe, "bench", "modes", "--dataset", dataset, "--sampler", "labor", "--fanouts",
            "10,10,10", "--pes", *map(str, pes or PES), "--batch-per-pe", str(seeds), "--batches",
            str(batches), "--warmup", "0", "--hidden", str(hidden), "--feature-placement", "uva",
            "--seed", "1", "--machine", machine, "--tag", tag, "--out", runs_dir]
    if feature_bytes:
        argv[argv.index("--machine"):argv.index("--machine")] = ["--feature-bytes",
                                                                 str(feature_bytes)]
    log.append(" ".join(shlex.quote(a) for a in argv))
    t0 = time.time()
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"tools/crossover.py: bench modes failed ({p.returncode}): {log[-1]}")
    print(f"  {os.path.basename(dataset)} {tag}: {time.time() - t0:.0f} s", flush=True)
    return tag


def run_names(runs_dir: str, tag: str) -> list[str]:
    """The bench modes JSON files of runs_dir whose tag is exactly tag (LABOR runs)."""
    return [n for n in os.listdir(runs_dir) if n.startswith("modes_")
            and n.endswith(f"-labor-{tag}.json")]


def load_run(runs_dir: str, tag: str, name: str | None = None) -> dict:
    names = [name] if name else run_names(runs_dir, tag)
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


def overridden(j: dict) -> bool:
    """Whether a bench modes JSON modelled its feature bytes by --feature-bytes."""
    return "override" in j["cost_model"].get("feature_bytes_source", "")


def stored_features(j: dict) -> tuple[int, str] | None:
    """(width, dtype) of a run's stored input features from its JSON: the counted feature bytes
    per loaded row (the runtime counts rows at their stored width) over the stored bytes per
    element (cost_model.feature_bytes); None for a --feature-bytes run, whose JSON does not
    record the stored element size."""
    if overridden(j):
        return None
    w = j["rows"][0]["work_per_batch"]
    element = int(j["cost_model"]["feature_bytes"])
    return (round(w["feature_bytes"] / w["feature_rows"] / element),
            ELEMENT_DTYPE.get(element, f"{element}-byte"))


def feature_prefixes(runs_dir: str) -> list[str]:
    """The feature-configuration prefixes ("" first, then "f<width>-<dtype>-" sorted by width)
    of the grid runs in runs_dir."""
    found = {m.group(1) or "" for n in os.listdir(runs_dir) if (m := GRID_RUN.match(n))}
    return sorted(found | {""}, key=lambda x: (x != "", int(x[1:].split("-")[0]) if x else 0, x))


def grid_features(run: dict, prefix: str) -> tuple[int, str]:
    """(width, dtype) of a grid run: from its tag's prefix when it has one (checked against the
    JSON's counted bytes), else from the JSON."""
    derived = stored_features(run)
    if not prefix:
        return derived
    width, dtype = prefix[1:-1].split("-", 1)
    if derived is not None and derived[0] != int(width):
        raise SystemExit(f"tools/crossover.py: the {prefix[:-1]} runs counted {derived[0]}-wide "
                         "feature rows; the tag says " + width)
    return int(width), dtype


def features_label(width: int, dtype: str) -> str:
    return f"{width} {dtype}"


def size_features_label(r: dict) -> str:
    """A size row's stored features: width and dtype, or the stored bytes per row when no run of
    the graph at its stored width says which."""
    if r["feature_width"]:
        return features_label(r["feature_width"], r["feature_dtype"])
    return f"{r['stored_row_bytes']:g} bytes per row"


def read_csv(path: str) -> list[dict]:
    """The rows of crossover.csv as written by main(): numeric columns as int or float."""
    if not os.path.exists(path):
        raise SystemExit(f"tools/crossover.py: {path} not found (run the sweep first)")
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append({k: (v if k in ("machine", "feature_dtype") else
                             int(v) if k in ("feature_width", "hidden", "seeds_per_pe", "pes")
                             else float(v)) for k, v in r.items()})
    return rows


def heat_maps(rows: list[dict], plots_dir: str) -> list[str]:
    """One PNG per machine of rows (crossover.csv rows): a panel per feature configuration (rows
    of panels) and seeds per PE (columns of panels) of the ratio independent / cooperative over
    hidden width (rows) x P (columns), value written in each cell, on a diverging colour map
    centred at 1.0 with one range for all machines and configurations. Writes
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
    configs = list(dict.fromkeys((r["feature_width"], r["feature_dtype"]) for r in rows))
    hidden = sorted({r["hidden"] for r in rows})
    pes = sorted({r["pes"] for r in rows})
    seeds_list = sorted({r["seeds_per_pe"] for r in rows})
    half = max(0.05, max(abs(r["ratio"] - 1.0) for r in rows))
    norm = CenteredNorm(vcenter=1.0, halfrange=half)
    files = []
    for mach in machines:
        fig, axes = plt.subplots(len(configs), len(seeds_list),
                                 figsize=(3.8 * len(seeds_list) + 1.2, 3.6 * len(configs)),
                                 squeeze=False)
        fig.subplots_adjust(hspace=0.45, wspace=0.3)
        for c, cfg in enumerate(configs):
            for n, (ax, seeds) in enumerate(zip(axes[c], seeds_list)):
                grid = [[next(r["ratio"] for r in rows if r["machine"] == mach and
                              (r["feature_width"], r["feature_dtype"]) == cfg and
                              r["hidden"] == h and r["pes"] == p and r["seeds_per_pe"] == seeds)
                         for p in pes] for h in hidden]
                im = ax.imshow(grid, cmap="RdBu", norm=norm, origin="lower")
                ax.set_xticks(range(len(pes)), [str(p) for p in pes])
                ax.set_yticks(range(len(hidden)), [str(h) for h in hidden])
                if c == len(configs) - 1:
                    ax.set_xlabel("P (GPUs)")
                if n == 0:
                    ax.set_ylabel("hidden width")
                ax.set_title(f"{features_label(*cfg)} features\n{seeds} seeds per PE",
                             fontsize=9)
                for i, line in enumerate(grid):
                    for k, v in enumerate(line):
                        dark = abs(v - 1.0) > 0.6 * half
                        ax.text(k, i, f"{v:.2f}", ha="center", va="center", fontsize=10,
                                color="white" if dark else "black")
        fig.colorbar(im, ax=[ax for line in axes for ax in line],
                     label="independent / cooperative")
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
    ap.add_argument("--feature-dataset", action="append", default=[],
                    help="a graph with another feature width or dtype: run the same grid on it "
                         "(repeatable)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    ap.add_argument("--batches", type=int, default=1)
    ap.add_argument("--machine", default=os.path.join(ROOT, "bench", "machines.yaml"))
    ap.add_argument("--skip-runs", action="store_true")
    ap.add_argument("--only-missing", action="store_true",
                    help="run only the points whose JSON is not yet in --out/crossover_runs")
    ap.add_argument("--size-dataset", action="append", default=[],
                    help="a larger graph: model hidden 1024, P = 8, each seeds per PE on it too "
                         "(repeatable)")
    ap.add_argument("--size-feature-bytes", type=int, action="append", default=[],
                    help="once per --size-dataset, in order: also run that graph's points with "
                         "bench modes --feature-bytes B (0: only at the stored width)")
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
    if a.size_feature_bytes and len(a.size_feature_bytes) != len(a.size_dataset):
        ap.error(f"--size-feature-bytes is given {len(a.size_feature_bytes)} times for "
                 f"{len(a.size_dataset)} --size-dataset: give it once per --size-dataset (0: none)")
    if any(b < 0 or b > 8 for b in a.size_feature_bytes):
        ap.error("--size-feature-bytes must be 0 (none) or in [1, 8] bytes per element")
    if not a.skip_runs:
        for d in [a.dataset, *a.feature_dataset, *a.size_dataset]:
            if not os.path.isdir(d):
                ap.error(f"{d}: not a dataset directory")
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

    def wanted(tag: str) -> bool:
        return not a.skip_runs and not (a.only_missing and run_names(runs_dir, tag))

    for ds, extra in zip(a.size_dataset, a.size_feature_bytes or [0] * len(a.size_dataset)):
        for seeds in SEEDS_PER_PE:
            for fb in (None, extra) if extra else (None,):
                tag = size_tag(SIZE_HIDDEN, seeds, fb)
                # Size tags repeat across graphs: --only-missing asks for this graph's file.
                if a.skip_runs or (a.only_missing and any(
                        load_run(runs_dir, tag, n)["dataset_dir"] == ds
                        for n in run_names(runs_dir, tag))):
                    continue
                run_modes(a.coopgnn, ds, SIZE_HIDDEN, seeds, a.machine, a.batches, runs_dir, log,
                          pes=[SIZE_PES], tag=tag, feature_bytes=fb)
    if a.size_only:
        return 0
    grids = [(a.dataset, "")]
    for ds in a.feature_dataset:
        prefix = "" if a.skip_runs else "f{}-{}-".format(*dataset_features(a.coopgnn, ds))
        grids.append((ds, prefix))
    for ds, prefix in grids:
        if a.skip_runs:
            break
        for hidden in HIDDEN:
            for seeds in SEEDS_PER_PE:
                tag = grid_tag(prefix, hidden, seeds)
                if not wanted(tag):
                    continue
                # The reference point's run models the variant machines too (same counted work).
                ref = (prefix, hidden, seeds) == ("", REFERENCE[0], REFERENCE[2])
                run_modes(a.coopgnn, ds, hidden, seeds, variants if ref else a.machine,
                          a.batches, runs_dir, log, tag=tag)
    elapsed = time.time() - t0
    rows, grid_runs = [], {}
    for prefix in feature_prefixes(runs_dir):
        for hidden in HIDDEN:
            for seeds in SEEDS_PER_PE:
                run = load_run(runs_dir, grid_tag(prefix, hidden, seeds))
                grid_runs[(prefix, hidden, seeds)] = run
                width, dtype = grid_features(run, prefix)
                mod = modelled(run)
                for mach in machines:
                    for p in PES:
                        c, i = mod[("cooperative", p, mach)], mod[("independent", p, mach)]
                        rows.append({"machine": mach, "feature_width": width,
                                     "feature_dtype": dtype, "hidden": hidden,
                                     "seeds_per_pe": seeds, "pes": p,
                                     "cooperative_s": c["total"], "independent_s": i["total"],
                                     "ratio": i["total"] / c["total"],
                                     **{f"coop_{s}": c[s] for s in STAGES},
                                     **{f"indep_{s}": i[s] for s in STAGES}})
    with open(os.path.join(a.out, "crossover.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    ref_run = grid_runs[("", REFERENCE[0], REFERENCE[2])]
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
    size_runs, size_rows = size_table(runs_dir, rows, machines, grid_runs)
    if size_rows:
        with open(os.path.join(a.out, "crossover_size.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(size_rows[0].keys()))
            w.writeheader()
            w.writerows(size_rows)
    heat_maps(rows, os.path.join(a.out, "plots"))
    write_report(a, rows, sens, machines, grid_runs, log, elapsed, size_runs, size_rows)
    print(f"wrote {os.path.join(a.out, 'crossover.md')}")
    return 0


def size_table(runs_dir: str, rows: list[dict], machines: list[str],
               grid_runs: dict) -> tuple[list[dict], list[dict]]:
    """Every size run of runs_dir (hidden 1024, P = 8; file modes_<dataset>-labor-<size tag>.json)
    as (runs ordered by vertices, modelled feature bytes as stored first, seeds per PE; table
    rows per run and machine, with the grid graph's ratio at the same hidden width, P and seeds
    per PE for 128 float32). A --feature-bytes run's stored features are those of the same
    graph's run without it (unknown without one: width 0, dtype "unknown"; the stored bytes per
    row are in every row)."""
    found = []
    for n in sorted(os.listdir(runs_dir)):
        m = SIZE_RUN.match(n)
        if m and int(m.group(2)) == SIZE_HIDDEN and int(m.group(4)) == SIZE_PES:
            found.append(load_run(runs_dir, "", n))
    found.sort(key=lambda j: (j["num_nodes"], overridden(j), j["batch_per_pe"]))
    stored = {j["dataset"]: stored_features(j) for j in found if not overridden(j)}
    grid_rows = [r for r in rows if (r["feature_width"], r["feature_dtype"]) == (128, "float32")]
    out = []
    for j in found:
        seeds = j["batch_per_pe"]
        width, dtype = stored.get(j["dataset"]) or (0, "unknown")
        mod = modelled(j)
        for mach in machines:
            c = mod[("cooperative", SIZE_PES, mach)]
            i = mod[("independent", SIZE_PES, mach)]
            small = next(r for r in grid_rows if r["machine"] == mach and
                         r["hidden"] == SIZE_HIDDEN and r["pes"] == SIZE_PES and
                         r["seeds_per_pe"] == seeds)
            w = j["rows"][0]["work_per_batch"]
            out.append({"machine": mach, "dataset": j["dataset"], "num_nodes": j["num_nodes"],
                        "feature_width": width, "feature_dtype": dtype,
                        "stored_row_bytes": w["feature_bytes"] / w["feature_rows"],
                        "modelled_feature_bytes": j["cost_model"]["feature_bytes"],
                        "hidden": SIZE_HIDDEN, "seeds_per_pe": seeds, "pes": SIZE_PES,
                        "cooperative_s": c["total"], "independent_s": i["total"],
                        "ratio": i["total"] / c["total"], "ratio_grid_graph": small["ratio"],
                        **{f"coop_{s}": c[s] for s in STAGES},
                        **{f"indep_{s}": i[s] for s in STAGES}})
    return found, out


def write_report(a, rows, sens, machines, grid_runs, log, elapsed, size_runs, size_rows):
    prefixes = list(dict.fromkeys(k[0] for k in grid_runs))
    first = {p: grid_runs[(p, HIDDEN[0], SEEDS_PER_PE[0])] for p in prefixes}
    feats = {p: grid_features(first[p], p) for p in prefixes}
    ref_run = first[""]
    graphs = "; ".join(
        f"{first[p]['dataset']} ({first[p]['num_nodes']} vertices, {first[p]['num_edges']} "
        f"directed edges, {features_label(*feats[p])} features)" for p in prefixes)
    L = ["# Crossover map: cooperative vs independent minibatching in the cost model", "",
         "**Modelled figures** from work counted on the host (CPU sampling of the real graph), "
         "divided by the ceilings of bench/machines.yaml; **not validated on a GPU**. Written by "
         "tools/crossover.py (the tables below are generated; the sections from *Reading* on are "
         "written by hand from them).", "",
         f"Graph{'s' if len(prefixes) > 1 else ''}: {graphs}; LABOR fanouts 10,10,10, "
         f"GraphSAGE, features in pinned host memory (UVA), {a.batches} measured batch per "
         "(mode, P), no warm-up, no cache, batch dependency 1, GEMMs as each machine's gemm_math "
         "(fp32).", "",
         "Ratio = independent / cooperative modelled seconds per global batch: above 1 "
         "cooperative is faster.", ""]
    rel_runs = os.path.relpath(os.path.join(a.out, "crossover_runs"))
    took = f"; {elapsed / 60:.1f} minutes in all on this run" if log else ""
    dirs = [a.dataset, *a.feature_dataset]
    gens = []
    for p, d in zip(prefixes, dirs):
        width, dtype = feats[p]
        scale = first[p]["num_nodes"].bit_length() - 1
        gens.append(f"`coopgnn generate rmat {d} --scale {scale} --with-task --feature-dim "
                    f"{width}" + (f" --feature-dtype {dtype}" if dtype != "float32" else "") + "`")
    measured = "; ".join(
        f"{sum(grid_runs[(p, h, s)]['seconds'] for h in HIDDEN for s in SEEDS_PER_PE) / 60:.1f}"
        f" minutes for {features_label(*feats[p])}" for p in prefixes)
    L += ["Produced by (from the repository root; the graph"
          f"{'s' if len(gens) > 1 else ''} by " + " and ".join(gens) + "):", "", "```",
          "nice -n 10 python3 " + " ".join(shlex.quote(x) for x in sys.argv
                                           if x not in ("--skip-runs", "--only-missing")),
          "```", "",
          "which ran bench modes once per graph, hidden width and seeds per PE (as recorded in "
          f"each JSON's `command`{took}; bench modes measured {measured}):", "", "```"] + \
        [grid_runs[(p, h, s)]["command"] for p in prefixes for h in HIDDEN
         for s in SEEDS_PER_PE] + ["```", ""]
    L += ["## Ratio per machine", ""]
    for mach in machines:
        for p in prefixes:
            L += [f"### {mach}, {features_label(*feats[p])} features", "",
                  "| hidden | seeds/PE | " + " | ".join(f"P={q}" for q in PES) + " |",
                  "|---|---|" + "---|" * len(PES)]
            for h in HIDDEN:
                for s in SEEDS_PER_PE:
                    cells = [next(r for r in rows if r["machine"] == mach and
                                  (r["feature_width"], r["feature_dtype"]) == feats[p] and
                                  r["hidden"] == h and r["seeds_per_pe"] == s and r["pes"] == q)
                             for q in PES]
                    L.append(f"| {h} | {s} | " +
                             " | ".join(f"{c['ratio']:.3f}" for c in cells) + " |")
            L.append("")
    L += ["Heat maps of the tables above (drawn from crossover.csv by "
          "`python3 tools/crossover.py --plot`, a Python with matplotlib; a row of panels per "
          "feature configuration; red: independent faster, blue: cooperative faster, white: "
          "1.0):", ""]
    L += [f"![{m}: modelled independent / cooperative](plots/crossover_{m}.png)" for m in machines]
    L.append("")
    h, q, s = REFERENCE
    L += [f"## Stages at the reference point (hidden {h}, P = {q}, {s} seeds per PE)", "",
          "Modelled milliseconds per global batch.", "",
          "| features | machine | mode | " + " | ".join(STAGES) + " | total |",
          "|---|---|---|" + "---|" * (len(STAGES) + 1)]
    for p in prefixes:
        for mach in machines:
            r = next(r for r in rows if r["machine"] == mach and r["hidden"] == h and
                     (r["feature_width"], r["feature_dtype"]) == feats[p] and
                     r["pes"] == q and r["seeds_per_pe"] == s)
            for mode, pre, tot in (("cooperative", "coop_", "cooperative_s"),
                                   ("independent", "indep_", "independent_s")):
                L.append(f"| {features_label(*feats[p])} | {mach} | {mode} | " +
                         " | ".join(f"{r[pre + st] * 1e3:.3f}" for st in STAGES) +
                         f" | {r[tot] * 1e3:.3f} |")
    L += ["", "## Sensitivity at the reference point", "",
          f"On {ref_run['dataset']} with {features_label(*feats[''])} features. "
          "Each assumption of the machine file halved and doubled (fractions capped at 1), "
          "everything else as in bench/machines.yaml; the variants are entries of "
          "[crossover_machines.yaml](crossover_machines.yaml) modelled in the reference run.",
          "", "| machine | assumption | ratio | halved | doubled | flips the verdict |",
          "|---|---|---|---|---|---|"]
    for r in sens:
        L.append(f"| {r['machine']} | {r['assumption']} | {r['base_ratio']:.3f} | "
                 f"{r['halved']:.3f} | {r['doubled']:.3f} | {r['flips']} |")
    if size_rows:
        graphs = list(dict.fromkeys(j["dataset"] for j in size_runs))
        desc = []
        for g in graphs:
            j = next(j for j in size_runs if j["dataset"] == g)
            r = next(r for r in size_rows if r["dataset"] == g)
            desc.append(f"{g} ({j['num_nodes']} vertices, {j['num_edges']} directed edges, "
                        + (f"{size_features_label(r)} features)" if r["feature_width"] else
                           f"features of {size_features_label(r)})"))
        L += ["", f"## Graph size (hidden {SIZE_HIDDEN}, P = {SIZE_PES})", "",
              "The same options on " + " and ".join(desc) + " (written to crossover_size.csv). "
              "Modelled bytes/element: the bytes per feature element the model reads over PCIe, "
              "the stored width or bench modes' `--feature-bytes` override (modelled only: the "
              "counted work is the same). The cooperative feature exchange is modelled in "
              "float32, as the runtime sends it, or at the `--feature-bytes` width. Run by:", "",
              "```"] + \
             [j["command"] for j in size_runs] + \
             ["```", "", "| graph | features | modelled bytes/element | machine | seeds/PE | "
              f"cooperative ms | independent ms | ratio | ratio on {ref_run['dataset']} "
              f"({features_label(*feats[''])}) |", "|---|---|---|---|---|---|---|---|---|"]
        for r in size_rows:
            L.append(f"| {r['dataset']} | {size_features_label(r)}"
                     f" | {r['modelled_feature_bytes']} | {r['machine']} | {r['seeds_per_pe']} | "
                     f"{r['cooperative_s'] * 1e3:.3f} | {r['independent_s'] * 1e3:.3f} | "
                     f"{r['ratio']:.3f} | {r['ratio_grid_graph']:.3f} |")
    L += ["", "## Reading", "", "READING", ""]
    path = os.path.join(a.out, "crossover.md")
    old = ""
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if "## Reading\n\n" in old and "READING" not in old.split("## Reading\n\n", 1)[1][:20]:
        # Keep a hand-written reading across regenerations.
        L[-2] = old.split("## Reading\n\n", 1)[1].rstrip("\n")
    with open(path, "w") as f:
        f.write("\n".join(L).rstrip("\n") + "\n")


if __name__ == "__main__":
    sys.exit(main())
