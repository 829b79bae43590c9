#!/usr/bin/env python3
"""Cora epoch comparison: coopgnn's GraphSAGE vs DGL's, coopgnn's GCN vs PyG's.

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
- threads: torch.set_num_threads(--threads) and one inter-op thread; coopgnn runs one PE with
  --threads-per-pe and --sample-threads set to --threads; both recorded in the JSON.
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
               "--threads-per-pe", str(a.threads), "--sample-threads", str(a.threads),
               "--no-progress", "--quiet"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(metrics) as f:
            lines = [json.loads(x) for x in f if x.strip()]
    lines = [x for x in lines if "epoch" in x]  # the epoch lines, not the selection record
    secs = [x["seconds"]["epoch"] for x in lines]
    return secs, lines[-1]["test_metric"], " ".join(cmd)


def full_neighbour_loader(dgl, torch, g, train):
    """DGL's loader of one shuffled batch of every training vertex per epoch, 2-layer blocks of
    the full neighbourhood (the same minibatch for both peers)."""
    sampler = dgl.dataloading.MultiLayerFullNeighborSampler(2)
    return dgl.dataloading.DataLoader(g, torch.from_numpy(train), sampler, batch_size=len(train),
                                      shuffle=True, drop_last=False, num_workers=0)


def train_and_test(a, torch, model, loader, forward, x_all, y_all, test, full):
    """--epochs epochs of Adam on `forward(blocks, x)`; returns the training seconds of every
    epoch and the test accuracy of `full()` (the full-graph logits) in eval mode."""
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    secs = []
    for _ in range(a.epochs):
        model.train()
        t0 = time.perf_counter()
        for input_nodes, output_nodes, blocks in loader:
            out = forward(blocks, x_all[input_nodes])
            loss = torch.nn.functional.cross_entropy(out, y_all[output_nodes])
            opt.zero_grad()
            loss.backward()
            opt.step()
        secs.append(time.perf_counter() - t0)
    model.eval()
    with torch.no_grad():
        out = full()
    return secs, float((out[test].argmax(1) == y_all[test]).float().mean())


class TwoLayers:
    """conv0 -> ReLU -> conv1 with dropout on every layer's input, as coopgnn's model."""

    def __init__(self, torch, convs, dropout):
        self.convs = torch.nn.ModuleList(convs)
        self.drop = torch.nn.Dropout(dropout)
        self.module = torch.nn.ModuleList([self.convs, self.drop])

    def __call__(self, x, call_conv):
        h = x
        for i, conv in enumerate(self.convs):
            h = call_conv(i, conv, self.drop(h))
            if i == 0:
                h = h.relu()
        return h


def run_dgl_sage(a, cora, torch):
    import dgl
    import dgl.nn as dglnn
    edges, feat, label, s = cora
    g = dgl.graph((torch.from_numpy(edges[0]), torch.from_numpy(edges[1])), num_nodes=len(label))
    x_all, y_all = torch.from_numpy(feat), torch.from_numpy(label)
    torch.manual_seed(a.seed)
    net = TwoLayers(torch, [dglnn.SAGEConv(feat.shape[1], a.hidden, "mean"),
                            dglnn.SAGEConv(a.hidden, int(label.max()) + 1, "mean")], a.dropout)
    secs, acc = train_and_test(
        a, torch, net.module, full_neighbour_loader(dgl, torch, g, s["train"]),
        lambda blocks, x: net(x, lambda i, conv, h: conv(blocks[i], h)), x_all, y_all,
        torch.from_numpy(s["test"]), lambda: net(x_all, lambda i, conv, h: conv(g, h)))
    return secs, acc, (f"dgl {dgl.__version__} SAGEConv('mean') x2, DataLoader("
                       "MultiLayerFullNeighborSampler(2), batch_size=140, shuffle=True)")


def run_pyg_gcn(a, cora, torch):
    import dgl
    import torch_geometric
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from pyg_baseline import bipartite_gcn_class, gcn_coefficients
    BipartiteGCN = bipartite_gcn_class()
    edges, feat, label, s = cora
    n = len(label)
    ei_all = torch.from_numpy(edges)
    x_all, y_all = torch.from_numpy(feat), torch.from_numpy(label)
    deg_all = torch.bincount(ei_all[1], minlength=n).to(torch.float32)  # full-graph in-degree
    g = dgl.graph((ei_all[0], ei_all[1]), num_nodes=n)

    def gcn(conv, h, ei, deg, nd):
        coef, self_coef = gcn_coefficients(deg, ei, nd)  # in the step, as coopgnn's forward
        return conv(h, ei, coef, self_coef, nd)

    def on_blocks(blocks, x):
        def call(i, conv, h):
            blk = blocks[i]
            src, dst = blk.edges()
            return gcn(conv, h, torch.stack([src, dst]), deg_all[blk.srcdata[dgl.NID]],
                       blk.num_dst_nodes())
        return net(x, call)

    torch.manual_seed(a.seed)
    convs = [BipartiteGCN(feat.shape[1], a.hidden), BipartiteGCN(a.hidden, int(label.max()) + 1)]
    for c in convs:
        torch.nn.init.xavier_uniform_(c.lin.weight)  # GCNConv's initialisation
    net = TwoLayers(torch, convs, a.dropout)
    secs, acc = train_and_test(
        a, torch, net.module, full_neighbour_loader(dgl, torch, g, s["train"]), on_blocks, x_all,
        y_all, torch.from_numpy(s["test"]),
        lambda: net(x_all, lambda i, conv, h: gcn(conv, h, ei_all, deg_all, n)))
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
    if a.threads < 1:
        print("--threads must be >= 1", file=sys.stderr)
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
