#!/usr/bin/env python3
"""Peer baseline (issue 5, item 4): PyTorch Geometric's layers on coopgnn's sampled blocks.

Runs `coopgnn bench export-blocks` (which samples the blocks and times coopgnn's own forward +
backward on them), loads exactly those blocks, features and weights, builds the same layer stack
with PyG (SAGEConv with mean aggregation, or GCNConv with coopgnn's precomputed normalised edge
weights), checks that its logits equal coopgnn's, and times forward + backward. Prints a table
and writes pyg_baseline.json with both times and their ratio, measured in the same run.

    python3 bench/pyg_baseline.py --coopgnn build/default/coopgnn --dataset data/cora \\
        --fanouts 10,10 --batch-size 1024 --batches 3 --device cuda

`--reference numpy` skips PyTorch entirely and checks the exported blocks with a NumPy forward
pass (works on machines without PyTorch; no timing comparison then).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

try:
    import numpy as np
except ImportError:  # exit code 77 = skipped, for ctest's SKIP_RETURN_CODE
    print("pyg_baseline.py needs NumPy (Debian: python3-numpy)", file=sys.stderr)
    sys.exit(77)


def load_batch(out, b, num_layers):
    d = os.path.join(out, f"batch{b}")
    blocks = []
    for i in range(num_layers):
        blk = {k: np.load(os.path.join(d, f"block{i}_{k}.npy"))
               for k in ("src_ids", "indptr", "indices", "weights", "src_degree")}
        blocks.append(blk)
    x = np.load(os.path.join(d, "x.npy"))
    labels = np.load(os.path.join(d, "labels.npy"))
    logits = np.load(os.path.join(d, "logits.npy"))
    return blocks, x, labels, logits


def load_params(out, meta):
    return {p["name"]: np.load(os.path.join(out, "params", p["name"] + ".npy"))
            for p in meta["params"]}


def relu_after(meta, i):
    return meta["linear_head"] or i + 1 < meta["num_layers"]


def numpy_forward(meta, params, blocks, num_dst, x):
    """Reference forward of DESIGN.md section 4 (SAGE-mean / GCN on sampled blocks)."""
    h = x.astype(np.float64)
    for i, blk in enumerate(blocks):
        nd = num_dst[i]
        indptr, idx, w = blk["indptr"], blk["indices"], blk["weights"].astype(np.float64)
        dst_of_edge = np.repeat(np.arange(nd), np.diff(indptr))
        if meta["model"] == "sage":
            agg = np.zeros((nd, h.shape[1]))
            np.add.at(agg, dst_of_edge, w[:, None] * h[idx])
            out = (h[:nd] @ params[f"sage{i}.w_self"] + agg @ params[f"sage{i}.w_neigh"]
                   + params[f"sage{i}.bias"])
        else:
            d = blk["src_degree"].astype(np.float64)
            z = h @ params[f"gcn{i}.weight"]
            coef = w * d[dst_of_edge] / np.sqrt((d[dst_of_edge] + 1) * (d[idx] + 1))
            out = z[:nd] / (d[:nd, None] + 1)
            np.add.at(out, dst_of_edge, coef[:, None] * z[idx])
            out = out + params[f"gcn{i}.bias"]
        if relu_after(meta, i):
            out = np.maximum(out, 0)
        h = out
    if meta["linear_head"]:
        n = meta["num_layers"]
        h = h @ params[f"linear{n}.weight"] + params[f"linear{n}.bias"]
    return h


def torch_model(meta, params, device):
    import torch
    from torch_geometric.nn import GCNConv, SAGEConv

    layers = torch.nn.ModuleList()
    for i in range(meta["num_layers"]):
        if meta["model"] == "sage":
            w_self, w_neigh = params[f"sage{i}.w_self"], params[f"sage{i}.w_neigh"]
            conv = SAGEConv(w_self.shape[0], w_self.shape[1], aggr="mean", root_weight=True)
            with torch.no_grad():
                conv.lin_l.weight.copy_(torch.from_numpy(w_neigh.T.copy()))
                conv.lin_l.bias.copy_(torch.from_numpy(params[f"sage{i}.bias"][0]))
                conv.lin_r.weight.copy_(torch.from_numpy(w_self.T.copy()))
        else:
            w = params[f"gcn{i}.weight"]
            conv = GCNConv(w.shape[0], w.shape[1], normalize=False, add_self_loops=False)
            with torch.no_grad():
                conv.lin.weight.copy_(torch.from_numpy(w.T.copy()))
                conv.bias.copy_(torch.from_numpy(params[f"gcn{i}.bias"][0]))
        layers.append(conv)
    head = None
    if meta["linear_head"]:
        n = meta["num_layers"]
        w = params[f"linear{n}.weight"]
        head = torch.nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            head.weight.copy_(torch.from_numpy(w.T.copy()))
            head.bias.copy_(torch.from_numpy(params[f"linear{n}.bias"][0]))
    return layers.to(device), (head.to(device) if head is not None else None)


def torch_inputs(meta, blocks, num_dst, device):
    import torch
    graphs = []
    for i, blk in enumerate(blocks):
        nd = num_dst[i]
        indptr, idx = blk["indptr"], blk["indices"]
        dst = np.repeat(np.arange(nd), np.diff(indptr))
        if meta["model"] == "sage":
            ei = np.stack([idx, dst])
            graphs.append((torch.from_numpy(ei).to(device), None, nd))
        else:
            d = blk["src_degree"].astype(np.float64)
            coef = blk["weights"] * d[dst] / np.sqrt((d[dst] + 1) * (d[idx] + 1))
            loops = np.arange(nd)
            ei = np.stack([np.concatenate([idx, loops]), np.concatenate([dst, loops])])
            ew = np.concatenate([coef, 1.0 / (d[:nd] + 1)]).astype(np.float32)
            graphs.append((torch.from_numpy(ei).to(device), torch.from_numpy(ew).to(device), nd))
    return graphs


def torch_forward(meta, layers, head, graphs, x):
    h = x
    for i, (conv, (ei, ew, nd)) in enumerate(zip(layers, graphs)):
        if meta["model"] == "sage":
            out = conv((h, h[:nd]), ei, size=(h.shape[0], nd))
        else:
            out = conv(h, ei, ew)[:nd]
        if relu_after(meta, i):
            out = out.relu()
        h = out
    return head(h) if head is not None else h


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coopgnn", default="build/default/coopgnn", help="coopgnn binary")
    ap.add_argument("--dataset", default="data/cora")
    ap.add_argument("--model", default="sage", choices=["sage", "gcn"])
    ap.add_argument("--fanouts", default="10,10")
    ap.add_argument("--sampler", default="ns", choices=["ns", "labor"])
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--device", default="cuda", help="torch device (cuda or cpu)")
    ap.add_argument("--out", default="results/pyg_baseline", help="blocks and result directory")
    ap.add_argument("--reference", default="pyg", choices=["pyg", "numpy"],
                    help="numpy: check the exported blocks without PyTorch")
    ap.add_argument("--skip-export", action="store_true", help="reuse blocks already in --out")
    a = ap.parse_args()

    if not a.skip_export:
        cmd = [a.coopgnn, "bench", "export-blocks", "--dataset", a.dataset, "--model", a.model,
               "--fanouts", a.fanouts, "--sampler", a.sampler, "--batch-size", str(a.batch_size),
               "--batches", str(a.batches), "--hidden", str(a.hidden),
               "--repeats", str(a.repeats), "--out", a.out]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    with open(os.path.join(a.out, "meta.json")) as f:
        meta = json.load(f)
    params = load_params(a.out, meta)

    rows = []
    for b, mb in enumerate(meta["batches"]):
        blocks, x, labels, logits = load_batch(a.out, b, meta["num_layers"])
        num_dst = mb["num_dst"]
        if a.reference == "numpy":
            ref = numpy_forward(meta, params, blocks, num_dst, x)
            err = float(np.max(np.abs(ref - logits)) / max(1e-30, np.max(np.abs(logits))))
            rows.append({"batch": b, "max_rel_logit_error": err,
                         "coopgnn_seconds": mb["coopgnn_seconds"]})
            print(f"batch {b}: numpy reference vs coopgnn logits, max relative error {err:.2e}")
            continue
        import torch
        dev = torch.device(a.device)
        layers, head = torch_model(meta, params, dev)
        graphs = torch_inputs(meta, blocks, num_dst, dev)
        xt = torch.from_numpy(x).to(dev)
        yt = torch.from_numpy(labels).to(dev)
        times = []
        out = None
        for _ in range(a.repeats):
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            for p in layers.parameters():
                p.grad = None
            out = torch_forward(meta, layers, head, graphs, xt)
            loss = torch.nn.functional.cross_entropy(out, yt, reduction="sum") / len(labels)
            loss.backward()
            if dev.type == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        err = float((out.detach().cpu().numpy() - logits).__abs__().max()
                    / max(1e-30, np.abs(logits).max()))
        pyg_s = statistics.median(times)
        rows.append({"batch": b, "pyg_seconds": pyg_s, "coopgnn_seconds": mb["coopgnn_seconds"],
                     "pyg_over_coopgnn": pyg_s / mb["coopgnn_seconds"],
                     "max_rel_logit_error": err, "device": str(dev)})
        print(f"batch {b}: PyG {pyg_s:.6f} s  coopgnn {mb['coopgnn_seconds']:.6f} s  "
              f"ratio PyG/coopgnn {pyg_s / mb['coopgnn_seconds']:.3f}  logit error {err:.1e}")
    res = {"bench": "pyg_baseline", "reference": a.reference, "meta": meta, "rows": rows,
           "command": " ".join(sys.argv)}
    with open(os.path.join(a.out, "pyg_baseline.json"), "w") as f:
        json.dump(res, f, indent=2)
    bad = [r for r in rows if r["max_rel_logit_error"] > 1e-4]
    if bad:
        print(f"logits disagree on {len(bad)} batch(es): the layer stacks differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
