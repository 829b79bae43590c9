#!/usr/bin/python3
"""Writes the seed corpus of tests/fuzz/corpus/<target>/ (tests/fuzz/README.md): small valid and
near-valid inputs per reader. Deterministic; rerun after changing it and commit the output.
Regression inputs found by fuzzing live beside the seeds as crash-*/regress-* files and are not
written here (they come from libFuzzer), except the crafted declared-size cases
(runtime/core/memory_limit.hpp).
Usage: tests/fuzz/make_corpus.py [OUT_DIR]  (default: tests/fuzz/corpus next to this script)."""
import gzip
import io
import os
import struct
import sys
import zipfile
import zlib

import numpy as np

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy(a, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, a)
    else:
        np.lib.format.write_array(b, np.asanyarray(a), version=version)
    return b.getvalue()


def npy_raw(dict_text, data=b"", major=1):
    h = dict_text
    prefix = 10 if major == 1 else 12
    while (prefix + len(h) + 1) % 16:
        h += " "
    h += "\n"
    ln = struct.pack("<H", len(h)) if major == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([major, 0]) + ln + h.encode() + data


def container(files):
    out = b""
    for name, data in files:
        if isinstance(data, str):
            data = data.encode()
        out += b"=== " + name.encode() + b"\n" + data + b"\n"
    return out


def npz(members, compressed=False):
    b = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(b, **members)
    return b.getvalue()


# ---- npy
put("npy", "f32_2d.npy", npy(np.arange(6, dtype=np.float32).reshape(2, 3)))
put("npy", "i64_1d.npy", npy(np.array([3, -1, 7], dtype=np.int64)))
put("npy", "bool.npy", npy(np.array([True, False, True])))
put("npy", "u8.npy", npy(np.array([0, 255], dtype=np.uint8)))
put("npy", "f64_fortran_3d.npy", npy(np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4))))
put("npy", "i32_v2.npy", npy(np.arange(4, dtype=np.int32), version=(2, 0)))
put("npy", "scalar.npy", npy(np.float32(1.5)))
put("npy", "empty_0x3.npy", npy(np.zeros((0, 3), dtype=np.float32)))
put("npy", "u16.npy", npy(np.array([1, 65535], dtype=np.uint16)))
put("npy", "big_endian.npy", npy(np.array([1, 2], dtype=">i4")))
put("npy", "object.npy", npy_raw("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8))
put("npy", "truncated.npy", npy(np.arange(10, dtype=np.int64))[:-5])
put("npy", "trailing.npy", npy(np.arange(2, dtype=np.int64)) + b"xx")
put("npy", "float_fraction_to_int.npy", npy(np.array([1.5, np.nan], dtype=np.float32)))
# Declared-size check: a header that claims 10^16 bytes (1.25e15 float64) with no data.
put("npy", "size_claims_1e16_bytes.npy",
    npy_raw("{'descr': '<f8', 'fortran_order': False, 'shape': (1250000000000000,), }"))
put("npy", "shape_overflow.npy",
    npy_raw("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"))

# ---- npz
edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0]], dtype=np.int64)
put("npz", "dense.npz", npz({"edges": edges, "x": np.ones((4, 2), np.float32),
                            "y": np.array([0, 1, 0, 1]), "train_mask": np.array([1, 1, 0, 0], bool),
                            "val_mask": np.array([0, 0, 1, 0], bool), "test_mask": np.array([0, 0, 0, 1], bool)}))
put("npz", "compressed_edge_index.npz", npz({"edge_index": edges.T.copy(), "labels": np.array([0, 1, 2, 0])}, True))
put("npz", "sparse_attr_adj.npz", npz({
    "adj_data": np.ones(4, np.float32), "adj_indices": np.array([1, 2, 3, 0]), "adj_indptr": np.array([0, 1, 2, 3, 4]),
    "adj_shape": np.array([4, 4]), "adj_format": np.array(b"csr"),
    "attr_data": np.array([1.0, 2.0, 3.0], np.float32), "attr_indices": np.array([0, 2, 1]),
    "attr_indptr": np.array([0, 1, 1, 2, 3]), "attr_shape": np.array([4, 3]), "attr_format": np.array("csc"),
    "labels": np.array([0, 1, 1, 0]), "train_masks": np.array([[1, 0, 0, 0], [0, 1, 0, 0]], np.uint8)}, True))
put("npz", "scipy_coo.npz", npz({"data": np.ones(3, np.float32), "row": np.array([0, 1, 2]), "col": np.array([1, 2, 0]),
                                 "shape": np.array([3, 3]), "format": np.array(b"coo")}))
put("npz", "scipy_csr.npz", npz({"data": np.ones(3, np.float32), "indices": np.array([1, 2, 0]),
                                 "indptr": np.array([0, 1, 2, 3]), "shape": np.array([3, 3]), "format": np.array(b"csr")}, True))
put("npz", "bad_indptr.npz", npz({"data": np.ones(2, np.float32), "indices": np.array([1, 2]),
                                  "indptr": np.array([0, 3, 2, 2]), "shape": np.array([3, 3])}))
put("npz", "not_a_zip.npz", b"PK\x03\x04garbage")


def zip_with_declared_size(size, method=zipfile.ZIP_DEFLATED):
    """A one-member zip whose local and central headers claim `size` uncompressed bytes."""
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", method) as z:
        z.writestr("x.npy", npy(np.arange(4, dtype=np.int64)))
    raw = bytearray(b.getvalue())
    lh = raw.find(b"PK\x03\x04")
    struct.pack_into("<I", raw, lh + 22, size)
    ch = raw.find(b"PK\x01\x02")
    struct.pack_into("<I", raw, ch + 24, size)
    return bytes(raw)


# Declared-size check: members that declare far more bytes than they hold.
put("npz", "member_declares_4gb_deflated.npz", zip_with_declared_size(0xFFFFFFF0))
put("npz", "member_declares_4gb_stored.npz", zip_with_declared_size(0xFFFFFFF0, zipfile.ZIP_STORED))
put("npz", "member_declares_more_stored.npz", zip_with_declared_size(200, zipfile.ZIP_STORED))

# ---- metadata (over the fixed arrays of fuzz_common.hpp write_fixed_arrays)
NC = """dataset_name: fuzz
graph:
  nodes:
    - num: {num}
  edges:
    - format: {eformat}
      path: {epath}
feature_data:
  - domain: node
    name: feat
    format: numpy
    in_memory: true
    path: feat.npy
tasks:
  - name: node_classification
    num_classes: 3
    train_set:
      - data:
          - name: seeds
            format: numpy
            path: train_seeds.npy
          - name: labels
            format: numpy
            path: train_labels.npy
    validation_set:
      - data:
          - name: seeds
            format: numpy
            path: valid_seeds.npy
          - name: labels
            format: numpy
            path: valid_labels.npy
    test_set:
      - data:
          - name: seeds
            format: numpy
            path: test_seeds.npy
          - name: labels
            format: numpy
            path: test_labels.npy
"""
LP = """  - name: link_prediction
    item_begin: 2
    item_end: 8
    train_set:
      - data:
          - name: seeds
            format: numpy
            path: pairs.npy
    test_set:
      - data:
          - name: seeds
            format: numpy
            path: pairs.npy
          - name: labels
            format: numpy
            path: pair_labels.npy
          - name: indexes
            format: numpy
            path: pair_indexes.npy
"""
put("metadata", "nc.yaml", NC.format(num=8, eformat="numpy", epath="edges.npy"))
put("metadata", "nc_csv.yaml", NC.format(num=8, eformat="csv", epath="edges.csv"))
put("metadata", "nc_lp.yaml", NC.format(num=8, eformat="numpy", epath="edges.npy") + LP)
put("metadata", "label_feature.yaml", """dataset_name: f
graph: {nodes: [{num: 8}], edges: [{format: numpy, path: edges.npy}]}
feature_data:
  - {domain: node, name: feat, format: numpy, in_memory: false, path: feat.npy}
  - {domain: node, name: label, format: numpy, in_memory: true, path: label.npy}
tasks: [{name: nc, num_classes: 3}]
""")
put("metadata", "negative_dsts.yaml", """graph: {nodes: [{num: 8}], edges: [{format: numpy, path: edges.npy}]}
tasks:
  - name: lp
    train_set: [{data: [{name: node_pairs, format: numpy, path: pairs.npy}]}]
    validation_set: [{data: [{name: seeds, format: numpy, path: pairs.npy}, {name: negative_dsts, format: numpy, path: neg.npy}]}]
""")
put("metadata", "preprocessed.yaml", "dataset_name: x\ngraph_topology: {type: FusedCSCSamplingGraph, path: g.pt}\n")
put("metadata", "hetero.yaml", """graph:
  nodes: [{type: a, num: 4}, {type: b, num: 4}]
  edges: [{type: "a:r:b", format: numpy, path: edges.npy}]
""")
put("metadata", "nested_flow.yaml", "graph: " + "[" * 64 + "]" * 64 + "\n")
# Declared-size check: 2^40 nodes over a 10-edge file.
put("metadata", "nodes_2pow40.yaml", NC.format(num=2 ** 40, eformat="numpy", epath="edges.npy"))
put("metadata", "nodes_int64_max.yaml", """graph: {nodes: [{num: 9223372036854775807}, {num: 9223372036854775807}], edges: [{format: csv, path: edges.csv}]}\n""")

# ---- ogb (containers)
OGB = [("raw/num-node-list.csv", "4\n"), ("raw/edge.csv", "0,1\n1,2\n2,3\n"),
       ("raw/num-edge-list.csv", "3\n"), ("raw/node-feat.csv", "0.5,1\n1,2\n-3e2,4\n5,nan\n"),
       ("raw/node-label.csv", "0\n1\nnan\n2\n"), ("split/s/train.csv", "0\n1\n"),
       ("split/s/valid.csv", "3\n"), ("split/s/test.csv", "")]
put("ogb", "full.txt", container(OGB))
put("ogb", "gzip.txt", container([("raw/num-node-list.csv.gz", gzip.compress(b"3\n", mtime=0)),
                                  ("raw/edge.csv.gz", gzip.compress(b"0,1\n2,1\n", mtime=0))]))
put("ogb", "mixed_directions.txt", container([("raw/num-node-list.csv", "3\n"), ("raw/edge.csv", "0,1\n2,1\n1,0\n")]))
put("ogb", "bad_edge.txt", container([("raw/num-node-list.csv", "3\n"), ("raw/edge.csv", "0;1\n")]))
put("ogb", "two_splits.txt", container(OGB[:2] + [("split/a/train.csv", "0\n"), ("split/b/train.csv", "1\n")]))
# Declared-size check: a node count of 2^50 with a 1-edge file.
put("ogb", "node_count_2pow50.txt", container([("raw/num-node-list.csv", f"{2 ** 50}\n"), ("raw/edge.csv", "0,1\n")]))

# ---- snap
put("snap", "plain.txt", "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n1\t2\n2\t0\n")
put("snap", "commas_header_crlf.txt", "id_1,id_2\r\n0,1\r\n1,3\r\n% comment\r\n\r\n3,0\r\n")
put("snap", "weights.txt", "0 1 0.5\n1 2 2\n2 2 1\n")
put("snap", "gzip.txt.gz", gzip.compress(b"0 1\n1 0\n", mtime=0))
put("snap", "adjacency_list.txt", "0 1 2 3\n")
put("snap", "negative.txt", "0 -1\n")
# Declared-size check: one edge whose ids imply |V| = 10^15, and the largest int64 id.
put("snap", "id_1e15.txt", "0 1000000000000000\n")
put("snap", "id_int64_max.txt", "0 9223372036854775807\n")

# ---- lightgcn
put("lightgcn", "small.txt", container([("train.txt", "0 0 1 2\n1 1\n2\n3 0 3\n"), ("test.txt", "0 3\n3 1 2\n")]))
put("lightgcn", "out_of_order.txt", container([("train.txt", "1 0\n0 1\n"), ("test.txt", "0 1\n")]))
put("lightgcn", "empty_test.txt", container([("train.txt", "0 5\n"), ("test.txt", "\n")]))
# Declared-size check: an item id of 10^15.
put("lightgcn", "item_1e15.txt", container([("train.txt", "0 1000000000000000\n"), ("test.txt", "0 1\n")]))
put("lightgcn", "item_int64_max.txt", container([("train.txt", "0 9223372036854775807\n"), ("test.txt", "0 1\n")]))

# ---- musae
put("musae", "small.txt", container([
    ("g_edges.csv", "id_1,id_2\n0,1\n1,2\n2,3\n"),
    ("g_target.csv", "id,name,target\n0,\"a, b\",1\n1,b,0\n2,c,1\n3,\"d \"\"q\"\"\",0\n"),
    ("g_features.json", '{"0": [1, 5], "1": [], "2": [5, 5], "3": [0]}')]))
put("musae", "string_labels.txt", container([
    ("p_edges.csv", "id_1,id_2\n0,1\n"),
    ("p_target.csv", "id,new_id,page_type\n7,1,tvshow\n8,0,company\n"),
    ("p_features.json", '{"0": [2], "1": [0]}')]))
put("musae", "original_names.txt", container([
    ("edges.csv", "id_1,id_2\n0,1\n1,2\n"),
    ("target.csv", "id,facebook_id,page_name,page_type\n0,10,a,tvshow\n1,11,b,company\n2,12,c,tvshow\n"),
    ("new_target.csv", "id,target\n0,1\n"),
    ("features.json", '{"0": [1], "2": [0, 0]}')]))
put("musae", "bad_json.txt", container([("g_edges.csv", "id_1,id_2\n0,1\n"), ("g_target.csv", "id,target\n0,1\n1,0\n"),
                                        ("g_features.json", '{"0": [1,')]))
put("musae", "feature_id_huge.txt", container([("g_edges.csv", "id_1,id_2\n0,1\n"), ("g_target.csv", "id,target\n0,1\n1,0\n"),
                                               ("g_features.json", '{"0": [9223372036854775807]}')]))

# ---- partition
parts = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int32)
put("partition", "random.txt", container([("parts.npy", npy(parts)), ("summary.json", '{"scheme": "random", "num_parts": 3}')]))
put("partition", "int64_no_summary.txt", container([("parts.npy", npy(parts.astype(np.int64)))]))
put("partition", "out_of_range.txt", container([("parts.npy", npy(np.array([0, 1, 2, 3, 0, 1, 2, 0], np.int32)))]))
put("partition", "wrong_length.txt", container([("parts.npy", npy(parts[:5])), ("summary.json", "[1, 2")]))
put("partition", "part1_empty.txt", container([("parts.npy", npy(np.zeros(8, np.int32))), ("summary.json", '{"scheme": 3}')]))

# ---- link: byte 0 picks the array (link_fuzz.cpp), the rest is the .npy
pairs = np.array([[0, 1], [0, 5], [2, 3], [2, 7]], dtype=np.int64)
put("link", "0_train_seeds.bin", b"\x00" + npy(pairs))
put("link", "1_valid_seeds.bin", b"\x01" + npy(pairs[:, ::-1].copy()))
put("link", "2_valid_neg.bin", b"\x02" + npy(np.array([[3, 4], [5, 6], [7, 0], [1, 2]], dtype=np.int64)))
put("link", "3_test_seeds.bin", b"\x03" + npy(pairs.astype(np.int32)))
put("link", "4_test_labels.bin", b"\x04" + npy(np.array([1, 0, 1, 1], dtype=np.int64)))
put("link", "5_test_indexes.bin", b"\x05" + npy(np.array([0, 0, 1, 2], dtype=np.int64)))
put("link", "3_test_seeds_out_of_range.bin", b"\x03" + npy(np.array([[0, 8], [1, 2], [3, 4], [5, 6]], dtype=np.int64)))
put("link", "2_neg_k0.bin", b"\x02" + npy(np.zeros((4, 0), dtype=np.int64)))
# byte 0 in 6..11: the typed directory (item sets typed by relation, 8 vertices per type)
put("link", "typed_0_train_seeds.bin", b"\x06" + npy(pairs))
put("link", "typed_1_valid_seeds.bin", b"\x07" + npy(pairs[:, ::-1].copy()))
put("link", "typed_2_neg_k0.bin", b"\x08" + npy(np.zeros((4, 0), dtype=np.int64)))
