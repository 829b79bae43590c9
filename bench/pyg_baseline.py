#!/usr/bin/env python3
"""Peer baseline (README "Experiments"): PyTorch Geometric's layers on coopgnn's sampled blocks.

Runs `coopgnn bench export-blocks` (which samples the blocks and times coopgnn's own forward +
backward on them on the host backend), loads exactly those blocks, features and weights, builds
the same layer stack with PyG, checks that its logits AND its weight gradients equal coopgnn's
(and dL/dx with --input-grad), and times forward + backward. Prints a table and writes
OUT/pyg_baseline.json with both times and their ratio, measured in the same run.

What is identical on the two sides (the timed work):
- each repetition: zero the gradients, forward over the L blocks, softmax cross-entropy / B,
  backward; the first layer's backward computes dL/dx on both sides with --input-grad, on
  neither without (the default, as coopgnn's trainer: features are not learnable);
- SAGE: PyG's SAGEConv (mean aggregation, root weight) on the bipartite block (x_src, x_dst);
- GCN: an explicit bipartite MessagePassing layer on the block (destinations only, never the
  src x src square) whose edge coefficients w_e d_dst / sqrt((d_dst + 1)(d_src + 1)) and
  self-loop weights 1 / (d + 1) (the block's src_degree, docs/design.md section 4.4) are computed
  inside the timed loop, as coopgnn's forward computes them; it multiplies by W before aggregating
  iff in_dim > out_dim, coopgnn's order (and DGL GraphConv's);
- threads: torch.set_num_threads(meta.json "threads"), the count coopgnn's export ran with (one
  host PE; 1 in this build), recorded in the JSON;
- statistic: the median of --repeats timed repetitions after --warmup untimed ones per batch.
Not identical: SAGEConv aggregates before multiplying whatever the widths (coopgnn multiplies
first when in_dim > out_dim, e.g. the last layer 64 -> 16); the edge_index is built once per
batch outside the timed loop (coopgnn's blocks arrive in CSR).
Tolerances: logits 1e-4 and weight gradients --grad-rtol (default 1e-3), both as
max |pyg - coopgnn| / max |coopgnn| per array; the script exits 1 when either is exceeded.

    /tmp/dglenv/bin/python bench/pyg_baseline.py --coopgnn build/host/coopgnn \\
        --dataset /tmp/cnr2000-task --model gcn --fanouts 10,10,10 --batch-size 1024 \\
        --hidden 64 --batches 3

`--reference numpy` skips PyTorch entirely and checks the exported blocks' logits and weight
gradients with a float64 NumPy forward and backward pass (works on machines without PyTorch; no
timing comparison then).
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


def numpy_forward(meta, params, blocks, num_dst, x, labels=None):
    """Reference forward of docs/design.md section 4.4 (SAGE-mean / GCN on sampled blocks) in
    float64. With labels, also the backward of softmax cross-entropy / B: returns (logits, weight
    gradients by coopgnn's parameter names)."""
    h = x.astype(np.float64)
    tape = []
    for i, blk in enumerate(blocks):
        nd = num_dst[i]
        indptr, idx, w = blk["indptr"], blk["indices"], blk["weights"].astype(np.float64)
        dst_of_edge = np.repeat(np.arange(nd), np.diff(indptr))
        if meta["model"] == "sage":
            coef, self_coef = w, None
            agg = np.zeros((nd, h.shape[1]))
            np.add.at(agg, dst_of_edge, w[:, None] * h[idx])
            out = (h[:nd] @ params[f"sage{i}.w_self"] + agg @ params[f"sage{i}.w_neigh"]
                   + params[f"sage{i}.bias"])
        else:
            d = blk["src_degree"].astype(np.float64)
            z = h @ params[f"gcn{i}.weight"]
            coef = w * d[dst_of_edge] / np.sqrt((d[dst_of_edge] + 1) * (d[idx] + 1))
            self_coef = 1.0 / (d[:nd] + 1)
            agg = None
            out = z[:nd] * self_coef[:, None]
            np.add.at(out, dst_of_edge, coef[:, None] * z[idx])
            out = out + params[f"gcn{i}.bias"]
        if relu_after(meta, i):
            out = np.maximum(out, 0)
        tape.append((h, agg, coef, self_coef, dst_of_edge, idx, nd, out))
        h = out
    if meta["linear_head"]:
        n = meta["num_layers"]
        h_in = h
        h = h @ params[f"linear{n}.weight"] + params[f"linear{n}.bias"]
    if labels is None:
        return h
    # Backward: softmax cross-entropy summed over the seeds / B.
    p = np.exp(h - h.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(labels)), labels] -= 1
    g = p / len(labels)
    grads = {}
    if meta["linear_head"]:
        n = meta["num_layers"]
        grads[f"linear{n}.weight"] = h_in.T @ g
        grads[f"linear{n}.bias"] = g.sum(axis=0, keepdims=True)
        g = g @ params[f"linear{n}.weight"].T
    for i in reversed(range(len(blocks))):
        h_src, agg, coef, self_coef, dst_of_edge, idx, nd, out = tape[i]
        if relu_after(meta, i):
            g = g * (out > 0)
        gh = np.zeros_like(h_src)
        if meta["model"] == "sage":
            ws, wn = params[f"sage{i}.w_self"], params[f"sage{i}.w_neigh"]
            grads[f"sage{i}.w_self"] = h_src[:nd].T @ g
            grads[f"sage{i}.w_neigh"] = agg.T @ g
            grads[f"sage{i}.bias"] = g.sum(axis=0, keepdims=True)
            gh[:nd] += g @ ws.T
            np.add.at(gh, idx, coef[:, None] * (g @ wn.T)[dst_of_edge])
        else:
            wg = params[f"gcn{i}.weight"]
            gz = np.zeros((h_src.shape[0], g.shape[1]))  # M^T g
            gz[:nd] += g * self_coef[:, None]
            np.add.at(gz, idx, coef[:, None] * g[dst_of_edge])
            grads[f"gcn{i}.weight"] = h_src.T @ gz
            grads[f"gcn{i}.bias"] = g.sum(axis=0, keepdims=True)
            gh = gz @ wg.T
        g = gh
    return h, grads


def transform_first(in_dim, out_dim):
    """coopgnn's (and DGL GraphConv's / SAGEConv's) order: multiply first iff in_dim > out_dim."""
    return in_dim > out_dim


def bipartite_gcn_class():
    """The bipartite GCN layer class (PyG's MessagePassing; imported lazily so that --reference
    numpy needs no torch). Also used by bench/cora_peers.py."""
    import torch
    from torch_geometric.nn import MessagePassing

    class BipartiteGCN(MessagePassing):
        """GCN on a sampled block, destinations only: out[d] = sum_e coef_e z[src_e]
        + z[d] / (deg_d + 1) + b with z = h W (Kipf & Welling's symmetric normalisation with the
        block's full-graph degrees, docs/design.md section 4.4), in coopgnn's multiplication
        order."""

        def __init__(self, in_dim, out_dim):
            super().__init__(aggr="add")
            self.lin = torch.nn.Linear(in_dim, out_dim, bias=False)
            self.bias = torch.nn.Parameter(torch.zeros(out_dim))
            self.first = transform_first(in_dim, out_dim)

        def forward(self, h, edge_index, coef, self_coef, nd):
            size = (h.shape[0], nd)
            if self.first:
                z = self.lin(h)
                out = self.propagate(edge_index, x=(z, z[:nd]), coef=coef, size=size)
                out = out + self_coef[:, None] * z[:nd]
            else:
                a = self.propagate(edge_index, x=(h, h[:nd]), coef=coef, size=size)
                out = self.lin(a + self_coef[:, None] * h[:nd])
            return out + self.bias

        def message(self, x_j, coef):
            return coef[:, None] * x_j

    return BipartiteGCN


def gcn_coefficients(deg, edge_index, nd, w=None):
    """GCN edge and self-loop coefficients of a block (torch tensors): w_e d_dst /
    sqrt((d_dst + 1)(d_src + 1)) per edge (w = None: the full neighbourhood, w_e d_dst = 1) and
    1 / (d + 1) for the nd destinations; deg = the block's sources' full-graph in-degrees."""
    import torch
    dd = deg[edge_index[1]]
    coef = torch.rsqrt((dd + 1) * (deg[edge_index[0]] + 1))
    if w is not None:
        coef = w * dd * coef
    return coef, 1.0 / (deg[:nd] + 1)


def torch_model(meta, params, device):
    import torch
    from torch_geometric.nn import SAGEConv

    BipartiteGCN = bipartite_gcn_class()

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
            conv = BipartiteGCN(w.shape[0], w.shape[1])
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


def torch_grads(meta, layers, head):
    """PyG's weight gradients under coopgnn's parameter names and [in, out] layout."""
    g = {}
    for i, conv in enumerate(layers):
        if meta["model"] == "sage":
            g[f"sage{i}.w_neigh"] = conv.lin_l.weight.grad.T
            g[f"sage{i}.w_self"] = conv.lin_r.weight.grad.T
            g[f"sage{i}.bias"] = conv.lin_l.bias.grad[None, :]
        else:
            g[f"gcn{i}.weight"] = conv.lin.weight.grad.T
            g[f"gcn{i}.bias"] = conv.bias.grad[None, :]
    if head is not None:
        n = meta["num_layers"]
        g[f"linear{n}.weight"] = head.weight.grad.T
        g[f"linear{n}.bias"] = head.bias.grad[None, :]
    return {k: v.detach().cpu().numpy() for k, v in g.items()}


def torch_inputs(meta, blocks, num_dst, device):
    """The blocks as torch tensors (graph format only: edge_index = (src, dst) of the block's
    CSR; nothing the timed loop computes is precomputed here)."""
    import torch
    graphs = []
    for i, blk in enumerate(blocks):
        nd = num_dst[i]
        dst = np.repeat(np.arange(nd), np.diff(blk["indptr"]))
        ei = torch.from_numpy(np.stack([blk["indices"], dst]).astype(np.int64)).to(device)
        graphs.append({"ei": ei, "nd": nd,
                       "w": torch.from_numpy(blk["weights"].astype(np.float32)).to(device),
                       "deg": torch.from_numpy(blk["src_degree"].astype(np.float32)).to(device)})
    return graphs


def torch_forward(meta, layers, head, graphs, x):
    h = x
    for i, (conv, gr) in enumerate(zip(layers, graphs)):
        nd, ei = gr["nd"], gr["ei"]
        if meta["model"] == "sage":
            out = conv((h, h[:nd]), ei, size=(h.shape[0], nd))
        else:
            # The edge coefficients, inside the timed work as coopgnn computes them in its
            # forward (gcn_edge_values).
            coef, self_coef = gcn_coefficients(gr["deg"], ei, nd, gr["w"])
            out = conv(h, ei, coef, self_coef, nd)
        if relu_after(meta, i):
            out = out.relu()
        h = out
    return head(h) if head is not None else h


def rel_err(a, b):
    """max |a - b| / max |b| (0 when both are all zeros)."""
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    diff = float(np.max(np.abs(a - b))) if b.size else 0.0
    return diff / scale if scale > 0 else diff


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coopgnn", default="build/host/coopgnn", help="coopgnn binary")
    ap.add_argument("--dataset", default="data/cora")
    ap.add_argument("--model", default="sage", choices=["sage", "gcn"])
    ap.add_argument("--fanouts", default="10,10")
    ap.add_argument("--sampler", default="ns", choices=["ns", "labor"])
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=10, help="timed repetitions, both sides")
    ap.add_argument("--warmup", type=int, default=2, help="untimed repetitions, both sides")
    ap.add_argument("--input-grad", action="store_true",
                    help="both sides compute dL/dx in the first layer's backward (default: "
                         "neither does, as coopgnn's trainer)")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads; must equal the thread count coopgnn's export ran with "
                         "(meta.json 'threads', export-blocks --threads); default: that count")
    ap.add_argument("--grad-rtol", type=float, default=1e-3,
                    help="max |g_pyg - g_coopgnn| / max |g_coopgnn| allowed per parameter")
    ap.add_argument("--device", default="cpu",
                    help="torch device (coopgnn's export times the host backend: cpu compares "
                         "like with like)")
    ap.add_argument("--out", default="results/pyg_baseline", help="blocks and result directory")
    ap.add_argument("--reference", default="pyg", choices=["pyg", "numpy"],
                    help="numpy: check the exported blocks without PyTorch")
    ap.add_argument("--skip-export", action="store_true", help="reuse blocks already in --out")
    a = ap.parse_args()

    if not a.skip_export:
        cmd = [a.coopgnn, "bench", "export-blocks", "--dataset", a.dataset, "--model", a.model,
               "--fanouts", a.fanouts, "--sampler", a.sampler, "--batch-size", str(a.batch_size),
               "--batches", str(a.batches), "--hidden", str(a.hidden),
               "--repeats", str(a.repeats), "--warmup", str(a.warmup), "--out", a.out]
        if a.input_grad:
            cmd.append("--input-grad")
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    with open(os.path.join(a.out, "meta.json")) as f:
        meta = json.load(f)
    params = load_params(a.out, meta)
    threads = meta.get("threads", 1)
    if a.threads is not None and a.threads != threads:
        print(f"--threads {a.threads}: coopgnn's export ran with {threads} thread(s); the two "
              "sides must use the same count", file=sys.stderr)
        return 2
    input_grad = bool(meta.get("input_grad", False))
    warmup, repeats = meta.get("warmup", 0), meta["repeats"]

    rows = []
    torch_info = {}
    if a.reference == "pyg":
        import torch
        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
        torch_info = {"torch": torch.__version__, "torch_threads": torch.get_num_threads(),
                      "torch_interop_threads": torch.get_num_interop_threads()}
        import torch_geometric
        torch_info["torch_geometric"] = torch_geometric.__version__
    for b, mb in enumerate(meta["batches"]):
        blocks, x, labels, logits = load_batch(a.out, b, meta["num_layers"])
        num_dst = mb["num_dst"]
        if a.reference == "numpy":
            ref, ref_grads = numpy_forward(meta, params, blocks, num_dst, x, labels)
            err = rel_err(logits, ref)
            d = os.path.join(a.out, f"batch{b}", "grads")
            grad_err = {name: rel_err(np.load(os.path.join(d, name + ".npy")), g)
                        for name, g in ref_grads.items()}
            rows.append({"batch": b, "max_rel_logit_error": err, "rel_grad_error": grad_err,
                         "max_rel_grad_error": max(grad_err.values()),
                         "coopgnn_seconds": mb["coopgnn_seconds"]})
            print(f"batch {b}: numpy reference vs coopgnn: logits max relative error {err:.2e}, "
                  f"weight gradients {max(grad_err.values()):.2e}")
            continue
        dev = torch.device(a.device)
        layers, head = torch_model(meta, params, dev)
        graphs = torch_inputs(meta, blocks, num_dst, dev)
        xt = torch.from_numpy(x).to(dev)
        yt = torch.from_numpy(labels).to(dev)
        times = []
        out = None
        for r in range(warmup + repeats):
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            for p in layers.parameters():
                p.grad = None
            if head is not None:
                for p in head.parameters():
                    p.grad = None
            xin = xt.detach().requires_grad_(True) if input_grad else xt
            out = torch_forward(meta, layers, head, graphs, xin)
            loss = torch.nn.functional.cross_entropy(out, yt, reduction="sum") / len(labels)
            loss.backward()
            if dev.type == "cuda":
                torch.cuda.synchronize()
            if r >= warmup:
                times.append(time.perf_counter() - t0)
        err = rel_err(out.detach().cpu().numpy(), logits)
        pg = torch_grads(meta, layers, head)
        grad_err = {}
        d = os.path.join(a.out, f"batch{b}", "grads")
        for name in pg:
            cg = np.load(os.path.join(d, name + ".npy"))
            if cg.shape != pg[name].shape:
                print(f"batch {b}: gradient {name} is {cg.shape} in coopgnn, {pg[name].shape} "
                      "in PyG", file=sys.stderr)
                return 1
            grad_err[name] = rel_err(pg[name], cg)
        if input_grad:
            grad_err["x"] = rel_err(xin.grad.detach().cpu().numpy(),
                                    np.load(os.path.join(a.out, f"batch{b}", "x_grad.npy")))
        pyg_s = statistics.median(times)
        coop_s = mb["coopgnn_seconds"]
        rows.append({"batch": b, "pyg_seconds": pyg_s, "coopgnn_seconds": coop_s,
                     "pyg_seconds_all": times, "coopgnn_seconds_all": mb["coopgnn_seconds_all"],
                     "coopgnn_over_pyg": coop_s / pyg_s, "pyg_over_coopgnn": pyg_s / coop_s,
                     "max_rel_logit_error": err, "rel_grad_error": grad_err,
                     "max_rel_grad_error": max(grad_err.values()), "device": str(dev),
                     "num_edges": [int(g["ei"].shape[1]) for g in graphs],
                     "num_src": [int(blk["src_ids"].shape[0]) for blk in blocks]})
        print(f"batch {b}: PyG {pyg_s:.6f} s  coopgnn {coop_s:.6f} s  "
              f"coopgnn/PyG {coop_s / pyg_s:.3f}  logit error {err:.1e}  "
              f"max grad error {max(grad_err.values()):.1e}", flush=True)
    summary = {}
    if a.reference == "pyg" and rows:
        ratios = [r["coopgnn_over_pyg"] for r in rows]
        summary = {"coopgnn_over_pyg_median": statistics.median(ratios),
                   "coopgnn_seconds_median": statistics.median(r["coopgnn_seconds"] for r in rows),
                   "pyg_seconds_median": statistics.median(r["pyg_seconds"] for r in rows)}
        print(f"{meta['model']}: coopgnn/PyG time ratio, median over {len(rows)} batches: "
              f"{summary['coopgnn_over_pyg_median']:.3f} (< 1: coopgnn faster); "
              f"{threads} thread(s), input gradient {'on' if input_grad else 'off'} both sides")
    res = {"bench": "pyg_baseline", "reference": a.reference, "meta": meta, "rows": rows,
           "threads": threads, "input_grad": input_grad, "warmup": warmup, "repeats": repeats,
           "statistic": f"median of {repeats} timed repetitions after {warmup} warm-up, both sides",
           "grad_rtol": a.grad_rtol, "summary": summary, **torch_info,
           "gcn_order": ("multiply first iff in_dim > out_dim, both sides"
                         if meta["model"] == "gcn" else None),
           "command": " ".join(sys.argv)}
    with open(os.path.join(a.out, "pyg_baseline.json"), "w") as f:
        json.dump(res, f, indent=2)
    print(f"wrote {os.path.join(a.out, 'pyg_baseline.json')}")
    bad = [r for r in rows if r["max_rel_logit_error"] > 1e-4]
    if bad:
        print(f"logits disagree on {len(bad)} batch(es): the layer stacks differ", file=sys.stderr)
        return 1
    bad = [r for r in rows if r["max_rel_grad_error"] > a.grad_rtol]
    if bad:
        for r in bad:
            worst = max(r["rel_grad_error"], key=r["rel_grad_error"].get)
            print(f"batch {r['batch']}: PyG's gradient of {worst} differs from coopgnn's by "
                  f"{r['rel_grad_error'][worst]:.2e} relative (> --grad-rtol {a.grad_rtol})",
                  file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
