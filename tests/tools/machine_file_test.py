"""The device check's machine file without a GPU: a faked microbench.json (plausible H100
figures written here) goes through tools/machine_file.py; `coopgnn bench modes --machine` reads
the result on the bundled Cora and its JSON carries the written figures. Run by ctest (label
tools) with the repository root and the coopgnn binary as arguments."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else ".")
COOPGNN = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build/default/coopgnn")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import machine_file  # noqa: E402

# Google Benchmark JSON rows as coopgnn_microbench writes them on one H100 (values chosen here).
FAKE = {"benchmarks": [
    {"name": "gather_device/512/manual_time", "run_type": "iteration", "gather_GBps": 1100.0,
     "d2d_GBps": 1300.0, "ratio_vs_d2d": 0.846},
    {"name": "gather_device/1024/manual_time", "run_type": "iteration", "gather_GBps": 1200.0,
     "d2d_GBps": 1340.0, "ratio_vs_d2d": 0.896},
    {"name": "gather_uva/512/manual_time", "run_type": "iteration", "gather_GBps": 41.5,
     "h2d_GBps": 52.0, "ratio_vs_h2d": 0.798},
    {"name": "gather_uva/1024/manual_time", "run_type": "iteration", "gather_GBps": 47.0,
     "h2d_GBps": 53.0, "ratio_vs_h2d": 0.887},
    {"name": "alltoall/64/4/manual_time", "run_type": "iteration", "alltoall_GBps": 0.02,
     "us_per_call": 37.5, "pes": 4, "gpus": 1},
    {"name": "alltoall/1048576/4/manual_time", "run_type": "iteration", "alltoall_GBps": 600.0,
     "us_per_call": 21.0, "pes": 4, "gpus": 1},
    {"name": "kernel_launch/1000/manual_time", "run_type": "iteration", "us_per_kernel": 2.25,
     "us_launch_sync": 9.0},
    {"name": "BM_spmm_vs_cusparse", "run_type": "iteration", "speedup": 1.1},
]}


class MachineFile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.js = os.path.join(cls.tmp.name, "microbench.json")
        with open(cls.js, "w") as f:
            json.dump(FAKE, f)
        cls.yaml = os.path.join(cls.tmp.name, "measured.yaml")
        cls.entry = machine_file.write_machine_file(cls.js, cls.yaml, "NVIDIA H100 80GB HBM3",
                                                    date="2026-12-06")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_measured_and_kept_figures(self):
        e = self.entry
        self.assertEqual(e["name"], "measured-H100")
        f = e["figures"]
        # 2 x 1340 GB/s copied (read + write) over the H100 datasheet's 3350 GB/s.
        self.assertAlmostEqual(f["hbm_efficiency"]["value"], 0.8, places=4)
        self.assertEqual(f["hbm_gbps"]["value"], 3350)
        self.assertAlmostEqual(f["pcie_gbps"]["value"], 41.5)  # UVA rows of 512 bytes
        self.assertAlmostEqual(f["kernel_launch_us"]["value"], 2.25)
        for k in ("hbm_efficiency", "pcie_gbps", "kernel_launch_us"):
            self.assertNotIn("assumption", f[k], k)
            self.assertIn("measured by tools/device_check.py on 2026-12-06, NVIDIA H100 80GB HBM3",
                          f[k]["source"])
        self.assertIn("d2d_GBps = 1340", f["hbm_efficiency"]["source"])
        # One GPU: the collective figures and the link are kept, said so, with the raw values.
        for k in ("nccl_latency_us", "nccl_efficiency", "nvlink_gbps"):
            self.assertTrue(f[k].get("assumption"), k)
            self.assertIn("cannot be measured with one GPU", f[k]["source"])
        self.assertEqual(f["nccl_latency_us"]["value"], 20)
        self.assertIn("us_per_call = 37.5", f["nccl_latency_us"]["source"])
        self.assertEqual(f["fp32_tflops"]["value"], 67)
        self.assertNotIn("assumption", f["fp32_tflops"])  # a datasheet figure stays one
        self.assertTrue(f["flop_efficiency"]["assumption"])

    def test_written_file_reads_back(self):
        with open(self.yaml) as f:
            back = machine_file.parse_flow_layout(f.read())
        self.assertEqual(len(back), 1)
        self.assertEqual(back[0]["name"], "measured-H100")
        self.assertEqual(back[0]["gpus"], 8)
        self.assertEqual(back[0]["figures"]["kernel_launch_us"]["value"], 2.25)

    def test_reader_without_pyyaml(self):
        with open(os.path.join(ROOT, "bench", "machines.yaml")) as f:
            entries = machine_file.parse_flow_layout(f.read())
        self.assertEqual([e["name"] for e in entries], ["DGX-A100", "DGX-H100", "DGX-H200"])
        h100 = entries[1]
        self.assertEqual(h100["gpus"], 8)
        self.assertEqual(h100["figures"]["hbm_gbps"]["value"], 3350)
        self.assertTrue(h100["figures"]["nccl_latency_us"]["assumption"])
        self.assertEqual(len(h100["figures"]), 11)

    def test_bench_modes_reads_it(self):
        out = os.path.join(self.tmp.name, "modes")
        p = subprocess.run([COOPGNN, "bench", "modes", "--dataset", os.path.join(ROOT, "data",
                            "cora"), "--pes", "2", "--batches", "1", "--machine", self.yaml,
                            "--out", out], capture_output=True, text=True, timeout=240)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        js = [n for n in os.listdir(out) if n.endswith(".json")]
        self.assertEqual(len(js), 1, js)
        with open(os.path.join(out, js[0])) as f:
            j = json.load(f)
        text = json.dumps(j["cost_model"])
        self.assertIn("measured-H100", text)
        self.assertIn("measured by tools/device_check.py on 2026-12-06", text)
        ms = j["cost_model"]["machines"]
        self.assertEqual(len(ms), 1)
        figs = ms[0]["figures"]
        self.assertEqual(figs["kernel_launch_us"]["value"], 2.25)
        self.assertEqual(figs["pcie_gbps"]["value"], 41.5)
        self.assertAlmostEqual(figs["hbm_efficiency"]["value"], 0.8)
        self.assertFalse(figs["pcie_gbps"]["assumption"])
        self.assertTrue(figs["nccl_latency_us"]["assumption"])

    def test_missing_input_names_the_file(self):
        p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "machine_file.py"),
                            os.path.join(self.tmp.name, "absent.json"), self.yaml + ".x",
                            "--gpu-name", "NVIDIA H100"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("absent.json", p.stderr)


if __name__ == "__main__":
    unittest.main()
