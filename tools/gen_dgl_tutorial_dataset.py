#!/usr/bin/env python3
"""Writes tests/data/dgl_tutorial/: the dataset of DGL's "OnDiskDataset for Homogeneous Graph"
tutorial (dgl 2.1.x docs, notebooks/stochastic_training/ondisk_dataset_homograph.ipynb), made
the same way, file for file, with a seeded RNG and num_nodes = 100 instead of 1000 so that the
folder stays small (about 150 KB).

Run with a Python that has DGL, PyTorch, NumPy and pandas (made with dgl 2.1.0, torch 2.2.1):
    /tmp/dglenv/bin/python tools/gen_dgl_tutorial_dataset.py [OUT_DIR] [--check]

The files: edges.csv (pandas, no header), node/edge features feat_0 (.npy, float64) and feat_1
(torch.save, float32), node classification ids (.npy) and labels (torch.save, int64), link
prediction seeds, labels and indexes (.npy; validation and test sets carry 10 negatives per
positive), and metadata.yaml. --check loads a copy with dgl.graphbolt.OnDiskDataset (which
writes a preprocessed/ folder into the directory it opens, hence the copy).
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import pandas as pd
import torch

NUM_NODES = 100
NUM_NEGATIVES = 10


def save_numpy(base, name, array):
    np.save(os.path.join(base, name), array)
    return name


def save_torch(base, name, tensor):
    torch.save(tensor, os.path.join(base, name))
    return name


def link_prediction_split(base, split, positives, num_nodes):
    """seeds = positives then NUM_NEGATIVES corrupted-destination pairs per positive; labels 1
    then 0; indexes = the positive each row belongs to (the tutorial's recipe)."""
    n = len(positives)
    neg_dsts = np.random.randint(0, num_nodes, (n, NUM_NEGATIVES)).reshape(-1)
    neg_srcs = np.repeat(positives[:, 0], NUM_NEGATIVES)
    neg_seeds = np.concatenate((neg_srcs, neg_dsts)).reshape(2, -1).T
    seeds = np.concatenate((positives, neg_seeds))
    labels = np.empty(n * (NUM_NEGATIVES + 1))
    labels[:n] = 1
    labels[n:] = 0
    indexes = np.arange(0, n)
    indexes = np.concatenate([indexes, np.repeat(indexes, NUM_NEGATIVES)])
    return (
        save_numpy(base, f"lp-{split}-seeds.npy", seeds),
        save_numpy(base, f"lp-{split}-labels.npy", labels),
        save_numpy(base, f"lp-{split}-indexes.npy", indexes),
    )


def generate(base):
    os.makedirs(base, exist_ok=True)
    np.random.seed(2024)
    torch.manual_seed(2024)
    num_nodes = NUM_NODES
    num_edges = 10 * num_nodes

    # Graph structure: random edges as a header-less CSV of (src, dst) rows.
    edges = np.random.randint(0, num_nodes, size=(num_edges, 2))
    pd.DataFrame(edges).to_csv(os.path.join(base, "edges.csv"), index=False, header=False)

    # Features: feat_0 as numpy float64, feat_1 as a torch float32 tensor, for nodes and edges.
    node_feat_0 = save_numpy(base, "node-feat-0.npy", np.random.rand(num_nodes, 5))
    node_feat_1 = save_torch(base, "node-feat-1.pt", torch.rand(num_nodes, 5))
    edge_feat_0 = save_numpy(base, "edge-feat-0.npy", np.random.rand(num_edges, 5))
    edge_feat_1 = save_torch(base, "edge-feat-1.pt", torch.rand(num_edges, 5))

    # Node classification: a 60/20/20 split of shuffled ids, random labels in [0, 10).
    num_trains = int(num_nodes * 0.6)
    num_vals = int(num_nodes * 0.2)
    num_tests = num_nodes - num_trains - num_vals
    ids = np.arange(num_nodes)
    np.random.shuffle(ids)
    nc = {}
    for split, part in (
        ("train", ids[:num_trains]),
        ("val", ids[num_trains : num_trains + num_vals]),
        ("test", ids[-num_tests:]),
    ):
        nc[split] = (
            save_numpy(base, f"nc-{split}-ids.npy", part),
            save_torch(base, f"nc-{split}-labels.pt", torch.randint(0, 10, (len(part),))),
        )

    # Link prediction: a 60/20/20 split of the edges; negatives for validation and test.
    num_trains = int(num_edges * 0.6)
    num_vals = int(num_edges * 0.2)
    num_tests = num_edges - num_trains - num_vals
    lp_train = save_numpy(base, "lp-train-seeds.npy", edges[:num_trains, :])
    lp_val = link_prediction_split(base, "val", edges[num_trains : num_trains + num_vals, :],
                                   num_nodes)
    lp_test = link_prediction_split(base, "test", edges[-num_tests:, :], num_nodes)

    def nc_set(split):
        return f"""
      - data:
          - name: seeds
            format: numpy
            path: {nc[split][0]}
          - name: labels
            format: torch
            path: {nc[split][1]}"""

    def lp_set(files):
        return f"""
      - data:
          - name: seeds
            format: numpy
            path: {files[0]}
          - name: labels
            format: numpy
            path: {files[1]}
          - name: indexes
            format: numpy
            path: {files[2]}"""

    metadata = f"""dataset_name: homogeneous_graph_nc_lp
graph:
  nodes:
    - num: {num_nodes}
  edges:
    - format: csv
      path: edges.csv
feature_data:
  - domain: node
    name: feat_0
    format: numpy
    path: {node_feat_0}
  - domain: node
    name: feat_1
    format: torch
    path: {node_feat_1}
  - domain: edge
    name: feat_0
    format: numpy
    path: {edge_feat_0}
  - domain: edge
    name: feat_1
    format: torch
    path: {edge_feat_1}
tasks:
  - name: node_classification
    num_classes: 10
    train_set:{nc_set("train")}
    validation_set:{nc_set("val")}
    test_set:{nc_set("test")}
  - name: link_prediction
    num_classes: 10
    train_set:
      - data:
          - name: seeds
            format: numpy
            path: {lp_train}
    validation_set:{lp_set(lp_val)}
    test_set:{lp_set(lp_test)}
"""
    with open(os.path.join(base, "metadata.yaml"), "w") as f:
        f.write(metadata)


def check(base):
    """Loads a copy of `base` with DGL GraphBolt and prints what it found."""
    import dgl.graphbolt as gb

    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "dgl_tutorial")
        shutil.copytree(base, copy)
        dataset = gb.OnDiskDataset(copy).load()
        graph = dataset.graph
        print(f"graph: {graph.total_num_nodes} nodes, {graph.total_num_edges} edges")
        for domain in ("node", "edge"):
            for name in ("feat_0", "feat_1"):
                t = dataset.feature.read(domain, None, name)
                print(f"feature {domain}/{name}: {tuple(t.shape)} {t.dtype}")
        for task in dataset.tasks:
            sizes = [len(s) for s in (task.train_set, task.validation_set, task.test_set)]
            print(f"task {task.metadata['name']}: train/val/test items {sizes}")


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    here = os.path.dirname(os.path.abspath(__file__))
    base = args[0] if args else os.path.join(here, "..", "tests", "data", "dgl_tutorial")
    generate(base)
    if "--check" in sys.argv:
        check(base)


if __name__ == "__main__":
    main()
