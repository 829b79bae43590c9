#!/usr/bin/env python3
"""Peer baseline (README "Experiments"): DGL GraphBolt's uniform neighbour sampler against
`coopgnn bench sample`, on the same graph, fanouts, batch size and seed batches.

coopgnn side: `coopgnn bench sample --sampler ns` (per layer sample_neighbors, then make_block,
whose sources are the next layer's seeds). GraphBolt side (DGL 2.1): per layer
FusedCSCSamplingGraph.sample_neighbors(seeds, [k], replace=False), then
unique_and_compact_csc_formats (what GraphBolt's NeighborSampler datapipe runs per layer), whose
unique row ids are the next layer's seeds. Both count sampled edges the same way: the sampled
edges of every layer summed. The graph GraphBolt samples is built here from the dataset's
edges/edges.npy ([2, E] src, dst) exactly as coopgnn's build_csc builds it (CSC of in-edges,
neighbour lists sorted by id, repeated edges kept once), so the dataset directory is only read
(never opened with OnDiskDataset, which writes into it). The seed batches come from coopgnn
(`--seeds-out`: the trainer's epoch order of the run seed), so both sample the same batches.

Runs interleave, ours, theirs, ours, theirs, ... (--runs each); every run is the median of
--repeats passes over --batches batches; the summary is the median over runs. torch's thread
count is pinned to --threads (torch.set_num_threads) and recorded, and coopgnn gets
--sample-threads equal to it.

    /tmp/dglenv/bin/python bench/graphbolt_sampler_baseline.py --coopgnn build/host/coopgnn \\
        --dataset /tmp/cnr2000-task --fanouts 10,10,10 --batch-size 1024 --threads 1

Writes OUT/graphbolt_sampler_<dataset>_t<threads>.json with both rates, the per-run numbers and
the ratio coopgnn / GraphBolt. Exit code 77 (skipped) when torch or DGL is missing.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import torch
    import dgl.graphbolt as gb
    from dgl.graphbolt.internal import unique_and_compact_csc_formats
except ImportError as err:  # exit code 77 = skipped
    print(f"graphbolt_sampler_baseline.py needs numpy, torch and dgl 2.x: {err}", file=sys.stderr)
    sys.exit(77)


def load_csc(dataset):
    """CSC of in-edges from edges/edges.npy, as coopgnn's build_csc: sorted, deduplicated."""
    edges = np.load(os.path.join(dataset, "edges", "edges.npy"))
    if edges.ndim != 2 or edges.shape[0] != 2:
        sys.exit(f"{dataset}/edges/edges.npy: expected shape [2, E], got {edges.shape}")
    import yaml  # pyyaml comes with dgl's dependencies

    with open(os.path.join(dataset, "metadata.yaml")) as f:
        meta = yaml.safe_load(f)
    n = int(meta["graph"]["nodes"][0]["num"])
    src = edges[0].astype(np.int64)
    dst = edges[1].astype(np.int64)
    key = np.unique(dst * n + src)  # sorted by (dst, src), repeats removed
    dst, src = key // n, key % n
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=indptr[1:])
    return meta.get("dataset_name", os.path.basename(dataset)), n, indptr, src


def read_batches(path):
    with open(path) as f:
        return [torch.tensor([int(v) for v in line.split()], dtype=torch.int64)
                for line in f if line.strip()]


def graphbolt_pass(graph, batches, fanouts):
    """One pass: seconds and sampled edges per layer (summed over batches)."""
    edges = [0] * len(fanouts)
    fan = [torch.tensor([k]) for k in fanouts]
    t0 = time.perf_counter()
    for seeds in batches:
        for layer, k in enumerate(fan):
            sub = graph.sample_neighbors(seeds, k, replace=False)
            edges[layer] += sub.sampled_csc.indices.numel()
            rows, _ = unique_and_compact_csc_formats(sub.sampled_csc, seeds)
            seeds = rows
    return time.perf_counter() - t0, edges


def run_ours(args, seeds_out=None, repeats=None):
    with tempfile.TemporaryDirectory() as out:
        cmd = [args.coopgnn, "bench", "sample", "--dataset", args.dataset, "--sampler", "ns",
               "--fanouts", args.fanouts, "--batch-size", str(args.batch_size),
               "--batches", str(args.batches), "--repeats", str(repeats or args.repeats),
               "--seed", str(args.seed), "--sample-threads", str(args.threads), "--out", out]
        if seeds_out:
            cmd += ["--seeds-out", seeds_out]
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
        name = [f for f in os.listdir(out) if f.startswith("sample_") and f.endswith(".json")]
        with open(os.path.join(out, name[0])) as f:
            return json.load(f), " ".join(cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--coopgnn", default="build/host/coopgnn")
    ap.add_argument("--dataset", required=True, help="coopgnn dataset directory (read only)")
    ap.add_argument("--fanouts", default="10,10,10")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3, help="passes per run (median)")
    ap.add_argument("--runs", type=int, default=3, help="interleaved runs per side (median)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="results")
    args = ap.parse_args()
    fanouts = [int(k) for k in args.fanouts.split(",")]

    torch.set_num_threads(args.threads)
    name, n, indptr, indices = load_csc(args.dataset)
    graph = gb.fused_csc_sampling_graph(torch.from_numpy(indptr), torch.from_numpy(indices))
    with tempfile.TemporaryDirectory() as tmp:
        seeds_path = os.path.join(tmp, "seeds.txt")
        first, _ = run_ours(args, seeds_out=seeds_path, repeats=1)  # exports the seed batches
        batches = read_batches(seeds_path)
    assert len(batches) == args.batches
    # Same seeds and graph: layer 0 of NS keeps min(k, d) per seed on both sides.
    _, gb_edges = graphbolt_pass(graph, batches, fanouts)  # also the warm-up pass
    ours_l0 = first["layers"][0]["edges"]
    if gb_edges[0] != ours_l0:
        sys.exit(f"layer-0 sampled edges differ: coopgnn {ours_l0}, GraphBolt {gb_edges[0]} "
                 "(not the same graph or seeds)")

    ours_runs, theirs_runs, ours_cmd = [], [], ""
    for run in range(args.runs):
        j, ours_cmd = run_ours(args)
        ours_runs.append({"edges": j["total"]["edges"], "seconds": j["total"]["seconds"],
                          "edges_per_second": j["total"]["edges_per_second"],
                          "sample_seconds": j["total"]["sample_seconds"],
                          "block_seconds": j["total"]["block_seconds"],
                          "layer_edges": [l["edges"] for l in j["layers"]]})
        passes = [graphbolt_pass(graph, batches, fanouts) for _ in range(args.repeats)]
        secs = statistics.median(p[0] for p in passes)
        edges = sum(passes[0][1])
        theirs_runs.append({"edges": edges, "seconds": secs, "edges_per_second": edges / secs,
                            "layer_edges": passes[0][1]})
        print(f"run {run + 1}/{args.runs}: coopgnn {ours_runs[-1]['edges_per_second'] / 1e6:.2f} "
              f"M edges/s, GraphBolt {theirs_runs[-1]['edges_per_second'] / 1e6:.2f} M edges/s",
              flush=True)

    ours = statistics.median(r["edges_per_second"] for r in ours_runs)
    theirs = statistics.median(r["edges_per_second"] for r in theirs_runs)
    result = {
        "bench": "graphbolt_sampler",
        "dataset": name, "dataset_dir": args.dataset, "num_nodes": n,
        "num_edges": int(indices.size),
        "fanouts": fanouts, "batch_size": args.batch_size, "batches": args.batches,
        "repeats": args.repeats, "runs": args.runs, "seed": args.seed,
        "torch_threads": torch.get_num_threads(), "coopgnn_sample_threads": args.threads,
        "torch_version": torch.__version__, "dgl_version": __import__("dgl").__version__,
        "coopgnn_command": ours_cmd,
        "edges_counted": "sampled edges of every layer, summed over batches",
        "coopgnn_edges_per_second": ours, "graphbolt_edges_per_second": theirs,
        "ratio_coopgnn_over_graphbolt": ours / theirs,
        "coopgnn_runs": ours_runs, "graphbolt_runs": theirs_runs,
        "load": os.getloadavg(),
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"graphbolt_sampler_{name}_t{args.threads}.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
    print(f"\n{name}: fanouts {args.fanouts}, B {args.batch_size}, {args.batches} batches, "
          f"{args.threads} thread(s) (torch {torch.get_num_threads()})\n"
          f"coopgnn   {ours / 1e6:8.2f} M sampled edges/s (median of {args.runs} runs)\n"
          f"GraphBolt {theirs / 1e6:8.2f} M sampled edges/s (median of {args.runs} runs)\n"
          f"ratio coopgnn / GraphBolt = {ours / theirs:.2f}\nwrote {path}")


if __name__ == "__main__":
    main()
