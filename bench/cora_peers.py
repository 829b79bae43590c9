#!/usr/bin/env python3
"""Cora epoch comparison (issue 13, item 6): coopgnn's GraphSAGE vs DGL's, coopgnn's GCN vs PyG's.

Trains 2-layer models on data/cora for --epochs epochs on each side, interleaved (coopgnn, peer,
then peer, coopgnn in the next round, ...), and reports the median training time per epoch
(over epochs after the first --skip of each run, then the median over rounds) and the final test
accuracy of both, their ratio, as a table and OUT/cora_peers.json.

    /tmp/dglenv/bin/python bench/cora_peers.py --coopgnn build/host/coopgnn --threads 1

Identical on both sides:
- minibatch: the 140 training vertices, shuffled, in one batch per epoch (coopgnn:
  `--fanouts -1,-1 --batch-size 140 --pes 1 --mode independent`), sampled afresh every epoch with
  the full neighbourhood on both layers, as bipartite blocks (destinations only), by
  dgl.dataloading.DataLoader with MultiLayerFullNeighborSampler(2) on both peers (PyG's
  NeighborLoader needs pyg-lib or torch-sparse, which PyPI has no wheels of for torch 2.2; on
  Cora sampling is a small part of the epoch);
- model: conv(1433 -> hidden) ReLU, conv(hidden -> 7), dropout --dropout on every layer's input
  (coopgnn's --dropout), no linear head; SAGE is DGL's SAGEConv('mean') (which, like coopgnn,
  multiplies first when in > out); GCN is an explicit bipartite PyG MessagePassing layer
  (PyG's GCNConv has no bipartite form) with Kipf & Welling's symmetric normalisation over the
  full-graph degrees (coopgnn's GCN with fanout -1 is exactly that), edge coefficients computed
  in each step, multiplying first iff in > out as coopgnn does;
- loss: mean softmax cross-entropy over the batch; Adam, --lr, L2 --weight-decay added to the
  gradients (torch.optim.Adam's weight_decay = coopgnn's --weight-decay, scope all);
- timed: the training part of each epoch (sampling, feature gather, forward, backward, optimizer
  step); evaluation is not timed and runs once after the last epoch (coopgnn --eval-every 0,
  full-neighbour inference; the peers: full-graph forward in eval mode);
- threads: torch.set_num_threads(--threads) and one inter-op thread; coopgnn runs one PE thread
  whose kernels are single-threaded in this build (--threads other than 1 is refused until the
  per-PE thread budget of issue 13 item 2 exists); both recorded in the JSON.
Not identical: weight initialisation and the random streams (shuffling, dropout masks) differ,
so accuracies agree statistically, not exactly; the peers' DataLoader runs in Python.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore", message=".*CPU affinity.*")  # DGL's DataLoader hint


def load_cora(d):
    edges = np.load(os.path.join(d, "edges", "edges.npy"))
    feat = np.load(os.path.join(d, "data", "feat.npy")).astype(np.float32)
    label = np.load(os.path.join(d, "data", "label.npy")).astype(np.int64)
    s = {k: np.load(os.path.join(d, "set", f"{k}_seeds.npy")).astype(np.int64)
         for k in ("train", "valid", "test")}
    return edges, feat, label, s


def run_coopgnn(a, model):
    """One coopgnn run; returns (per-epoch training seconds, final test accuracy)."""
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        cmd = [a.coopgnn, "train", "--dataset", a.dataset, "--model", model, "--fanouts", "-1,-1",
               "--batch-size", "140", "--pes", "1", "--mode", "independent", "--backend", "host",
               "--epochs", str(a.epochs), "--hidden", str(a.hidden), "--lr", str(a.lr),
               "--weight-decay", str(a.weight_decay), "--dropout", str(a.dropout),
               "--seed", str(a.seed), "--eval-every", "0", "--metrics-out", metrics,
               "--no-progress", "--quiet"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(metrics) as f:
            lines = [json.loads(x) for x in f if x.strip()]
    secs = [x["seconds"]["epoch"] for x in lines]
    return secs, lines[-1]["test_metric"], " ".join(cmd)


def run_dgl_sage(a, cora, torch):
    import dgl
    import dgl.nn as dglnn
    edges, feat, label, s = cora
    g = dgl.graph((torch.from_numpy(edges[0]), torch.from_numpy(edges[1])), num_nodes=len(label))
    x_all, y_all = torch.from_numpy(feat), torch.from_numpy(label)

    class SAGE(torch.nn.Module):
        def __init__(self, i, h, o):
            super().__init__()
            self.convs = torch.nn.ModuleList([dglnn.SAGEConv(i, h, "mean"),
                                              dglnn.SAGEConv(h, o, "mean")])
            self.drop = torch.nn.Dropout(a.dropout)

        def forward(self, blocks, x):
            h = x
            for i, (conv, blk) in enumerate(zip(self.convs, blocks)):
                h = conv(blk, self.drop(h))
                if i == 0:
                    h = h.relu()
            return h

    torch.manual_seed(a.seed)
    model = SAGE(feat.shape[1], a.hidden, int(label.max()) + 1)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    sampler = dgl.dataloading.MultiLayerFullNeighborSampler(2)
    loader = dgl.dataloading.DataLoader(g, torch.from_numpy(s["train"]), sampler,
                                        batch_size=140, shuffle=True, drop_last=False,
                                        num_workers=0)
    secs = []
    for _ in range(a.epochs):
        model.train()
        t0 = time.perf_counter()
        for input_nodes, output_nodes, blocks in loader:
            out = model(blocks, x_all[input_nodes])
            loss = torch.nn.functional.cross_entropy(out, y_all[output_nodes])
            opt.zero_grad()
            loss.backward()
            opt.step()
        secs.append(time.perf_counter() - t0)
    model.eval()
    with torch.no_grad():
        out = model([g, g], x_all)
    acc = float((out[s["test"]].argmax(1) == y_all[s["test"]]).float().mean())
    return secs, acc, f"dgl {dgl.__version__} SAGEConv('mean') x2, DataLoader(" \
                      "MultiLayerFullNeighborSampler(2), batch_size=140, shuffle=True)"


def run_pyg_gcn(a, cora, torch):
    import dgl
    import torch_geometric
    from torch_geometric.nn import MessagePassing
    edges, feat, label, s = cora
    n = len(label)
    ei_all = torch.from_numpy(edges)
    x_all, y_all = torch.from_numpy(feat), torch.from_numpy(label)
    deg_all = torch.bincount(ei_all[1], minlength=n).to(torch.float32)  # full-graph in-degree
    g = dgl.graph((ei_all[0], ei_all[1]), num_nodes=n)

    class BipartiteGCN(MessagePassing):
        """out[d] = sum_e z[src_e] / sqrt((d_dst + 1)(d_src + 1)) + z[d] / (d_d + 1) + b, z = h W,
        on a block whose first nd sources are its destinations."""

        def __init__(self, i, o):
            super().__init__(aggr="add")
            self.lin = torch.nn.Linear(i, o, bias=False)
            self.bias = torch.nn.Parameter(torch.zeros(o))
            torch.nn.init.xavier_uniform_(self.lin.weight)
            self.first = i > o

        def forward(self, h, ei, deg, nd):
            coef = torch.rsqrt((deg[ei[1]] + 1) * (deg[ei[0]] + 1))
            self_coef = 1.0 / (deg[:nd] + 1)
            size = (h.shape[0], nd)
            if self.first:
                z = self.lin(h)
                out = self.propagate(ei, x=(z, z[:nd]), coef=coef, size=size)
                out = out + self_coef[:, None] * z[:nd]
            else:
                agg = self.propagate(ei, x=(h, h[:nd]), coef=coef, size=size)
                out = self.lin(agg + self_coef[:, None] * h[:nd])
            return out + self.bias

        def message(self, x_j, coef):
            return coef[:, None] * x_j

    class GCN(torch.nn.Module):
        def __init__(self, i, h, o):
            super().__init__()
            self.convs = torch.nn.ModuleList([BipartiteGCN(i, h), BipartiteGCN(h, o)])
            self.drop = torch.nn.Dropout(a.dropout)

        def forward(self, x, layers):
            """layers[l] = (edge_index [2, E] local (src, dst), src degrees, destinations)."""
            h = x
            for i, (conv, (ei, deg, nd)) in enumerate(zip(self.convs, layers)):
                h = conv(self.drop(h), ei, deg, nd)
                if i == 0:
                    h = h.relu()
            return h

    def as_layers(blocks):
        out = []
        for blk in blocks:
            src, dst = blk.edges()
            out.append((torch.stack([src, dst]), deg_all[blk.srcdata[dgl.NID]],
                        blk.num_dst_nodes()))
        return out

    torch.manual_seed(a.seed)
    model = GCN(feat.shape[1], a.hidden, int(label.max()) + 1)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    sampler = dgl.dataloading.MultiLayerFullNeighborSampler(2)
    loader = dgl.dataloading.DataLoader(g, torch.from_numpy(s["train"]), sampler,
                                        batch_size=140, shuffle=True, drop_last=False,
                                        num_workers=0)
    secs = []
    for _ in range(a.epochs):
        model.train()
        t0 = time.perf_counter()
        for input_nodes, output_nodes, blocks in loader:
            out = model(x_all[input_nodes], as_layers(blocks))
            loss = torch.nn.functional.cross_entropy(out, y_all[output_nodes])
            opt.zero_grad()
            loss.backward()
            opt.step()
        secs.append(time.perf_counter() - t0)
    model.eval()
    with torch.no_grad():
        out = model(x_all, [(ei_all, deg_all, n)] * 2)
    acc = float((out[s["test"]].argmax(1) == y_all[s["test"]]).float().mean())
    return secs, acc, (f"torch_geometric {torch_geometric.__version__} bipartite "
                       "MessagePassing GCN x2 on dgl.dataloading.DataLoader("
                       "MultiLayerFullNeighborSampler(2), batch_size=140, shuffle=True) blocks")


def summarise(secs, skip):
    return statistics.median(secs[skip:] if len(secs) > skip else secs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coopgnn", default="build/host/coopgnn")
    ap.add_argument("--dataset", default="data/cora")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--skip", type=int, default=5, help="first epochs of a run left out")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds per pair")
    ap.add_argument("--hidden", type=int, default=64, help="coopgnn train's default")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", default="sage,gcn")
    ap.add_argument("--out", default="results/cora_peers")
    a = ap.parse_args()
    if a.threads != 1:
        print("--threads: coopgnn's host kernels run on one thread per PE in this build; "
              "compare at --threads 1", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(a.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    cora = load_cora(a.dataset)
    peers = {"sage": ("DGL", run_dgl_sage), "gcn": ("PyG", run_pyg_gcn)}
    results = {}
    for model in a.models.split(","):
        peer_name, peer_fn = peers[model]
        rounds = []
        for r in range(a.rounds):
            order = ["coopgnn", "peer"] if r % 2 == 0 else ["peer", "coopgnn"]
            got = {}
            for side in order:
                if side == "coopgnn":
                    secs, acc, what = run_coopgnn(a, model)
                else:
                    secs, acc, what = peer_fn(a, cora, torch)
                got[side] = {"epoch_seconds_median": summarise(secs, a.skip),
                             "test_accuracy": acc, "epoch_seconds": secs, "what": what}
                print(f"{model} round {r} {side if side == 'coopgnn' else peer_name}: "
                      f"{got[side]['epoch_seconds_median'] * 1e3:.2f} ms/epoch, test accuracy "
                      f"{acc:.4f}", flush=True)
            got["coopgnn_over_peer"] = (got["coopgnn"]["epoch_seconds_median"]
                                        / got["peer"]["epoch_seconds_median"])
            rounds.append(got)
        c = statistics.median(x["coopgnn"]["epoch_seconds_median"] for x in rounds)
        p = statistics.median(x["peer"]["epoch_seconds_median"] for x in rounds)
        results[model] = {"peer": peer_name, "rounds": rounds, "coopgnn_epoch_seconds": c,
                          "peer_epoch_seconds": p, "coopgnn_over_peer": c / p,
                          "coopgnn_test_accuracy": [x["coopgnn"]["test_accuracy"] for x in rounds],
                          "peer_test_accuracy": [x["peer"]["test_accuracy"] for x in rounds]}
    print()
    print(f"{'model':6} {'peer':5} {'coopgnn ms/epoch':>17} {'peer ms/epoch':>14} "
          f"{'coopgnn/peer':>13} {'coopgnn acc':>12} {'peer acc':>9}")
    for model, r in results.items():
        print(f"{model:6} {r['peer']:5} {r['coopgnn_epoch_seconds'] * 1e3:17.2f} "
              f"{r['peer_epoch_seconds'] * 1e3:14.2f} {r['coopgnn_over_peer']:13.3f} "
              f"{statistics.mean(r['coopgnn_test_accuracy']):12.4f} "
              f"{statistics.mean(r['peer_test_accuracy']):9.4f}")
    print(f"(median over epochs {a.skip + 1}..{a.epochs} of each run, then over {a.rounds} "
          f"interleaved rounds; {a.threads} thread(s) both sides; < 1: coopgnn faster)")
    os.makedirs(a.out, exist_ok=True)
    res = {"bench": "cora_peers", "epochs": a.epochs, "skip": a.skip, "rounds": a.rounds,
           "hidden": a.hidden, "lr": a.lr, "weight_decay": a.weight_decay, "dropout": a.dropout,
           "threads": a.threads, "torch_threads": torch.get_num_threads(),
           "torch_interop_threads": torch.get_num_interop_threads(), "torch": torch.__version__,
           "results": results, "load": os.getloadavg(),
           "command": " ".join(sys.argv)}
    path = os.path.join(a.out, "cora_peers.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=2)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
