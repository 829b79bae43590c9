"""tools/crossover.py's tables from bench modes JSON files written here (no bench run): the
feature configuration (width and dtype) as an axis of crossover.csv and of the report, the exact
matching of run tags, and the size table's runs at the stored and at a --feature-bytes width.
Run by ctest (label tools) with the repository root as argument."""
import contextlib
import csv
import io
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else ".")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import crossover  # noqa: E402
import machine_file  # noqa: E402

MACHINES = [e["name"] for e in machine_file.load_base_entries(
    os.path.join(ROOT, "bench", "machines.yaml"))]
STAGES = ["sample", "feature_load", "forward", "backward", "communication", "optimizer"]


def seconds(total):
    """A modelled stage split of `total` seconds (all of it in forward)."""
    return {**{s: 0.0 for s in STAGES}, "forward": total, "total": total}


def run_json(dataset, num_nodes, seeds, pes, row_bytes, element, coop_s, indep_s,
             override=False, names=MACHINES):
    """A bench modes JSON with the fields tools/crossover.py reads: every machine in `names`
    models coop_s / indep_s seconds per batch at every P; 1000 feature rows of row_bytes bytes
    counted per batch."""
    rows = []
    for p in pes:
        for mode, total in (("cooperative", coop_s), ("independent", indep_s)):
            rows.append({"mode": mode, "pes": p,
                         "work_per_batch": {"feature_rows": 1000.0,
                                            "feature_bytes": 1000.0 * row_bytes},
                         "modelled": [{"machine": n, "seconds_per_batch": seconds(total)}
                                      for n in names]})
    source = ("--feature-bytes override (modelled only)" if override
              else "the dataset's stored dtype (the runtime's)")
    return {"bench": "modes", "dataset": dataset, "dataset_dir": f"build/{dataset}",
            "num_nodes": num_nodes, "num_edges": 16 * num_nodes, "command": f"bench {dataset}",
            "seconds": 60.0, "batch_per_pe": seeds,
            "cost_model": {"feature_bytes": element, "feature_bytes_source": source},
            "rows": rows}


class Crossover(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "results")
        self.runs = os.path.join(self.out, "crossover_runs")
        os.makedirs(self.runs)
        variants = MACHINES + [crossover.variant_name(m, k, f) for m in MACHINES
                               for k in crossover.ASSUMPTIONS for f in (0.5, 2.0)]
        for h in crossover.HIDDEN:
            for s in crossover.SEEDS_PER_PE:
                # 128 float32 (512 bytes per row): cooperative 2 ms, independent 3 ms.
                self.write(f"modes_g20-labor-h{h}-s{s}.json",
                           run_json("g20", 1 << 20, s, crossover.PES, 512, 4, 0.002, 0.003,
                                    names=variants))
                # 768 float16 (1536 bytes per row): cooperative 4 ms, independent 5 ms.
                self.write(f"modes_g20-labor-f768-float16-h{h}-s{s}.json",
                           run_json("g20", 1 << 20, s, crossover.PES, 1536, 2, 0.004, 0.005))
        for s in crossover.SEEDS_PER_PE:
            # 2^22, 128 float32: 1 ms against 1.1 ms; 2^24, 128 float16: 1 ms against 0.8 ms at
            # the stored width, 1 ms against 0.9 ms at --feature-bytes 4.
            self.write(f"modes_g22-labor-h1024-s{s}-p8-size.json",
                       run_json("g22", 1 << 22, s, [8], 512, 4, 0.001, 0.0011))
            self.write(f"modes_g24-labor-h1024-s{s}-p8-size.json",
                       run_json("g24", 1 << 24, s, [8], 256, 2, 0.001, 0.0008))
            self.write(f"modes_g24-labor-h1024-s{s}-p8-size-fb4.json",
                       run_json("g24", 1 << 24, s, [8], 256, 4, 0.001, 0.0009, override=True))
        with open(os.path.join(self.out, "crossover.md"), "w") as f:
            f.write("# old\n\n## Reading\n\nHand-written reading.\n")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, j):
        with open(os.path.join(self.runs, name), "w") as f:
            json.dump(j, f)

    def tables(self, *extra):
        with contextlib.redirect_stdout(io.StringIO()):
            crossover.main(["--dataset", "build/g20", "--out", self.out, "--skip-runs", *extra])
        with open(os.path.join(self.out, "crossover.csv")) as f:
            grid = list(csv.DictReader(f))
        with open(os.path.join(self.out, "crossover_size.csv")) as f:
            size = list(csv.DictReader(f))
        with open(os.path.join(self.out, "crossover.md")) as f:
            return grid, size, f.read()

    def test_feature_configuration_is_an_axis(self):
        grid, _, md = self.tables()
        self.assertEqual(len(grid), 2 * 3 * 2 * len(MACHINES) * 3)
        # The --dataset grid first, then the tagged one, each from its own files.
        self.assertEqual((grid[0]["feature_width"], grid[0]["feature_dtype"]), ("128", "float32"))
        self.assertEqual((grid[-1]["feature_width"], grid[-1]["feature_dtype"]), ("768", "float16"))
        for r in grid:
            want = 1.5 if r["feature_width"] == "128" else 1.25
            self.assertAlmostEqual(float(r["ratio"]), want, places=12)
        for m in MACHINES:
            self.assertIn(f"### {m}, 128 float32 features", md)
            self.assertIn(f"### {m}, 768 float16 features", md)
        self.assertIn("| 768 float16 | " + MACHINES[0] + " | cooperative |", md)
        self.assertIn("Hand-written reading.", md)

    def test_size_runs_at_the_stored_and_the_modelled_width(self):
        _, size, md = self.tables()
        self.assertEqual(len(size), 6 * len(MACHINES))
        got = [(r["dataset"], r["feature_width"], r["feature_dtype"], r["modelled_feature_bytes"],
                r["seeds_per_pe"]) for r in size[::len(MACHINES)]]
        self.assertEqual(got, [("g22", "128", "float32", "4", "512"),
                               ("g22", "128", "float32", "4", "1024"),
                               ("g24", "128", "float16", "2", "512"),
                               ("g24", "128", "float16", "2", "1024"),
                               ("g24", "128", "float16", "4", "512"),
                               ("g24", "128", "float16", "4", "1024")])
        self.assertEqual([round(float(r["ratio"]), 9) for r in size[::len(MACHINES)]],
                         [1.1, 1.1, 0.8, 0.8, 0.9, 0.9])
        self.assertTrue(all(float(r["ratio_grid_graph"]) == 1.5 for r in size))
        self.assertIn("| g24 | 128 float16 | 4 | ", md)

    def test_a_modelled_width_run_alone_names_its_stored_bytes(self):
        for s in crossover.SEEDS_PER_PE:
            os.remove(os.path.join(self.runs, f"modes_g24-labor-h1024-s{s}-p8-size.json"))
        _, size, md = self.tables()
        g24 = [r for r in size if r["dataset"] == "g24"]
        self.assertEqual(len(g24), 2 * len(MACHINES))
        self.assertTrue(all(r["feature_width"] == "0" and r["stored_row_bytes"] == "256.0"
                            for r in g24))
        self.assertIn("| g24 | 256 bytes per row | 4 | ", md)

    def test_a_tag_matches_exactly(self):
        # h64-s512 is a suffix of f768-float16-h64-s512: only the untagged file is its run.
        self.assertEqual(crossover.load_run(self.runs, "h64-s512")["cost_model"]["feature_bytes"],
                         4)
        os.remove(os.path.join(self.runs, "modes_g20-labor-h64-s512.json"))
        with self.assertRaises(SystemExit) as e:
            crossover.load_run(self.runs, "h64-s512")
        self.assertIn("tag h64-s512", str(e.exception))

    def test_a_tag_that_disagrees_with_the_counted_rows_is_refused(self):
        # Tagged 768 wide, but 512-byte rows of 2-byte elements: 256 wide.
        self.write("modes_g20-labor-f768-float16-h64-s512.json",
                   run_json("g20", 1 << 20, 512, crossover.PES, 512, 2, 0.004, 0.005))
        with self.assertRaises(SystemExit) as e:
            self.tables()
        self.assertIn("256-wide", str(e.exception))

    def test_size_feature_bytes_pairs_with_size_datasets(self):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as e:
            crossover.main(["--dataset", "build/g20", "--out", self.out, "--skip-runs",
                            "--size-dataset", "a", "--size-dataset", "b",
                            "--size-feature-bytes", "4"])
        self.assertEqual(e.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
