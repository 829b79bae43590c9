#!/usr/bin/env python3
"""OGB's binary layout (ogbn-papers100M) and OGB-LSC's MAG240M layout written by NumPy itself.

The C++ tests (tests/tools/ogb_layouts_test.cpp) write these layouts byte for byte as NumPy
would. This test has NumPy write them, with the calls the releases were made with
(numpy.savez_compressed for raw/data.npz and raw/node-label.npz, gzip'd CSV split files under
split/time/, numpy.save for MAG240M's processed/ arrays), then runs `coopgnn convert`,
`coopgnn info --json` and one `coopgnn train` epoch on each output, and checks the converted
arrays against what is computed here from the inputs (the symmetrized, deduplicated edge set;
the features element for element, at their stored dtype; labels and split).

Usage: ogb_numpy_layouts_test.py COOPGNN_BINARY WORK_DIR. Exit status 0 on success, 1 on a
failed check (the message says which), 77 when NumPy is missing (ctest's skip code).
split_dict.pt (MAG240M's split, a torch pickle) is not written: the converter reads the
split exported as split/{train,valid}.npy, as its --help says; torch is not a dependency.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
except ImportError:  # pragma: no cover - depends on the machine
    print("skip: NumPy is not installed (tools/setup.sh installs python3-numpy)")
    sys.exit(77)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}")
    return p.stdout


def load_metadata(out):
    # The dataset's arrays by the names metadata.yaml gives them, found on disk (no YAML parser
    # is needed: the paths are the ones convert writes).
    return {os.path.relpath(os.path.join(r, f), out): os.path.join(r, f)
            for r, _, fs in os.walk(out) for f in fs if f.endswith(".npy")}


def symmetric_edge_set(src, dst):
    pairs = set(zip(src.tolist(), dst.tolist())) | set(zip(dst.tolist(), src.tolist()))
    return pairs


def check_train(coopgnn, out, extra):
    text = run([coopgnn, "train", "--dataset", out, "--epochs", "1", "--batch-size", "8",
                "--fanouts", "3,3", "--hidden", "8", "--pes", "2", "--no-progress"] + extra)
    if "test" not in text:
        fail(f"train on {out} printed no test metric:\n{text}")


def ogb_binary(coopgnn, work, half):
    rng = np.random.default_rng(7)
    n, e, f = 40, 120, 5
    src = rng.integers(0, n, e, dtype=np.int64)
    dst = rng.integers(0, n, e, dtype=np.int64)
    edge_index = np.stack([src, dst])
    feat = rng.standard_normal((n, f)).astype(np.float16 if half else np.float32)
    labels = rng.integers(0, 4, n).astype(np.float64)
    labels[[5, 6]] = np.nan  # unlabelled, as papers100M's labels are
    root = os.path.join(work, "papers16" if half else "papers32")
    os.makedirs(os.path.join(root, "raw"))
    np.savez_compressed(os.path.join(root, "raw", "data.npz"), edge_index=edge_index,
                        node_feat=feat, node_year=rng.integers(2000, 2020, (n, 1)),
                        num_nodes_list=np.array([n]), num_edges_list=np.array([e]))
    np.savez_compressed(os.path.join(root, "raw", "node-label.npz"),
                        node_label=labels.reshape(n, 1))
    labelled = np.flatnonzero(~np.isnan(labels))
    split = {"train": labelled[:20], "valid": labelled[20:29], "test": labelled[29:]}
    os.makedirs(os.path.join(root, "split", "time"))
    for name, ids in split.items():
        with gzip.open(os.path.join(root, "split", "time", name + ".csv.gz"), "wt") as fh:
            fh.write("".join(f"{i}\n" for i in ids))

    # The edges are stored in both directions (src < dst and src > dst): the converter keeps
    # them as stored unless asked (--symmetrize, as the paper used papers100M); the float32 case
    # asks, the float16 case does not.
    out = root + "-out"
    run([coopgnn, "convert", root, out] + ([] if half else ["--symmetrize"]))
    info = json.loads(run([coopgnn, "info", out, "--json"]))
    arrays = load_metadata(out)

    got = np.load(arrays[os.path.join("edges", "edges.npy")])
    want = set(zip(src.tolist(), dst.tolist())) if half else symmetric_edge_set(src, dst)
    if set(zip(got[0].tolist(), got[1].tolist())) != want or got.shape[1] != len(want):
        fail(f"{out}: the edges are not the {'' if half else 'symmetrized, '}deduplicated input "
             f"({got.shape[1]} stored, {len(want)} expected)")
    x = np.load(arrays[os.path.join("data", "feat.npy")])
    if x.dtype != feat.dtype or not np.array_equal(x, feat):
        fail(f"{out}: feat.npy is {x.dtype} {x.shape}, expected the input's {feat.dtype} "
             f"{feat.shape} element for element")
    for name, ids in split.items():
        key = os.path.join("set", f"{name}_seeds.npy")
        if key not in arrays:
            fail(f"{out}: no {key}")
        if not np.array_equal(np.sort(np.load(arrays[key])), np.sort(ids)):
            fail(f"{out}: {key} differs from split/time/{name}.csv.gz")
        lab = np.load(arrays[os.path.join("set", f"{name}_labels.npy")])
        if not np.array_equal(lab, labels[np.load(arrays[key])].astype(lab.dtype)):
            fail(f"{out}: set/{name}_labels.npy are not node-label.npz's labels of the seeds")
    if json.dumps(info).find("float16" if half else "float32") < 0:
        fail(f"{out}: info --json does not name the feature dtype {feat.dtype}: {info}")
    check_train(coopgnn, out, [])
    print(f"ok: OGB binary layout, {feat.dtype} node_feat: {len(want)} edges, features equal")


def mag240m(coopgnn, work):
    rng = np.random.default_rng(11)
    papers, authors, insts, f = 30, 12, 3, 6
    root = os.path.join(work, "mag240m_kddcup2021")
    proc = os.path.join(root, "processed")
    rels = {
        "paper___cites___paper": (papers, papers, 60),
        "author___writes___paper": (authors, papers, 40),
        "author___affiliated_with___institution": (authors, insts, 12),
    }
    edges = {}
    for name, (ns, nd, e) in rels.items():
        ei = np.stack([rng.integers(0, ns, e, dtype=np.int64),
                       rng.integers(0, nd, e, dtype=np.int64)])
        # The converter counts authors and institutions as 1 + the largest id: every id appears.
        if name == "author___writes___paper":
            ei[0, :ns] = np.arange(ns)
        if name == "author___affiliated_with___institution":
            ei[0, :ns] = np.arange(ns)
            ei[1, :nd] = np.arange(nd)
        edges[name] = ei
        os.makedirs(os.path.join(proc, name))
        np.save(os.path.join(proc, name, "edge_index.npy"), ei)
    os.makedirs(os.path.join(proc, "paper"))
    feat = rng.standard_normal((papers, f)).astype(np.float16)
    labels = rng.integers(0, 5, papers).astype(np.float32)
    labels[20:] = np.nan
    np.save(os.path.join(proc, "paper", "node_feat.npy"), feat)
    np.save(os.path.join(proc, "paper", "node_label.npy"), labels)
    np.save(os.path.join(proc, "paper", "node_year.npy"), rng.integers(2000, 2021, papers))
    os.makedirs(os.path.join(root, "split"))
    np.save(os.path.join(root, "split", "train.npy"), np.arange(0, 14))
    np.save(os.path.join(root, "split", "valid.npy"), np.arange(14, 20))

    out = os.path.join(work, "mag-out")
    run([coopgnn, "convert", root, out])
    info = json.loads(run([coopgnn, "info", out, "--json"]))
    linked = os.path.join(out, "data", "paper_feat.npy")
    if not os.path.islink(linked) or os.path.realpath(linked) != os.path.realpath(
            os.path.join(proc, "paper", "node_feat.npy")):
        fail(f"{linked}: not a link to the release's float16 node_feat.npy")
    x = np.load(linked)
    if x.dtype != np.float16 or not np.array_equal(x, feat):
        fail(f"{linked}: {x.dtype} {x.shape}, expected the release's float16 {feat.shape}")
    def stored(name):
        a = np.load(os.path.join(out, "edges", name + ".npy"))
        return set(zip(a[0].tolist(), a[1].tolist())), a.shape[1]
    cites, writes = edges["paper___cites___paper"], edges["author___writes___paper"]
    affil = edges["author___affiliated_with___institution"]
    expected = {
        "paper__cites__paper": symmetric_edge_set(cites[0], cites[1]),
        "author__writes__paper": set(zip(writes[0].tolist(), writes[1].tolist())),
        "paper__rev_writes__author": set(zip(writes[1].tolist(), writes[0].tolist())),
        "author__affiliated_with__institution": set(zip(affil[0].tolist(), affil[1].tolist())),
        "institution__rev_affiliated_with__author": set(zip(affil[1].tolist(), affil[0].tolist())),
    }
    for name, want in expected.items():
        got, count = stored(name)
        if got != want or count != len(want):
            fail(f"{out}: edges/{name}.npy holds {count} edges, expected the {len(want)} of the "
                 "input relation (cites symmetrized, the others deduplicated, rev_* reversed)")
    text = json.dumps(info)
    for t in ("paper", "author", "institution", "float16"):
        if t not in text:
            fail(f"{out}: info --json does not name {t}: {text[:400]}")
    check_train(coopgnn, out, ["--model", "rgcn"])
    print(f"ok: MAG240M layout: {papers} papers, float16 features linked, R-GCN trained")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    coopgnn, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ogb_binary(coopgnn, work, half=False)
    ogb_binary(coopgnn, work, half=True)
    mag240m(coopgnn, work)
    print("PASS ogb_numpy_layouts")


if __name__ == "__main__":
    main()
