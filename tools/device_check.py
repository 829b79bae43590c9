#!/usr/bin/env python3
"""usage: tools/device_check.sh [--plan] [--dry-run [--fake-build-error]] [--debug-sync]
                              [--budget SECONDS] [--out DIR] [--help]

The GPU check of coopgnn: one run on a machine with one CUDA GPU (written for one H100/H200),
at most --budget seconds (default 480) in all, the build included, so that 15 minutes of a lent
GPU hold one full run, a fix and a second run. Run it from the repository root; it needs nothing
outside the repository (standard-library python3, cmake, ninja, nvcc; the Debian packages and
RMM wheels of tools/device_deps.sh when carried as .devdeps/, unpacked into a private prefix,
never into /).

Steps, in order of value (`--plan` prints them with their caps and exits):
  preamble          nvidia-smi -L, driver and CUDA versions, uname -r, nvcc/cmake/ninja/g++
                    versions, the NCCL library, cudaDevAttrMemoryPoolsSupported
  sanitizer_probe   compute-sanitizer on a one-allocation probe; where it refuses the device
                    ('Device not supported', error 999) it is reported unavailable and every
                    sanitizer step is skipped instead of failing the run
  configure, build  cmake --preset cuda (sm_90; -DCOOPGNN_BLAS=OFF when blis.h is absent, and
                    the summary says which; -DCOOPGNN_RMM_ROOT=the carried RMM wheels), the GPU
                    test executables, coopgnn, microbenchmarks
  gpu_tests         ctest -L gpu: kernel parity, sampling, gather, cache, communicators (the
                    peer-copy one and NCCL with one rank), context
  e2e_tests         the trainer on the GPU: cooperative == single PE with 1, 2, 4 PEs sharing
                    the GPU, host == CUDA trainer, link prediction, device sampling protocols,
                    --prefetch == serial bit for bit
  e2e_cli           coopgnn compare on Cora with 4 PEs on the GPU; a one-PE NCCL training run
  memcheck_kernels  compute-sanitizer memcheck of the kernel tests
  microbench        ratios against baselines measured in the same run, with their targets;
                    writes measured_machine.yaml (tools/machine_file.py) from what it measured
  extras            (only on the budget left) cost model against the GPU, racecheck, memcheck
                    of the other GPU tests

Output (OUT, else --out, else build/cuda/device_check): summary.txt and summary.json (each
step's status, the failing tests by name with the first lines of each failure, the first
compiler errors, the microbenchmark table), device_check_logs.tar.gz (every log, each cut to
2 MiB), microbench.json, measured_machine.yaml (a machine file for `coopgnn bench modes
--machine`, tools/machine_file.py), e2e.jsonl: at most 8 files.

Options:
  --plan              print the steps with their time caps and exit
  --dry-run           run on a machine without a GPU: the GPU steps' outputs are faked (one
                      faked test fails, and must show up by name in the summary)
  --fake-build-error  with --dry-run: fake a compiler error (the summary quotes it)
  --debug-sync        configure with COOPGNN_DEBUG_SYNC=ON (every launch synchronises, so an
                      asynchronous fault names its kernel)
  --budget SECONDS    total time limit (default 480)
  --out DIR           output folder (default: $OUT, else build/cuda/device_check)
  --logs DIR          where the logs are written before archiving (default
                      build/cuda/device_check_logs; emptied first)
Environment: OUT, DEVROOT (where .devdeps/*.deb and *.whl are unpacked; default
/tmp/coopgnn-devroot).
Exit status: 0 every step passed, 1 a step failed or timed out, 2 bad usage.
A build cut short by its cap resumes where it stopped when the check is run again on the same
machine (ninja keeps what was built), so a second run on a warm machine starts further on.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, "build", "cuda")


@dataclass
class Step:
    name: str
    cap: int  # seconds
    what: str
    core: bool = True  # core steps' caps sum to at most the budget; extras run on what is left


# The build cap: the build of the check's targets (the GPU test executables, coopgnn,
# coopgnn_microbench) took BUILD_CPU_SECONDS of compiler time on this repository's development
# machine (2 cores; .ninja_log, see docs/gpu-check.md); on the GPU machine's 16 cores with no
# ccache that is about a tenth in wall time, plus linking. The cap leaves room for twice that.
STEPS = [
    Step("preamble", 15, "GPU, driver and CUDA versions, kernel, nvcc/cmake/ninja/g++ versions, "
         "NCCL library, cudaDevAttrMemoryPoolsSupported"),
    Step("sanitizer_probe", 20, "compute-sanitizer memcheck on a one-allocation probe: "
         "'Device not supported' or error 999 mark it unavailable and its steps are skipped"),
    Step("configure", 30, "cmake --preset cuda (-DCOOPGNN_BLAS=OFF when blis.h is absent)"),
    Step("build", 190, "cmake --build: the test_*_gpu executables, coopgnn, coopgnn_microbench"),
    Step("gpu_tests", 75, "ctest -L gpu without the pipeline tests: kernel parity against the "
         "host, sampling, gather, GPU cache, peer-copy and one-rank NCCL communicators, context"),
    Step("e2e_tests", 50, "test_pipeline_gpu: cooperative == single PE with 1, 2, 4 PEs on the "
         "GPU, host == CUDA trainer, link prediction, device sampling protocols, --prefetch == "
         "serial bit for bit"),
    Step("e2e_cli", 40, "coopgnn compare --backend cuda --pes 4 --pes-per-gpu 4 (Cora, 2 "
         "epochs); coopgnn train --backend cuda --pes 1 --device-comm nccl (1 epoch)"),
    Step("memcheck_kernels", 35, "compute-sanitizer --tool memcheck test_kernels_gpu"),
    Step("microbench", 25, "coopgnn_microbench: gather vs copy, UVA vs H2D, all-to-all vs copy, "
         "all-to-all and kernel launch latency, SpMM/SDDMM vs cuSPARSE, NS sampling rate; "
         "writes measured_machine.yaml"),
    Step("model_check", 90, "bench modes --backend cuda on R-MAT 2^18 against the DGX-H200 model",
         core=False),
    Step("racecheck", 45, "compute-sanitizer --tool racecheck on the shared-memory kernels",
         core=False),
    Step("memcheck_rest", 60, "memcheck of the other GPU test executables (single-PE steps of "
         "the pipeline tests)", core=False),
]
BUDGET = 480

# Microbenchmark targets set by this check (ratios against a baseline in the same run).
TARGETS = [
    ("gather_device", "ratio_vs_d2d", 0.6, "random-row gather vs a contiguous device copy"),
    ("gather_uva", "ratio_vs_h2d", 0.8, "in-place UVA reads vs a pinned H2D copy"),
    ("alltoall", "ratio_vs_d2d", 0.5, "peer-copy all-to-all on one GPU vs a device copy"),
    ("BM_spmm_vs_cusparse", "speedup", 1.0, "our SpMM vs cuSPARSE"),
    ("BM_sddmm_vs_cusparse", "speedup", 1.0, "our SDDMM vs cuSPARSE"),
]
MICROBENCH_FILTER = ("sample_ns_fanout10/18|gather_|alltoall/1048576/4|alltoall/64/4|kernel_launch|"
                     "spmm_vs_cusparse|sddmm_vs")
# The machine file the microbench step writes from microbench.json (tools/machine_file.py), for
# `coopgnn bench modes --machine OUT/measured_machine.yaml`.
MEASURED_MACHINE = "measured_machine.yaml"
# What the dry run reports as the GPU (nvidia-smi --query-gpu=name on a GPU machine).
DRY_RUN_GPU = "NVIDIA H100 80GB HBM3"
# The end-to-end GPU tests (tests/pipeline/*_gpu_test.cpp), by test name (ctest labels them all
# `gpu`; parameterised names carry a prefix such as "Usecases/").
E2E_TESTS = (r"(^|/)(TrainerCuda|TrainerCudaTiers|TrainerCudaEpochs|LinkCuda|"
             r"DeviceSamplingProtocol|PrefetchCuda)\.")
LOG_LIMIT = 2 << 20  # bytes of one log kept in the archive (head and tail)


@dataclass
class Result:
    name: str
    status: str = "not run"  # ok, FAILED, TIMED OUT, skipped (...), unavailable, not run
    seconds: float = 0.0
    detail: list[str] = field(default_factory=list)


class Check:
    def __init__(self, args):
        self.args = args
        self.start = time.monotonic()
        self.budget = args.budget
        self.out = os.path.abspath(args.out or os.environ.get("OUT") or
                                   os.path.join(BUILD, "device_check"))
        # The logs stay out of the output folder: a GPU machine returns at most 8 files, so
        # they travel back as one archive.
        self.logs = os.path.abspath(args.logs or os.path.join(BUILD, "device_check_logs"))
        if os.path.isdir(self.logs):
            shutil.rmtree(self.logs)
        os.makedirs(self.out, exist_ok=True)
        os.makedirs(self.logs, exist_ok=True)
        self.results: dict[str, Result] = {}
        self.env = dict(os.environ)
        self.failed_tests: list[tuple[str, str, list[str]]] = []  # (step, test, first lines)
        self.compiler_errors: list[str] = []
        self.facts: dict[str, str] = {}
        self.sanitizer = None  # path when usable
        self.blas = "?"
        self.rmm_root: str | None = None  # the unpacked RMM wheels (dependencies), if carried

    # ---- running ---------------------------------------------------------------------------
    def left(self) -> float:
        return self.budget - (time.monotonic() - self.start)

    def log_path(self, name):
        return os.path.join(self.logs, name + ".log")

    def read_log(self, name) -> str:
        with open(self.log_path(name), errors="replace") as f:
            return f.read()

    def run(self, step: str, cmd: list[str], cap: float, log: str | None = None,
            append=False, env=None) -> int:
        """Runs cmd with output to the step's log; 124 on timeout (the process group is killed)."""
        path = self.log_path(log or step)
        t = max(1.0, min(cap, self.left()))
        with open(path, "a" if append else "w") as f:
            f.write(f"$ {' '.join(cmd)}    (cap {t:.0f} s)\n")
            f.flush()
            try:
                p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT,
                                     env=env or self.env, start_new_session=True)
            except OSError as e:
                f.write(f"cannot start: {e}\n")
                return 127
            try:
                return p.wait(timeout=t)
            except subprocess.TimeoutExpired:
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    try:
                        os.killpg(p.pid, sig)
                    except ProcessLookupError:
                        break
                    try:
                        p.wait(timeout=10)
                        break
                    except subprocess.TimeoutExpired:
                        continue
                f.write(f"\n==> TIMED OUT after {t:.0f} s\n")
                return 124

    def step(self, s: Step, body):
        r = self.results.setdefault(s.name, Result(s.name))
        if self.left() < 10:
            r.status = "skipped (budget spent)"
            print(f"==> {s.name}: {r.status}", flush=True)
            return r
        print(f"==> {s.name} (cap {min(s.cap, int(self.left()))} s): {s.what}", flush=True)
        t0 = time.monotonic()
        try:
            body(s, r)
        except Exception as e:  # a bug of this script must not hide the other steps
            r.status = "FAILED"
            r.detail.append(f"device_check.py error: {e!r}")
        r.seconds = time.monotonic() - t0
        if r.status == "not run":
            r.status = "ok"
        print(f"==> {s.name}: {r.status} ({r.seconds:.1f} s)", flush=True)
        return r

    def skip(self, name: str, why: str):
        r = self.results.setdefault(name, Result(name))
        r.status = f"skipped ({why})"
        print(f"==> {name}: {r.status}", flush=True)

    def fake(self, step: str, text: str, log: str | None = None):
        with open(self.log_path(log or step), "w") as f:
            f.write("(dry run: faked output)\n" + text)

    # ---- steps -----------------------------------------------------------------------------
    def dependencies(self):
        """Unpacks .devdeps/*.deb (tools/device_deps.sh) into a private prefix, never into /,
        and the RMM wheels (.devdeps/*.whl, zip archives) into its python/ folder, which
        configure passes as COOPGNN_RMM_ROOT."""
        debs = sorted(glob.glob(os.path.join(ROOT, ".devdeps", "*.deb")))
        wheels = sorted(glob.glob(os.path.join(ROOT, ".devdeps", "*.whl")))
        root = os.environ.get("DEVROOT", "/tmp/coopgnn-devroot")
        if wheels and not self.args.dry_run:
            site = os.path.join(root, "python")
            os.makedirs(site, exist_ok=True)
            for whl in wheels:
                with zipfile.ZipFile(whl) as z:
                    z.extractall(site)
            self.rmm_root = site
        self.facts["RMM wheels"] = (f"{len(wheels)} carried" + (
            f", unpacked into {self.rmm_root}" if self.rmm_root else
            " (not unpacked: dry run)" if wheels else
            " (none: configure asks python3 for librmm)"))
        if not debs or self.args.dry_run:
            self.facts["devdeps"] = f"{len(debs)} carried packages" + (
                " (not unpacked: dry run)" if debs else " (none carried)")
            return
        os.makedirs(root, exist_ok=True)
        for deb in debs:
            if shutil.which("dpkg-deb"):
                subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
            else:  # a .deb is an ar archive holding data.tar.*
                tmp = tempfile.mkdtemp()
                subprocess.run(["ar", "x", deb], cwd=tmp, check=True)
                data = glob.glob(os.path.join(tmp, "data.tar.*"))[0]
                subprocess.run(["tar", "-xf", data, "-C", root], check=True)
                shutil.rmtree(tmp, ignore_errors=True)
        usr = os.path.join(root, "usr")
        self.env["CMAKE_PREFIX_PATH"] = usr + (":" + self.env["CMAKE_PREFIX_PATH"]
                                               if self.env.get("CMAKE_PREFIX_PATH") else "")
        libdir = os.path.join(usr, "lib", "x86_64-linux-gnu")
        self.env["LD_LIBRARY_PATH"] = ":".join(
            [libdir, os.path.join(libdir, "blis-pthread")] +
            ([self.env["LD_LIBRARY_PATH"]] if self.env.get("LD_LIBRARY_PATH") else []))
        self.env["PATH"] = os.path.join(usr, "bin") + ":" + self.env.get("PATH", "")
        self.facts["devdeps"] = f"{len(debs)} carried packages unpacked into {root}"

    def preamble(self, s: Step, r: Result):
        log = self.log_path("preamble")
        lines = []

        def cmd(label, argv):
            exe = shutil.which(argv[0], path=self.env.get("PATH"))
            if self.args.dry_run and argv[0] in ("nvidia-smi",):
                out = "(dry run: not run)"
            elif not exe:
                out = "not found"
            else:
                try:
                    out = subprocess.run(argv, capture_output=True, text=True, timeout=10,
                                         env=self.env).stdout.strip()
                except (subprocess.TimeoutExpired, OSError) as e:
                    out = f"failed: {e}"
            lines.append(f"{label}: {out}")
            return out

        cmd("nvidia-smi -L", ["nvidia-smi", "-L"])
        q = cmd("GPU (name, driver, memory, bus)", [
            "nvidia-smi", "--query-gpu=name,driver_version,memory.total,pci.bus_id",
            "--format=csv,noheader"])
        self.facts["gpu"] = q.splitlines()[0] if q else "?"
        smi = cmd("nvidia-smi header", ["nvidia-smi"])
        m = re.search(r"CUDA Version:\s*([0-9.]+)", smi)
        self.facts["driver CUDA"] = m.group(1) if m else "?"
        lines[-1] = f"driver's CUDA version: {self.facts['driver CUDA']}"
        self.facts["kernel"] = cmd("uname -r", ["uname", "-r"])
        nvcc = os.environ.get("CUDACXX") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        v = cmd("nvcc", [nvcc, "--version"])
        self.facts["nvcc"] = (v.splitlines() or ["?"])[-1]
        self.facts["cmake"] = (cmd("cmake", ["cmake", "--version"]).splitlines() or ["?"])[0]
        self.facts["ninja"] = cmd("ninja", ["ninja", "--version"])
        self.facts["g++"] = (cmd("g++", ["g++", "--version"]).splitlines() or ["?"])[0]
        self.facts["python3"] = sys.executable
        nccl = self.nccl_location()
        lines.append(f"NCCL: {nccl}")
        self.facts["NCCL"] = nccl
        probe = self.cuda_probe()
        lines.append(f"CUDA runtime probe: {probe}")
        self.facts["CUDA probe"] = probe
        if "memory pools supported: no" in probe:
            r.status = "FAILED"
            r.detail.append("cudaDevAttrMemoryPoolsSupported is 0: every device allocation of "
                            "coopgnn uses stream-ordered pools (cudaMallocAsync)")
        with open(log, "w") as f:
            f.write(("(dry run)\n" if self.args.dry_run else "") + "\n".join(lines) + "\n")
        for ln in lines:
            print("    " + ln.replace("\n", " | ")[:200])

    def nccl_location(self) -> str:
        found = []
        try:
            out = subprocess.run(
                [sys.executable, "-c", "import nvidia.nccl as m; print(list(m.__path__)[0])"],
                capture_output=True, text=True, timeout=20).stdout.strip()
            if out:
                found += glob.glob(os.path.join(out, "lib", "libnccl.so*"))
        except (subprocess.TimeoutExpired, OSError):
            pass
        for d in ("/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu"):
            found += glob.glob(os.path.join(d, "libnccl.so*"))
        return ", ".join(sorted(set(found))) or "none found (the configure step will say)"

    def cuda_probe(self) -> str:
        """Driver/runtime versions, device count, and cudaDevAttrMemoryPoolsSupported, through
        the CUDA runtime with ctypes (no compilation)."""
        if self.args.dry_run:
            return "(dry run: not run)"
        code = r"""
import ctypes, glob, sys
cands = glob.glob('/usr/local/cuda/lib64/libcudart.so*') + ['libcudart.so.13', 'libcudart.so']
rt = None
for c in cands:
    try:
        rt = ctypes.CDLL(c); break
    except OSError:
        pass
if rt is None:
    print('libcudart not found'); sys.exit(0)
v = ctypes.c_int()
rt.cudaDriverGetVersion(ctypes.byref(v)); drv = v.value
rt.cudaRuntimeGetVersion(ctypes.byref(v)); run = v.value
n = ctypes.c_int(); st = rt.cudaGetDeviceCount(ctypes.byref(n))
out = [f'driver API {drv // 1000}.{drv % 1000 // 10}', f'runtime {run // 1000}.{run % 1000 // 10}',
       f'devices {n.value} (status {st})']
for d in range(n.value):
    a = ctypes.c_int()
    vals = []
    for attr in (75, 76, 115):  # cc major, cc minor, cudaDevAttrMemoryPoolsSupported
        rt.cudaDeviceGetAttribute(ctypes.byref(a), attr, d); vals.append(a.value)
    out.append(f'device {d}: sm_{vals[0]}{vals[1]}, memory pools supported: '
               + ('yes' if vals[2] else 'no'))
print('; '.join(out))
"""
        try:
            return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  timeout=30, env=self.env).stdout.strip() or "no output"
        except (subprocess.TimeoutExpired, OSError) as e:
            return f"failed: {e}"

    def sanitizer_probe(self, s: Step, r: Result):
        exe = shutil.which("compute-sanitizer", path=self.env.get("PATH")) or \
            "/usr/local/cuda/bin/compute-sanitizer"
        if self.args.dry_run:
            self.fake(s.name, "========= Device not supported\n========= Error: 999\n")
            text, rc = self.read_log(s.name), 999
        elif not os.path.exists(exe):
            r.status = "unavailable"
            r.detail.append("compute-sanitizer not installed: the sanitizer steps are skipped")
            return
        else:
            probe = ("import ctypes, glob\n"
                     "c = (glob.glob('/usr/local/cuda/lib64/libcudart.so*') + "
                     "['libcudart.so'])[0]\n"
                     "rt = ctypes.CDLL(c); p = ctypes.c_void_p()\n"
                     "st = rt.cudaMalloc(ctypes.byref(p), 1 << 20)\n"
                     "assert st == 0, f'cudaMalloc status {st}'\n"
                     "rt.cudaFree(p)\n")
            rc = self.run(s.name, [exe, "--tool", "memcheck", "--error-exitcode", "3",
                                   sys.executable, "-c", probe], s.cap)
            text = self.read_log(s.name)
        if rc != 0 or "Device not supported" in text or re.search(r"\b999\b", text):
            r.status = "unavailable"
            first = [ln for ln in text.splitlines()[1:] if ln.strip()][:3]
            r.detail.append("compute-sanitizer cannot run here; its steps are skipped: " +
                            " | ".join(first))
        else:
            self.sanitizer = exe

    def configure(self, s: Step, r: Result):
        blis = self.find_blis()
        args = ["cmake", "--preset", "cuda",
                f"-DCOOPGNN_DEBUG_SYNC={'ON' if self.args.debug_sync else 'OFF'}"]
        if self.rmm_root:
            args.append(f"-DCOOPGNN_RMM_ROOT={self.rmm_root}")
        if blis:
            self.blas = f"BLIS ({blis})"
        else:
            args.append("-DCOOPGNN_BLAS=OFF")
            self.blas = ("reference loops: blis.h not found, configured with -DCOOPGNN_BLAS=OFF "
                         "(carry .devdeps from tools/device_deps.sh for BLIS)")
        if self.args.dry_run:
            self.fake(s.name, f"$ {' '.join(args)}\n-- coopgnn: NCCL x.y.z: (dry run)\n"
                      "-- coopgnn: RMM x.y.z: (dry run)\n")
            return
        rc = self.run(s.name, args, s.cap)
        text = self.read_log(s.name)
        m = re.search(r"coopgnn: NCCL (\S+): (\S+)", text)
        if m:
            self.facts["NCCL (linked)"] = f"{m.group(1)}: {m.group(2)}"
        m = re.search(r"coopgnn: RMM (\S+): (\S+)", text)
        if m:
            self.facts["RMM (linked)"] = f"{m.group(1)}: {m.group(2)}"
        if rc != 0:
            r.status = "TIMED OUT" if rc == 124 else "FAILED"
            self.compiler_errors += quote_errors(text, r"CMake Error|error", 12)

    def find_blis(self) -> str | None:
        roots = [p for p in self.env.get("CMAKE_PREFIX_PATH", "").split(":") if p] + ["/usr"]
        for root in roots:
            hits = glob.glob(os.path.join(root, "include", "**", "blis.h"), recursive=True)
            if hits:
                return hits[0]
        return None

    def targets(self) -> list[str]:
        t = ["coopgnn", "coopgnn_microbench"]
        for f in sorted(glob.glob(os.path.join(ROOT, "tests", "*", "*_gpu_test.cpp"))):
            name = f"test_{os.path.basename(os.path.dirname(f))}_gpu"
            if name not in t:
                t.append(name)
        return t

    def build(self, s: Step, r: Result):
        argv = ["cmake", "--build", "--preset", "cuda", f"-j{os.cpu_count() or 4}", "--target",
                *self.targets()]
        if self.args.dry_run:
            if self.args.fake_build_error:
                self.fake(s.name, "[12/240] Building CUDA object kernels/sample/sample.cu.o\n"
                          "FAILED: CMakeFiles/coopgnn_kernels.dir/kernels/sample/sample.cu.o\n"
                          "kernels/sample/sample.cu(123): error: identifier \"fake_symbol\" is "
                          "undefined\n1 error detected in the compilation of "
                          "\"kernels/sample/sample.cu\".\nninja: build stopped: subcommand "
                          "failed.\n")
                r.status = "FAILED"
                self.compiler_errors += quote_errors(self.read_log(s.name),
                                                     r"error|FAILED:", 12)
            else:
                self.fake(s.name, f"$ {' '.join(argv)}\n[240/240] Linking CXX executable "
                          "coopgnn\n")
            return
        rc = self.run(s.name, argv, s.cap)
        if rc != 0:
            r.status = "TIMED OUT" if rc == 124 else "FAILED"
            self.compiler_errors += quote_errors(self.read_log(s.name),
                                                 r"error|FAILED:|undefined reference", 12)

    def ctest(self, s: Step, r: Result, regex_args: list[str]):
        junit = os.path.join(self.logs, s.name + ".junit.xml")
        argv = ["ctest", "--test-dir", BUILD, "-L", "gpu", *regex_args, "--output-on-failure",
                "-j4", "--timeout", "60", "--output-junit", junit]
        if self.args.dry_run:
            self.fake(s.name, DRY_CTEST if s.name == "gpu_tests" else DRY_CTEST_PASS)
            rc = 8 if s.name == "gpu_tests" else 0
        else:
            rc = self.run(s.name, argv, s.cap)
        text = self.read_log(s.name)
        passed, failed = parse_ctest(text)
        r.detail.append(f"{len(passed)} passed, {len(failed)} failed")
        for name, first in failed:
            self.failed_tests.append((s.name, name, first))
        if rc == 124:
            r.status = "TIMED OUT"
        elif rc != 0 or failed:
            r.status = "FAILED"
        if rc not in (0, 124) and not failed:
            r.detail.append(f"ctest exit status {rc}; " + " | ".join(text.splitlines()[-3:]))

    def gpu_tests(self, s, r):
        self.ctest(s, r, ["-E", E2E_TESTS])

    def e2e_tests(self, s, r):
        self.ctest(s, r, ["-R", E2E_TESTS])

    def e2e_cli(self, s, r):
        exe = os.path.join(BUILD, "coopgnn")
        runs = [
            ("compare", [exe, "compare", "--backend", "cuda", "--pes", "4", "--pes-per-gpu", "4",
                         "--epochs", "2", "--no-progress", "--metrics-out",
                         os.path.join(self.out, "e2e.jsonl")], 25),
            ("nccl_one_pe", [exe, "train", "--backend", "cuda", "--pes", "1", "--device-comm",
                             "nccl", "--epochs", "1", "--no-progress"], 15),
        ]
        for name, argv, cap in runs:
            if self.args.dry_run:
                self.fake(s.name, f"$ {' '.join(argv)}\n", log=f"e2e_{name}")
                continue
            rc = self.run(s.name, argv, min(cap, s.cap), log=f"e2e_{name}")
            text = self.read_log(f"e2e_{name}")
            if rc != 0:
                r.status = "TIMED OUT" if rc == 124 else "FAILED"
                r.detail.append(f"{name} exit status {rc}: " +
                                " | ".join(quote_errors(text, r"error|what|Error|failed", 6) or
                                           text.splitlines()[-4:]))
            else:
                tail = [ln for ln in text.splitlines() if ln.strip()][-12:]
                r.detail.append(f"{name}:")
                r.detail += ["  " + ln for ln in tail]

    def sanitize(self, s: Step, r: Result, runs: list[tuple[str, str, str]]):
        if self.sanitizer is None:
            r.status = "skipped (compute-sanitizer unavailable)"
            return
        for tool, exe, filt in runs:
            name = f"{s.name}_{tool}_{os.path.basename(exe)}"
            if self.args.dry_run:
                self.fake(s.name, "========= ERROR SUMMARY: 0 errors\n", log=name)
                continue
            if not os.path.exists(exe):
                r.status = "FAILED"
                r.detail.append(f"{exe} was not built")
                continue
            rc = self.run(s.name, [self.sanitizer, "--tool", tool, "--error-exitcode", "3",
                                   exe, f"--gtest_filter={filt}"], s.cap, log=name)
            text = self.read_log(name)
            errors = sum(int(n) for n in re.findall(r"ERROR SUMMARY: (\d+)", text))
            if errors:
                r.status = "FAILED"
                first = [ln for ln in text.splitlines()
                         if ln.startswith("=========") and "ERROR SUMMARY" not in ln][:8]
                r.detail.append(f"{tool} {os.path.basename(exe)}: {errors} errors")
                r.detail += ["  " + ln for ln in first]
            elif rc == 124:
                r.status = "incomplete (timed out)" if r.status in ("not run", "ok") else r.status
                r.detail.append(f"{tool} {os.path.basename(exe)}: timed out, no error so far")
            elif rc != 0:
                r.status = "FAILED"
                r.detail.append(f"{tool} {os.path.basename(exe)}: exit status {rc}: " +
                                " | ".join(text.splitlines()[-3:]))
            else:
                r.detail.append(f"{tool} {os.path.basename(exe)}: 0 errors")

    def microbench(self, s: Step, r: Result):
        js = os.path.join(self.out, "microbench.json")
        argv = [os.path.join(BUILD, "bench", "coopgnn_microbench"), "--benchmark_format=console",
                f"--benchmark_out={js}", "--benchmark_out_format=json",
                f"--benchmark_filter={MICROBENCH_FILTER}", "--benchmark_min_time=0.1"]
        if self.args.dry_run:
            self.fake(s.name, f"$ {' '.join(argv)}\n")
            with open(js, "w") as f:
                json.dump({"benchmarks": [
                    {"name": "gather_device/256/manual_time", "ratio_vs_d2d": 0.0},
                    {"name": "BM_spmm_vs_cusparse", "speedup": 0.0}]}, f)
        else:
            rc = self.run(s.name, argv, s.cap)
            text = self.read_log(s.name)
            if rc != 0 or "ERROR OCCURRED" in text:
                r.status = "TIMED OUT" if rc == 124 else "FAILED"
                r.detail += quote_errors(text, r"ERROR OCCURRED|error", 6)
        r.detail += microbench_table(js)
        r.detail += self.write_measured_machine(js)

    def gpu_name(self) -> str:
        if self.args.dry_run:
            return DRY_RUN_GPU
        try:
            p = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i",
                                "0"], capture_output=True, text=True, timeout=10)
            name = p.stdout.strip().splitlines()[0].strip() if p.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired, IndexError):
            name = ""
        return name or "unknown GPU"

    def write_measured_machine(self, js: str) -> list[str]:
        """Writes OUT/measured_machine.yaml from microbench.json (tools/machine_file.py);
        returns the summary lines (the file and its figures, or why none was written)."""
        if not os.path.exists(js):
            return [f"(no {MEASURED_MACHINE}: no microbench.json)"]
        import machine_file
        out = os.path.join(self.out, MEASURED_MACHINE)
        try:
            e = machine_file.write_machine_file(js, out, self.gpu_name())
        except machine_file.InputError as err:
            return [f"(no {MEASURED_MACHINE}: {err})"]
        lines = [f"{MEASURED_MACHINE}: machine {e['name']} (bench modes --machine "
                 f"{MEASURED_MACHINE} --machines {e['name']})"]
        for k, f in e["figures"].items():
            how = ("measured" if f["source"].startswith("measured by") else
                   "kept (assumption)" if f.get("assumption") else "kept (datasheet)")
            lines.append(f"  {k:<18} {f['value']:>10.4g}  {how}")
        return lines

    def model_check(self, s: Step, r: Result):
        exe = os.path.join(BUILD, "coopgnn")
        data = os.path.join(os.environ.get("TMPDIR", "/tmp"), "coopgnn-model-check", "rmat18")
        outd = os.path.join(self.logs, "model_check")
        gen = [exe, "generate", "rmat", data, "--scale", "18", "--with-task"]
        modes = [exe, "bench", "modes", "--backend", "cuda", "--dataset", data, "--sampler",
                 "labor", "--fanouts", "10,10,10", "--batch-size", "1024", "--pes", "1",
                 "--batches", "8", "--warmup", "2", "--machines", "DGX-H200",
                 "--feature-placement", "device", "--out", outd]
        if self.args.dry_run:
            self.fake(s.name, f"$ {' '.join(gen)}\n$ {' '.join(modes)}\n")
            return
        if not os.path.isdir(data):
            rc = self.run(s.name, gen, 40)
            if rc != 0:
                r.status = "FAILED"
                return
        rc = self.run(s.name, modes, s.cap, append=True)
        if rc != 0:
            r.status = "TIMED OUT" if rc == 124 else "FAILED"
            return
        r.detail += model_table(outd)

    # ---- summary ---------------------------------------------------------------------------
    def archive(self) -> str:
        path = os.path.join(self.out, "device_check_logs.tar.gz")
        with tarfile.open(path, "w:gz") as tar:
            for dirpath, _, files in os.walk(self.logs):
                for fn in sorted(files):
                    full = os.path.join(dirpath, fn)
                    rel = os.path.join("logs", os.path.relpath(full, self.logs))
                    if os.path.getsize(full) > LOG_LIMIT:
                        trimmed = full + ".trimmed"
                        with open(full, "rb") as src, open(trimmed, "wb") as dst:
                            dst.write(src.read(LOG_LIMIT // 2))
                            dst.write(b"\n... [trimmed by device_check] ...\n")
                            src.seek(-LOG_LIMIT // 2, os.SEEK_END)
                            dst.write(src.read())
                        tar.add(trimmed, arcname=rel)
                        os.remove(trimmed)
                    else:
                        tar.add(full, arcname=rel)
            cache = os.path.join(BUILD, "CMakeCache.txt")
            if os.path.exists(cache):
                tar.add(cache, arcname="logs/CMakeCache.txt")
        return path

    def summary(self) -> int:
        archive = self.archive()
        elapsed = time.monotonic() - self.start
        bad = [r for r in self.results.values()
               if r.status in ("FAILED", "TIMED OUT") or r.status.startswith("FAILED")]
        lines = [f"================ device check summary ({elapsed:.0f} s of {self.budget} s)"
                 f"{' DRY RUN (GPU steps faked)' if self.args.dry_run else ''} ================"]
        for k in ("gpu", "driver CUDA", "CUDA probe", "kernel", "nvcc", "cmake", "ninja", "g++",
                  "NCCL", "NCCL (linked)", "RMM (linked)", "RMM wheels", "devdeps"):
            if k in self.facts:
                lines.append(f"{k:<16} {self.facts[k]}")
        lines.append(f"{'host BLAS':<16} {self.blas}")
        lines.append("")
        lines.append(f"{'step':<18} {'status':<40} {'seconds':>8}")
        for s in STEPS:
            r = self.results.get(s.name, Result(s.name))
            lines.append(f"{s.name:<18} {r.status:<40} {r.seconds:8.1f}")
        for s in STEPS:
            r = self.results.get(s.name)
            if r and r.detail:
                lines.append(f"-- {s.name}:")
                lines += ["   " + d for d in r.detail]
        if self.compiler_errors:
            lines.append("-- first compiler/configure errors:")
            lines += ["   " + e for e in self.compiler_errors]
        if self.failed_tests:
            lines.append(f"-- failing tests ({len(self.failed_tests)}):")
            for step, name, first in self.failed_tests:
                lines.append(f"   FAILED {name}  [{step}]")
                lines += ["      " + ln for ln in first]
        lines.append(f"-- logs: {archive}")
        lines.append("RESULT: " + ("FAILED" if bad else "OK"))
        text = "\n".join(lines) + "\n"
        print("\n" + text, end="")
        with open(os.path.join(self.out, "summary.txt"), "w") as f:
            f.write(text)
        with open(os.path.join(self.out, "summary.json"), "w") as f:
            json.dump({"dry_run": self.args.dry_run, "seconds": elapsed, "budget": self.budget,
                       "facts": self.facts, "host_blas": self.blas,
                       "steps": {n: {"status": r.status, "seconds": r.seconds,
                                     "detail": r.detail} for n, r in self.results.items()},
                       "failed_tests": [{"step": a, "test": b, "first_lines": c}
                                        for a, b, c in self.failed_tests],
                       "compiler_errors": self.compiler_errors,
                       "result": "FAILED" if bad else "OK"}, f, indent=1)
        return 1 if bad else 0


DRY_CTEST = """Test project build/cuda
    Start 1: KernelParityGpu.EveryOpMatchesTheHost
1/3 Test #1: KernelParityGpu.EveryOpMatchesTheHost ........   Passed    1.20 sec
    Start 2: DryRun.FakeFailureIsQuoted
2/3 Test #2: DryRun.FakeFailureIsQuoted ...................***Failed    0.31 sec
Running main() from gmock_main.cc
Note: Google Test filter = DryRun.FakeFailureIsQuoted
[==========] Running 1 test from 1 test suite.
[ RUN      ] DryRun.FakeFailureIsQuoted
tests/kernels/fake_gpu_test.cpp:42: Failure
Expected equality of these values:
  dev.edges[0]
    Which is: { 1, 2, 3 }
  host.edges[0]
    Which is: { 1, 2, 4 }
[  FAILED  ] DryRun.FakeFailureIsQuoted (310 ms)
    Start 3: PeerComm.NoPendingErrorAfterPolledWaits
3/3 Test #3: PeerComm.NoPendingErrorAfterPolledWaits ......   Passed    0.50 sec

67% tests passed, 1 tests failed out of 3

The following tests FAILED:
	  2 - DryRun.FakeFailureIsQuoted (Failed)
Errors while running CTest
"""

DRY_CTEST_PASS = """Test project build/cuda
    Start 1: Usecases/TrainerCuda.CooperativeOnOneDeviceEqualsSinglePe/0
1/1 Test #1: Usecases/TrainerCuda.CooperativeOnOneDeviceEqualsSinglePe/0 ...   Passed    2.10 sec

100% tests passed, 0 tests failed out of 1
"""

_STATUS = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*(\*\*\*)?(Passed|Failed|Not Run|"
                     r"Timeout|Exception|SEGFAULT|Subprocess aborted|Child aborted|\w+)")
_BOILERPLATE = re.compile(r"^(Running main\(\)|Note: Google Test filter|\[ *(=+|-+|RUN|OK) *\]"
                          r"|\s*Start \d+:|$)")


def parse_ctest(text: str):
    """(passed names, [(failed name, first lines of its output)]) from ctest's console log."""
    passed, failed = [], []
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        m = _STATUS.match(ln)
        if not m:
            continue
        name, verdict = m.group(1), m.group(3)
        if verdict == "Passed":
            passed.append(name)
            continue
        if "Skipped" in ln or verdict == "Not Run" and "Disabled" in ln:
            continue
        first = []
        for nxt in lines[i + 1:]:
            if _STATUS.match(nxt) or nxt.startswith("The following tests"):
                break
            if not _BOILERPLATE.match(nxt) and len(first) < 8:
                first.append(nxt[:240])
        if not first:
            first = [ln.strip()[:240]]
        failed.append((name, first))
    return passed, failed


def quote_errors(text: str, pattern: str, limit: int) -> list[str]:
    out = []
    rx = re.compile(pattern)
    for ln in text.splitlines():
        if rx.search(ln) and not ln.startswith("$ "):
            out.append(ln[:240])
            if len(out) >= limit:
                break
    return out


def microbench_table(path: str) -> list[str]:
    if not os.path.exists(path):
        return ["(no microbench.json)"]
    try:
        with open(path) as f:
            rows = json.load(f).get("benchmarks", [])
    except (OSError, ValueError) as e:
        return [f"(microbench.json unreadable: {e})"]
    out = [f"{'benchmark':<40} {'counter':<18} {'value':>10} {'target':>8}  verdict"]
    for b in rows:
        for prefix, key, target, why in TARGETS:
            if b.get("name", "").startswith(prefix) and key in b:
                v = b[key]
                out.append(f"{b['name'][:40]:<40} {key:<18} {v:10.3g} {target:8.2g}  "
                           f"{'meets' if v >= target else 'BELOW'} ({why})")
        if "edges_per_second" in b:
            out.append(f"{b['name'][:40]:<40} {'edges_per_second':<18} "
                       f"{b['edges_per_second']:10.3g} {'-':>8}")
    return out


def model_table(outd: str) -> list[str]:
    paths = sorted(glob.glob(os.path.join(outd, "modes_*.json")))
    if not paths:
        return ["(no modes_*.json)"]
    with open(paths[0]) as f:
        j = json.load(f)
    out = [f"measured on {j['host'].get('device', '?')} vs MODELLED for "
           f"{j['cost_model']['machines'][0]['name']} (ratio = measured / modelled)"]
    for row in j["rows"]:
        meas, mod = row["seconds_per_batch"], row["modelled"][0]["seconds_per_batch"]
        for st in ("sample", "feature_load", "forward", "backward", "communication", "optimizer",
                   "total"):
            a, b = meas.get(st, 0.0), mod.get(st, 0.0)
            ratio = f"{a / b:8.3g}" if b > 0 else "       -"
            out.append(f"{row['mode']:<12} P={row['pes']} {st:<14} {a:11.3e} {b:11.3e} {ratio}")
    return out


def plan() -> int:
    print(f"tools/device_check.sh: steps in order, each under its cap (seconds); budget "
          f"{BUDGET} s")
    print(f"{'step':<18} {'cap':>5}  what")
    core = 0
    for s in STEPS:
        if s.core:
            core += s.cap
        print(f"{s.name:<18} {s.cap:>5}  {'' if s.core else '[extra] '}{s.what}")
    extra = sum(s.cap for s in STEPS if not s.core)
    print(f"sum of the core caps: {core} s (at most {BUDGET}, the build included); the extras "
          f"({extra} s of caps) run only on the budget the core steps left, so the whole run "
          f"ends within {BUDGET} s")
    return 0 if core <= BUDGET else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tools/device_check.sh", add_help=False)
    ap.add_argument("--plan", action="store_true")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--fake-build-error", action="store_true")
    ap.add_argument("--debug-sync", action="store_true")
    ap.add_argument("--budget", type=int, default=BUDGET)
    ap.add_argument("--out")
    ap.add_argument("--logs")
    ap.add_argument("--help", "-h", action="store_true")
    args = ap.parse_args(argv)
    if args.help:
        print(__doc__)
        return 0
    if args.plan:
        return plan()
    if args.fake_build_error and not args.dry_run:
        ap.error("--fake-build-error needs --dry-run")
    if args.budget < 60:
        ap.error(f"--budget {args.budget}: at least 60 seconds")
    c = Check(args)
    by = {s.name: s for s in STEPS}
    c.dependencies()
    c.step(by["preamble"], c.preamble)
    c.step(by["sanitizer_probe"], c.sanitizer_probe)
    c.step(by["configure"], c.configure)
    if c.results["configure"].status == "ok":
        c.step(by["build"], c.build)
    else:
        c.skip("build", "configure failed")
    built = c.results.get("build") and c.results["build"].status == "ok"
    later = [s.name for s in STEPS[4:]]
    if not built:
        for n in later:
            c.skip(n, "build failed")
        return c.summary()
    c.step(by["gpu_tests"], c.gpu_tests)
    c.step(by["e2e_tests"], c.e2e_tests)
    c.step(by["e2e_cli"], c.e2e_cli)
    tests = os.path.join(BUILD, "tests")
    c.step(by["memcheck_kernels"], lambda s, r: c.sanitize(
        s, r, [("memcheck", os.path.join(tests, "test_kernels_gpu"), "*")]))
    c.step(by["microbench"], c.microbench)
    # Extras: only on what the core steps left.
    c.step(by["model_check"], c.model_check)
    c.step(by["racecheck"], lambda s, r: c.sanitize(
        s, r, [("racecheck", os.path.join(tests, "test_kernels_gpu"), "dense_gpu.*")]))
    rest = []
    for exe in sorted(glob.glob(os.path.join(tests, "test_*_gpu"))):
        if os.path.basename(exe) == "test_kernels_gpu":
            continue
        filt = "*SinglePeMatchesTheHostBackend/0*" if exe.endswith("test_pipeline_gpu") else "*"
        rest.append(("memcheck", exe, filt))
    if c.args.dry_run and not rest:
        rest = [("memcheck", os.path.join(tests, "test_comm_gpu"), "*")]
    c.step(by["memcheck_rest"], lambda s, r: c.sanitize(s, r, rest))
    return c.summary()


if __name__ == "__main__":
    sys.exit(main())
