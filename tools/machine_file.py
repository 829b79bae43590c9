#!/usr/bin/env python3
"""usage: tools/machine_file.py MICROBENCH_JSON OUT_YAML --gpu-name NAME [--base ENTRY]
                             [--machines FILE] [--date YYYY-MM-DD] [--row-bytes N]

Writes a machine file for `coopgnn bench modes --machine OUT_YAML` (the format of
bench/machines.yaml, read by bench/drivers/cost_model.cpp) from the microbenchmarks of
tools/device_check.py (coopgnn_microbench's Google Benchmark JSON, bench/micro/*.cu). One entry,
named `measured-<GPU>` (e.g. measured-H100), modelling a machine of the base entry's GPU count
built from the measured GPU. Each figure is either measured (source: "measured by
tools/device_check.py on DATE, GPU: ..." with the raw microbenchmark value) or kept from the base
entry of --machines (default bench/machines.yaml; chosen by --base or by H200/H100/A100 in the
GPU name) with `assumption: true` and a source saying why it was not measured.

Figures and the microbenchmark each comes from (bandwidths in GB/s = 1e9 bytes/s):
  hbm_efficiency   gather_device/*: d2d_GBps (cudaMemcpy device-to-device, bytes copied per
                   second; HBM traffic is twice that, a read and a write) times 2 over the base
                   entry's datasheet hbm_gbps; without a base entry hbm_gbps is the measured
                   traffic rate and hbm_efficiency 1 (the measured rate is the achievable figure)
  pcie_gbps        gather_uva/<row bytes>: gather_GBps, random rows read in place from pinned
                   host memory (UVA), at --row-bytes (default 512: 128 float32 features)
  kernel_launch_us kernel_launch/*: us_per_kernel (back-to-back empty kernels on one stream)
  nccl_latency_us  alltoall/64/<P>: us_per_call, and nccl_efficiency from alltoall/<largest>/<P>:
                   alltoall_GBps / P per GPU over nvlink_gbps; measured only when the PEs had
                   distinct GPUs (counter gpus > 1). With one GPU the PEs exchange by peer copies
                   inside one device, which exercises neither NVLink nor NCCL: both figures and
                   nvlink_gbps are kept from the base entry and the source quotes the one-GPU values.
Not measured by the microbenchmarks (kept from the base entry, with its assumption flag):
fp32_tflops, tf32_tflops, flop_efficiency, gpu_memory_gb, nvlink_gbps (assumption: true with
one GPU), hbm_gbps (the datasheet peak; the measurement goes into hbm_efficiency). The gather rate of device rows (gather_device
gather_GBps) has no figure of its own in the cost model (it costs a gather as HBM bytes at
hbm_gbps x hbm_efficiency); it is written as a comment beside the figures.

Errors: a missing or unreadable MICROBENCH_JSON or machine file, or no base entry for the GPU
name (pass --base), exit with status 2 and a message naming the file or option.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FIGURE_KEYS = ["hbm_gbps", "hbm_efficiency", "gpu_memory_gb", "fp32_tflops", "tf32_tflops",
               "flop_efficiency", "nvlink_gbps", "nccl_efficiency", "nccl_latency_us",
               "pcie_gbps", "kernel_launch_us"]


class InputError(Exception):
    pass


def load_benchmarks(path: str) -> list[dict]:
    """The successful iteration rows of a Google Benchmark JSON file (aggregates and rows with
    error_occurred dropped). Raises InputError naming the file when it is missing or invalid."""
    try:
        with open(path) as f:
            rows = json.load(f)["benchmarks"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"microbench file {path}: cannot be read as Google Benchmark JSON "
                         f"with a 'benchmarks' list: {e}") from e
    return [b for b in rows if isinstance(b, dict) and not b.get("error_occurred")
            and b.get("run_type", "iteration") == "iteration"]


def load_base_entries(path: str) -> list[dict]:
    """The `machines` list of a machine file (YAML). Parsed with PyYAML when importable, else
    with a reader of the flow-map layout bench/machines.yaml uses."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"machine file {path}: cannot be read: {e}") from e
    try:
        import yaml  # type: ignore
        return yaml.safe_load(text)["machines"]
    except ImportError:
        pass
    machines = parse_flow_layout(text)
    if not machines:
        raise InputError(f"machine file {path}: no machines found")
    return machines


def parse_flow_layout(text: str) -> list[dict]:
    """The `machines` list of a machine file in bench/machines.yaml's layout (one figure per line
    as a flow map), for a python without PyYAML: [{name, gpu, gpus, link, gemm_math, figures}]."""
    machines: list[dict] = []
    for ln in text.splitlines():
        s = ln.split(" #", 1)[0].rstrip() if not ln.lstrip().startswith("#") else ""
        m = re.match(r"^\s*-\s+name:\s*(\S.*)$", s)
        if m:
            machines.append({"name": m.group(1).strip().strip('"'), "figures": {}})
            continue
        if not machines:
            continue
        m = re.match(r"^\s+(gpu|gpus|link|gemm_math):\s*(\S.*)$", s)
        if m:
            v = m.group(2).strip().strip('"')
            machines[-1][m.group(1)] = int(v) if m.group(1) == "gpus" else v
            continue
        m = re.match(r'^\s+(\w+):\s*\{value:\s*([-0-9.eE+]+)(,\s*assumption:\s*true)?,\s*'
                     r'source:\s*"(.*)"\}\s*$', ln)
        if m:
            machines[-1]["figures"][m.group(1)] = {
                "value": float(m.group(2)), "source": m.group(4),
                **({"assumption": True} if m.group(3) else {})}
    return machines


def short_gpu(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'H100'; an unknown name -> its words joined by '-'."""
    m = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Z]?)\b", name)
    return m.group(1) if m else re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")


def pick(rows: list[dict], prefix: str, counter: str) -> list[tuple[str, dict]]:
    return [(b["name"], b) for b in rows if b.get("name", "").startswith(prefix) and counter in b]


def arg_of(name: str, i: int) -> int:
    return int(name.split("/")[i])


def fmt_num(v: float) -> str:
    return f"{v:.4g}"


def build_entry(rows: list[dict], gpu_name: str, base: dict | None, date: str,
                row_bytes: int) -> tuple[dict, list[str]]:
    """The machine entry (name, gpu, gpus, link, gemm_math, figures) and comment lines."""
    who = f"measured by tools/device_check.py on {date}, {gpu_name}"
    bf = base["figures"] if base else {}
    figs: dict[str, dict] = {}
    notes: list[str] = []

    def keep(key: str, why: str, assumption: bool = False):
        """Copies the base entry's figure; assumption: true when `assumption` or the base
        figure is one (a datasheet figure not measured here stays a datasheet figure)."""
        if key not in bf:
            raise InputError(f"no base entry to keep figures.{key} from ({why}); pass --base "
                             f"with an entry of the machine file")
        figs[key] = {"value": bf[key]["value"],
                     "source": f"{why}; kept from {base['name']}: {bf[key]['source']}"}
        if assumption or bf[key].get("assumption"):
            figs[key]["assumption"] = True

    # HBM: cudaMemcpy D2D reads and writes each byte.
    d2d = pick(rows, "gather_device/", "d2d_GBps")
    if d2d:
        name, b = max(d2d, key=lambda nb: nb[1]["d2d_GBps"])
        traffic = 2 * b["d2d_GBps"]
        raw = f"{name}: d2d_GBps = {fmt_num(b['d2d_GBps'])} (bytes copied/s; HBM traffic 2x)"
        if "hbm_gbps" in bf:
            figs["hbm_gbps"] = dict(bf["hbm_gbps"])
            eff = traffic / bf["hbm_gbps"]["value"]
            if eff > 1:
                notes.append(f"measured HBM traffic {fmt_num(traffic)} GB/s exceeds the datasheet "
                             f"{fmt_num(bf['hbm_gbps']['value'])}: hbm_efficiency capped at 1")
            figs["hbm_efficiency"] = {"value": round(min(eff, 1.0), 4), "source":
                                      f"{who}: {raw}; {fmt_num(traffic)} / datasheet "
                                      f"{fmt_num(bf['hbm_gbps']['value'])} GB/s"}
        else:
            figs["hbm_gbps"] = {"value": round(traffic, 1), "source": f"{who}: {raw}"}
            figs["hbm_efficiency"] = {"value": 1.0, "source": f"{who}: the measured copy rate "
                                      "is taken as the achievable figure (no datasheet entry)"}
    else:
        keep("hbm_gbps", "not measured (no gather_device d2d_GBps in microbench.json)")
        keep("hbm_efficiency", "not measured (no gather_device d2d_GBps in microbench.json)")
    for name, b in pick(rows, "gather_device/", "gather_GBps"):
        notes.append(f"{name}: gather_GBps = {fmt_num(b['gather_GBps'])}, ratio_vs_d2d = "
                     f"{fmt_num(b.get('ratio_vs_d2d', float('nan')))} (not a figure of the model)")

    uva = pick(rows, "gather_uva/", "gather_GBps")
    if uva:
        exact = [nb for nb in uva if arg_of(nb[0], 1) == row_bytes]
        name, b = (exact or [max(uva, key=lambda nb: arg_of(nb[0], 1))])[0]
        h2d = f", h2d_GBps = {fmt_num(b['h2d_GBps'])}" if "h2d_GBps" in b else ""
        figs["pcie_gbps"] = {"value": round(b["gather_GBps"], 3), "source":
                             f"{who}: {name}: gather_GBps = {fmt_num(b['gather_GBps'])} (UVA "
                             f"reads of random {arg_of(name, 1)}-byte rows{h2d})"}
    else:
        keep("pcie_gbps", "not measured (no gather_uva in microbench.json)")

    launch = pick(rows, "kernel_launch/", "us_per_kernel")
    if launch:
        name, b = launch[0]
        sync = (f", us_launch_sync = {fmt_num(b['us_launch_sync'])}"
                if "us_launch_sync" in b else "")
        figs["kernel_launch_us"] = {"value": round(b["us_per_kernel"], 3), "source":
                                    f"{who}: {name}: us_per_kernel = "
                                    f"{fmt_num(b['us_per_kernel'])}{sync}"}
    else:
        keep("kernel_launch_us", "not measured (no kernel_launch in microbench.json)")

    small = pick(rows, "alltoall/64/", "us_per_call")
    big = [nb for nb in pick(rows, "alltoall/", "alltoall_GBps") if arg_of(nb[0], 1) > 64]
    multi = [nb for nb in small + big if nb[1].get("gpus", 1) > 1]
    if multi:
        sm = [nb for nb in small if nb[1].get("gpus", 1) > 1]
        bg = [nb for nb in big if nb[1].get("gpus", 1) > 1]
        if sm:
            name, b = max(sm, key=lambda nb: arg_of(nb[0], 2))
            figs["nccl_latency_us"] = {"value": round(b["us_per_call"], 3), "source":
                                       f"{who}: {name}: us_per_call = "
                                       f"{fmt_num(b['us_per_call'])} ({int(b['gpus'])} GPUs)"}
        else:
            keep("nccl_latency_us", "not measured (no alltoall/64 across GPUs)")
        if bg and "nvlink_gbps" in bf:
            name, b = max(bg, key=lambda nb: (arg_of(nb[0], 2), arg_of(nb[0], 1)))
            per_gpu = b["alltoall_GBps"] / b["pes"]
            figs["nccl_efficiency"] = {
                "value": round(min(per_gpu / bf["nvlink_gbps"]["value"], 1.0), 4),
                "source": f"{who}: {name}: alltoall_GBps = {fmt_num(b['alltoall_GBps'])} over "
                          f"{int(b['pes'])} GPUs, {fmt_num(per_gpu)} per GPU / nvlink_gbps "
                          f"{fmt_num(bf['nvlink_gbps']['value'])}"}
        else:
            keep("nccl_efficiency", "not measured (no large alltoall across GPUs)")
    else:
        one = "; ".join(
            [f"{n}: us_per_call = {fmt_num(b['us_per_call'])}" for n, b in small] +
            [f"{n}: alltoall_GBps = {fmt_num(b['alltoall_GBps'])}" for n, b in big])
        why = ("cannot be measured with one GPU (the PEs exchange by peer copies inside one "
               "device, neither NVLink nor NCCL" + (f"; {who}: {one}" if one else "") + ")")
        for key in ("nccl_latency_us", "nccl_efficiency"):
            keep(key, why, assumption=True)
    if multi:
        keep("nvlink_gbps", "datasheet figure; the link is not measured by the microbenchmarks")
    else:
        keep("nvlink_gbps", "cannot be measured with one GPU", assumption=True)
    for key in ("gpu_memory_gb", "fp32_tflops", "tf32_tflops", "flop_efficiency"):
        if key not in figs:
            keep(key, "not measured by the microbenchmarks")
    entry = {"name": f"measured-{short_gpu(gpu_name)}", "gpu": gpu_name,
             "gpus": int(base.get("gpus", 1)) if base else 1,
             "link": (base.get("link", "unknown") if base else "unknown"),
             "gemm_math": (base.get("gemm_math", "fp32") if base else "fp32"),
             "figures": {k: figs[k] for k in FIGURE_KEYS}}
    return entry, notes


def yaml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid double-quoted YAML scalar


def render(entry: dict, notes: list[str], source_json: str, base_name: str | None) -> str:
    out = ["# Machine file written by tools/machine_file.py (tools/device_check.py, step",
           "# microbench) from " + os.path.basename(source_json) + "; format of bench/machines.yaml.",
           f"# Figures not measured are kept from the entry {base_name or '(none)'} of "
           "bench/machines.yaml with assumption: true.",
           f"# The entry models {entry['gpus']} such GPUs (the base entry's count).",
           ] + [f"# raw: {n}" for n in notes] + [
           "machines:",
           f"  - name: {yaml_str(entry['name'])}",
           f"    gpu: {yaml_str(entry['gpu'])}",
           f"    gpus: {entry['gpus']}",
           f"    link: {yaml_str(entry['link'])}",
           f"    gemm_math: {entry['gemm_math']}",
           "    figures:"]
    for k, f in entry["figures"].items():
        a = ", assumption: true" if f.get("assumption") else ""
        out.append(f"      {k}: {{value: {f['value']!r}{a}, source: {yaml_str(f['source'])}}}")
    return "\n".join(out) + "\n"


def base_for(entries: list[dict], gpu_name: str, base: str | None) -> dict | None:
    if base:
        for e in entries:
            if e["name"] == base:
                return e
        raise InputError(f"--base {base}: no such entry (have {', '.join(e['name'] for e in entries)})")
    g = short_gpu(gpu_name)
    for e in entries:
        if g and g in str(e.get("gpu", "")) + " " + e["name"]:
            return e
    return None


def write_machine_file(microbench_json: str, out_yaml: str, gpu_name: str,
                       base: str | None = None, machines: str | None = None,
                       date: str | None = None, row_bytes: int = 512) -> dict:
    """Writes OUT_YAML (one machine entry) from MICROBENCH_JSON; returns the entry as a dict
    (figures: key -> {value, source[, assumption]}). Raises InputError (naming the file or
    option) on unreadable input or when a figure has neither a measurement nor a base entry."""
    rows = load_benchmarks(microbench_json)
    machines = machines or os.path.join(ROOT, "bench", "machines.yaml")
    b = base_for(load_base_entries(machines), gpu_name, base)
    date = date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    entry, notes = build_entry(rows, gpu_name, b, date, row_bytes)
    with open(out_yaml, "w") as f:
        f.write(render(entry, notes, microbench_json, b["name"] if b else None))
    return entry


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tools/machine_file.py", description=__doc__.split("\n")[2])
    ap.add_argument("microbench_json")
    ap.add_argument("out_yaml")
    ap.add_argument("--gpu-name", required=True)
    ap.add_argument("--base")
    ap.add_argument("--machines")
    ap.add_argument("--date")
    ap.add_argument("--row-bytes", type=int, default=512)
    a = ap.parse_args(argv)
    try:
        e = write_machine_file(a.microbench_json, a.out_yaml, a.gpu_name, a.base, a.machines,
                               a.date, a.row_bytes)
    except InputError as err:
        print(f"tools/machine_file.py: {err}", file=sys.stderr)
        return 2
    print(f"wrote {a.out_yaml}: machine {e['name']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
