"""tools/device_check.sh without a GPU: the plan fits the budget, and a dry run (GPU steps
faked) names a failing test and quotes its first lines, quotes compiler errors, reports
compute-sanitizer as unavailable instead of failing, and leaves at most 8 files in OUT (what a
GPU machine sends back). Run by ctest (label tools) with the repository root as argument."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else ".")
SCRIPT = os.path.join(ROOT, "tools", "device_check.sh")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import device_check  # noqa: E402


def run(*args):
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


class Plan(unittest.TestCase):
    def test_core_caps_fit_480_seconds_with_the_build(self):
        p = run("--plan")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        caps = {}
        for ln in p.stdout.splitlines():
            m = re.match(r"^(\w+)\s+(\d+)\s+(\[extra\] )?", ln)
            if m:
                caps[m.group(1)] = (int(m.group(2)), bool(m.group(3)))
        self.assertIn("build", caps)
        self.assertFalse(caps["build"][1], "the build is a core step")
        core = sum(c for c, extra in caps.values() if not extra)
        self.assertLessEqual(core, 480)
        self.assertGreater(core, 0)


class DryRun(unittest.TestCase):
    def dry(self, *extra):
        d = tempfile.mkdtemp()
        out, logs = os.path.join(d, "out"), os.path.join(d, "logs")
        p = run("--dry-run", "--out", out, "--logs", logs, *extra)
        return p, out

    def test_a_failing_fake_test_is_named_and_quoted(self):
        p, out = self.dry()
        self.assertEqual(p.returncode, 1, "a failing test fails the check")
        text = open(os.path.join(out, "summary.txt")).read()
        self.assertIn("FAILED DryRun.FakeFailureIsQuoted", text)
        self.assertIn("fake_gpu_test.cpp:42: Failure", text)
        self.assertIn("compute-sanitizer cannot run here", text)
        self.assertRegex(text, r"memcheck_kernels\s+skipped \(compute-sanitizer unavailable\)")
        for fact in ("kernel", "nvcc", "cmake", "host BLAS"):
            self.assertRegex(text, rf"(?m)^{re.escape(fact)}\s+\S")
        s = json.load(open(os.path.join(out, "summary.json")))
        self.assertEqual(s["result"], "FAILED")
        self.assertEqual([t["test"] for t in s["failed_tests"]], ["DryRun.FakeFailureIsQuoted"])
        files = [f for _, _, fs in os.walk(out) for f in fs]
        self.assertLessEqual(len(files), 8, files)
        self.assertIn("device_check_logs.tar.gz", files)

    def test_a_compiler_error_is_quoted_and_later_steps_are_skipped(self):
        p, out = self.dry("--fake-build-error")
        self.assertEqual(p.returncode, 1)
        text = open(os.path.join(out, "summary.txt")).read()
        self.assertIn('error: identifier "fake_symbol" is undefined', text)
        self.assertRegex(text, r"gpu_tests\s+skipped \(build failed\)")


class CtestParsing(unittest.TestCase):
    def test_failures_timeouts_and_crashes_are_failures_with_their_first_lines(self):
        log = "\n".join([
            "    Start 1: A.Passes",
            "1/4 Test #1: A.Passes .........................   Passed    0.10 sec",
            "2/4 Test #2: Usecases/B.Crashes/0 .............***Exception: SegFault  0.2 sec",
            "Running main() from gmock_main.cc",
            "terminate called after throwing an instance of 'coopgnn::cuda_error'",
            "3/4 Test #3: C.Hangs ..........................***Timeout  90.01 sec",
            "4/4 Test #4: D.Fails ..........................***Failed    0.30 sec",
            "[ RUN      ] D.Fails",
            "x.cpp:1: Failure",
            "",
            "The following tests FAILED:",
        ])
        passed, failed = device_check.parse_ctest(log)
        self.assertEqual(passed, ["A.Passes"])
        self.assertEqual([n for n, _ in failed], ["Usecases/B.Crashes/0", "C.Hangs", "D.Fails"])
        self.assertEqual(failed[0][1], ["terminate called after throwing an instance of "
                                        "'coopgnn::cuda_error'"])
        self.assertEqual(failed[2][1], ["x.cpp:1: Failure"])
        self.assertIn("Timeout", failed[1][1][0])  # no output: the status line itself


if __name__ == "__main__":
    unittest.main()
