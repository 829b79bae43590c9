#!/usr/bin/env python3
"""Checks that link-prediction datasets travel between coopgnn and DGL GraphBolt both ways.

Not part of CI: needs a Python with dgl (2.1.0 checked), torch, numpy, pyyaml, pydantic.
  python3 tools/dgl_interop_check.py --coopgnn build/host/coopgnn --dataset data/cora --work /tmp/x
1. coopgnn split-edges DATASET -> WORK/split; dgl.graphbolt.OnDiskDataset loads it (on a copy,
   since GraphBolt writes preprocessed/ into the directory) and the sets are printed and checked.
2. A GraphBolt-layout link task written here with numpy (grouped seeds/labels/indexes, and the
   legacy node_pairs + negative_dsts) is read by `coopgnn info --json` and checked.
"""
import argparse, json, os, shutil, subprocess
import numpy as np
import dgl.graphbolt as gb

ap = argparse.ArgumentParser()
ap.add_argument("--coopgnn", required=True)
ap.add_argument("--dataset", required=True)
ap.add_argument("--work", required=True)
a = ap.parse_args()
shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)

# 1. coopgnn -> DGL
split = os.path.join(a.work, "split")
subprocess.run([a.coopgnn, "split-edges", a.dataset, split, "--negatives", "3", "--seed", "5"],
               check=True)
copy = os.path.join(a.work, "split_dgl")
shutil.copytree(split, copy)
ds = gb.OnDiskDataset(copy).load()
lp = [t for t in ds.tasks if t.metadata.get("name") == "link_prediction"][0]
print("DGL graph:", ds.graph.total_num_nodes, "nodes", ds.graph.total_num_edges, "edges")
for name in ("train_set", "validation_set", "test_set"):
    s = getattr(lp, name)
    print(f"  {name}: {len(s)} items, names {s.names}, first {s[0]}")
assert lp.train_set.names == ("seeds",)
assert lp.validation_set.names == ("seeds", "labels", "indexes")
assert len(lp.validation_set) % 4 == 0  # 1 positive + 3 negatives per query

# 2. DGL layout -> coopgnn
d = os.path.join(a.work, "graphbolt")
os.makedirs(os.path.join(d, "set"))
rng = np.random.default_rng(0)
n, e = 50, 300
src, dst = rng.integers(0, n, e), rng.integers(0, n, e)
np.save(os.path.join(d, "edges.npy"), np.stack([src, dst]))
pos = np.stack([src[:20], dst[:20]], 1)
seeds = np.concatenate([[p] + [[p[0], rng.integers(0, n)] for _ in range(5)] for p in pos])
np.save(os.path.join(d, "set/train.npy"), np.stack([src[20:], dst[20:]], 1))
np.save(os.path.join(d, "set/val_seeds.npy"), seeds)
np.save(os.path.join(d, "set/val_labels.npy"), np.tile([1, 0, 0, 0, 0, 0], 20))
np.save(os.path.join(d, "set/val_indexes.npy"), np.repeat(np.arange(20), 6))
np.save(os.path.join(d, "set/test_pairs.npy"), pos[:10])
np.save(os.path.join(d, "set/test_neg.npy"), rng.integers(0, n, (10, 3)))
def item(name, path):
    return {"name": name, "format": "numpy", "in_memory": True, "path": path}
import yaml
meta = {"dataset_name": "graphbolt_made",
        "graph": {"nodes": [{"num": n}], "edges": [{"format": "numpy", "path": "edges.npy"}]},
        "tasks": [{"name": "link_prediction",
                   "train_set": [{"data": [item("seeds", "set/train.npy")]}],
                   "validation_set": [{"data": [item("seeds", "set/val_seeds.npy"),
                                                item("labels", "set/val_labels.npy"),
                                                item("indexes", "set/val_indexes.npy")]}],
                   "test_set": [{"data": [item("node_pairs", "set/test_pairs.npy"),
                                          item("negative_dsts", "set/test_neg.npy")]}]}]}
with open(os.path.join(d, "metadata.yaml"), "w") as f:
    yaml.safe_dump(meta, f)
gb.OnDiskDataset(shutil.copytree(d, d + "_dgl")).load()  # valid GraphBolt input
info = json.loads(subprocess.run([a.coopgnn, "info", d, "--json"], check=True,
                                 capture_output=True, text=True).stdout)
print("coopgnn info link:", info["link"])
assert info["link"]["train"] == e - 20
assert info["link"]["valid"] == {"pairs": 120, "positives": 20, "queries": 20,
                                 "negatives_per_query": [5, 5]}
assert info["link"]["test"]["queries"] == 10 and info["link"]["test"]["pairs"] == 40
print("DGL interop: OK")
