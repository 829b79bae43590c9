#!/usr/bin/env bash
# Runs every check that needs a GPU, in at most 8 minutes (DESIGN.md section 2): configure the
# `cuda` preset (sm_90) and build the GPU test executables and the microbenchmarks, run the tests
# labelled gpu, the CUDA microbenchmarks, then compute-sanitizer memcheck (and racecheck on the
# kernels with shared memory); then prints a summary table. The CPU suite runs on CPU machines and
# is not repeated here. Exit status 0 only when every step passed.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: tools/device_check.sh [--large] [--debug-sync] [--budget SECONDS] [--help]

Run from the repository root on a machine with one CUDA GPU (written for one H200).
Steps, each under `timeout`, all together within the budget (default 480 s = 8 minutes):
  1. cmake --preset cuda && cmake --build --preset cuda -j$(nproc) --target <the test_*_gpu
     executables of tests/*/*_gpu_test.cpp> coopgnn_microbench coopgnn
  2. ctest --test-dir build/cuda -L gpu             (the CPU suite runs on CPU machines; it
     already runs the whole pipeline and model on the emulated device). Among them: the kernel
     parity harness (KernelParityGpu: one list of op cases on CUDA against the host reference),
     the sampling protocols on CUDA against the host, and the end-to-end trainer tests
  3. build/cuda/bench/coopgnn_microbench (console output; JSON to $OUT/microbench.json when
     OUT is set, else build/cuda/microbench.json); before the sanitizers so that the numbers
     come back even when the sanitizers use up the budget
  3b. coopgnn compare --backend cuda --pes 4 --pes-per-gpu 4 --epochs 3 on the bundled Cora
     (per-epoch JSON to $OUT/e2e.jsonl)
  3c. the cost model against the GPU (issue 18): coopgnn bench modes --backend cuda on an R-MAT
     graph of 2^18 vertices (LABOR, fanouts 10,10,10, B = 1024, P = 1, features in device
     memory), then per stage the measured seconds, the seconds the model predicts for the
     DGX-H200 entry of bench/machines.yaml (one H200) and measured / modelled (JSON to
     $OUT/model_check/)
  4. compute-sanitizer --tool memcheck on build/cuda/tests/test_*_gpu, --tool racecheck on the
     kernels with shared memory (RACECHECK_FILTER in test_kernels_gpu)
  5. a summary: build ok, tests passed/failed, sanitizer errors, key benchmark ratios, the
     end-to-end comparison table

Options:
  --large           also run the scale-24 R-MAT sampling benchmark (generation takes minutes)
  --debug-sync      configure with COOPGNN_DEBUG_SYNC=ON: every kernel launch synchronises and
                    checks, so an asynchronous fault names the kernel that caused it (slower)
  --budget SECONDS  total time limit (default 480)
  --help            this text

Environment: OUT (optional output folder), SANITIZER_FILTER (gtest filter for the memcheck
runs, default '*'), RACECHECK_FILTER (gtest filter of the racecheck run, default
'dense_gpu.*'), DEVROOT (where .devdeps/*.deb are unpacked, default /tmp/coopgnn-devroot).
A machine that cannot install packages needs .devdeps/ from tools/device_deps.sh (carry it).
Exit status: 0 all passed, 1 a step failed or timed out, 2 bad usage.
EOF
}

large=0
debug_sync=0
budget=480
while [[ $# -gt 0 ]]; do
  case "$1" in
    --help | -h) usage; exit 0 ;;
    --large) large=1; shift ;;
    --debug-sync) debug_sync=1; shift ;;
    --budget) budget="${2:?--budget needs a value}"; shift 2 ;;
    *) echo "device_check.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

start=$SECONDS
build_dir=build/cuda
out_dir="${OUT:-$build_dir}"
mkdir -p "$out_dir"
log_dir="$out_dir/device_check_logs"
mkdir -p "$log_dir"
failed=0

# Seconds left in the budget, at most $1 (the step's own cap); at least 1.
left() {
  local cap=$1 rest=$((budget - (SECONDS - start)))
  ((rest < cap)) && cap=$rest
  ((cap < 1)) && cap=1
  echo "$cap"
}

# run_step NAME CAP CMD...: runs CMD under timeout, output to the terminal and a log; returns
# the command's status (124 on timeout) without tripping set -e, or 125 without running it when
# less than 10 s of the budget are left.
run_step() {
  local name=$1 cap=$2 rc=0
  shift 2
  if ((budget - (SECONDS - start) < 10)); then
    echo "==> $name: SKIPPED (budget spent)"
    : >"$log_dir/$name.log"
    return 125
  fi
  local t
  t=$(left "$cap")
  echo "==> $name (timeout ${t}s)"
  timeout --kill-after=10 "$t" "$@" 2>&1 | tee "$log_dir/$name.log" || rc=${PIPESTATUS[0]}
  if ((rc == 124 || rc == 137)); then echo "==> $name: TIMED OUT"; fi
  return "$rc"
}

# ---- 0. dependencies ---------------------------------------------------------------------------
# A GPU machine without a package registry gets the Debian packages of tools/device_deps.sh in
# .devdeps/ (carried); they are unpacked into a private prefix, never into /.
if compgen -G ".devdeps/*.deb" >/dev/null; then
  devroot="${DEVROOT:-/tmp/coopgnn-devroot}"
  mkdir -p "$devroot"
  for deb in .devdeps/*.deb; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$deb" "$devroot"
    else  # a .deb is an ar archive holding data.tar.*
      (tmp=$(mktemp -d) && cd "$tmp" && ar x "$OLDPWD/$deb" && tar -xf data.tar.* -C "$devroot" &&
        rm -rf "$tmp")
    fi
  done
  export CMAKE_PREFIX_PATH="$devroot/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$devroot/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$devroot/usr/bin:$PATH"
  echo "==> dependencies: unpacked $(ls .devdeps/*.deb | wc -l) packages into $devroot"
fi

# ---- 1. build ----------------------------------------------------------------------------------
# Only what this script runs: tests/<folder>/*_gpu_test.cpp build into test_<folder>_gpu.
targets=(coopgnn_microbench coopgnn)
for f in tests/*/*_gpu_test.cpp; do
  t="test_$(basename "$(dirname "$f")")_gpu"
  [[ " ${targets[*]} " == *" $t "* ]] || targets+=("$t")
done
build_status=ok
configure_args=(--preset cuda)
if ((debug_sync)); then configure_args+=(-DCOOPGNN_DEBUG_SYNC=ON); else configure_args+=(-DCOOPGNN_DEBUG_SYNC=OFF); fi
if ! run_step configure 60 cmake "${configure_args[@]}"; then
  build_status=FAILED
elif ! run_step build 240 cmake --build --preset cuda -j"$(nproc)" --target "${targets[@]}"; then
  build_status=FAILED
fi
[[ $build_status == ok ]] || failed=1

# ---- 2. tests ----------------------------------------------------------------------------------
tests_passed=0
tests_failed=0
tests_status=skipped
if [[ $build_status == ok ]]; then
  tests_status=ok
  run_step ctest 150 ctest --test-dir "$build_dir" -L gpu --output-on-failure -j4 \
    --timeout 90 || tests_status=FAILED
  summary_line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' \
    "$log_dir/ctest.log" | tail -1 || true)
  if [[ -n $summary_line ]]; then
    total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary_line")
    tests_failed=$(sed -E 's/.*tests passed, ([0-9]+) tests failed.*/\1/' <<<"$summary_line")
    tests_passed=$((total - tests_failed))
  fi
  [[ $tests_status == ok && $tests_failed -eq 0 ]] || failed=1
fi

# ---- 3. microbenchmarks -------------------------------------------------------------------------
bench_status=skipped
json="$out_dir/microbench.json"
if [[ $build_status == ok ]]; then
  bench_status=ok
  filter='sample_ns_fanout10/18|gather_|alltoall/1048576/4|spmm_vs_cusparse'
  bench_cap=60
  ((large)) && filter='.' && bench_cap=300
  run_step microbench "$bench_cap" "$build_dir/bench/coopgnn_microbench" \
    --benchmark_format=console --benchmark_out="$json" --benchmark_out_format=json \
    --benchmark_filter="$filter" --benchmark_min_time=0.2 || bench_status=FAILED
  grep -q 'ERROR OCCURRED' "$log_dir/microbench.log" && bench_status=FAILED
  [[ $bench_status == ok ]] || failed=1
fi

# ---- 3b. end to end -----------------------------------------------------------------------------
# coopgnn compare on the bundled Cora with 4 PEs sharing the GPU (peer-copy communicator): both
# modes train on the device; the table ends up in the summary.
e2e_status=skipped
if [[ $build_status == ok ]]; then
  e2e_status=ok
  rm -f "$out_dir/e2e.jsonl"
  run_step e2e 60 "$build_dir/coopgnn" compare --backend cuda --pes 4 --pes-per-gpu 4 \
    --epochs 3 --no-progress --metrics-out "$out_dir/e2e.jsonl" || e2e_status=FAILED
  [[ $e2e_status == ok ]] || failed=1
fi

# ---- 3c. cost model against the GPU -------------------------------------------------------------
# One configuration on the CUDA backend, P = 1 (one PE per GPU, as the model assumes); the model
# is validated only by runs like this one (docs/results/report.md says so until one exists).
model_status=skipped
model_dir="$out_dir/model_check"
if [[ $build_status == ok ]]; then
  model_status=ok
  mkdir -p "$model_dir"
  data_dir="${TMPDIR:-/tmp}/coopgnn-model-check"
  [[ -d $data_dir/rmat18 ]] ||
    run_step model_data 60 "$build_dir/coopgnn" generate rmat "$data_dir/rmat18" --scale 18 \
      --with-task || model_status=FAILED
  if [[ $model_status == ok ]]; then
    run_step model_check 120 "$build_dir/coopgnn" bench modes --backend cuda \
      --dataset "$data_dir/rmat18" --sampler labor --fanouts 10,10,10 --batch-size 1024 --pes 1 \
      --batches 8 --warmup 2 --machines DGX-H200 --feature-placement device \
      --out "$model_dir" || model_status=FAILED
  fi
  if [[ $model_status == ok ]] && command -v python3 >/dev/null; then
    python3 - "$model_dir" <<'PY' | tee "$log_dir/model_vs_measured.log" || model_status=FAILED
import glob, json, sys
path = sorted(glob.glob(sys.argv[1] + "/modes_*.json"))[0]
j = json.load(open(path))
stages = ["sample", "feature_load", "forward", "backward", "communication", "optimizer", "total"]
print(f"{path}: measured on {j['host']['device']} vs MODELLED for "
      f"{j['cost_model']['machines'][0]['name']} (ratio = measured / modelled)")
print(f"{'mode':<12}{'P':>3}  {'stage':<14}{'measured s':>13}{'modelled s':>13}{'ratio':>10}")
for r in j["rows"]:
    meas, mod = r["seconds_per_batch"], r["modelled"][0]["seconds_per_batch"]
    for s in stages:
        a, b = meas.get(s, 0.0), mod.get(s, 0.0)
        ratio = f"{a / b:10.3g}" if b > 0 else f"{'-':>10}"
        print(f"{r['mode']:<12}{r['pes']:>3}  {s:<14}{a:13.3e}{b:13.3e}{ratio}")
PY
  fi
  [[ $model_status == ok ]] || failed=1
fi

# ---- 4. compute-sanitizer -----------------------------------------------------------------------
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
san_errors=0
san_status=skipped
san_skipped=()
san_incomplete=()
if [[ $build_status == ok ]]; then
  san_status=ok
  shopt -s nullglob
  gpu_tests=("$build_dir"/tests/test_*_gpu)
  shopt -u nullglob
  if [[ ${#gpu_tests[@]} -eq 0 || ! -x $sanitizer ]]; then
    san_status=FAILED
    echo "==> sanitizer: no GPU test executables or no compute-sanitizer"
  fi
  # memcheck on every GPU test executable; racecheck (shared-memory hazards) only where our own
  # kernels use shared memory, the rest being CUB's: it is the slowest tool.
  runs=()
  # The end-to-end trainer tests run whole epochs: under memcheck only the single-PE steps.
  for exe in "${gpu_tests[@]}"; do
    f=${SANITIZER_FILTER:-*}
    [[ $(basename "$exe") == test_pipeline_gpu && -z ${SANITIZER_FILTER:-} ]] &&
      f='*SinglePeMatchesTheHostBackend/0*'
    runs+=("memcheck|$exe|$f")
  done
  [[ -x $build_dir/tests/test_kernels_gpu ]] &&
    runs+=("racecheck|$build_dir/tests/test_kernels_gpu|${RACECHECK_FILTER:-dense_gpu.*}")
  for run in "${runs[@]}"; do
    IFS='|' read -r tool exe filter <<<"$run"
    name="sanitize_${tool}_$(basename "$exe")"
    rc=0
    run_step "$name" 75 "$sanitizer" --tool "$tool" --error-exitcode 3 \
      "$exe" --gtest_filter="$filter" || rc=$?
    n=$({ grep -Eo 'ERROR SUMMARY: [0-9]+' "$log_dir/$name.log" || true; } |
      awk '{s += $3} END {print s + 0}')
    san_errors=$((san_errors + n))
    # Out of budget or time is incomplete coverage, not a defect; errors and crashes fail.
    if ((rc == 125)); then
      san_skipped+=("$name")
    elif ((rc == 124 || rc == 137)); then
      san_incomplete+=("$name")
    elif ((rc != 0)); then
      san_status=FAILED
    fi
  done
  ((${#san_skipped[@]} + ${#san_incomplete[@]} == 0)) || [[ $san_status != ok ]] ||
    san_status=incomplete
  [[ $san_status != FAILED && $san_errors -eq 0 ]] || failed=1
fi

# ---- 5. summary ---------------------------------------------------------------------------------
ratios="(none)"
if [[ -s $json ]] && command -v python3 >/dev/null; then
  ratios=$(python3 - "$json" <<'PY' || true
import json, sys
rows = []
for b in json.load(open(sys.argv[1])).get("benchmarks", []):
    for key in ("ratio_vs_d2d", "ratio_vs_h2d", "edges_per_second", "gather_GBps",
                "alltoall_GBps", "speedup"):
        if key in b:
            v = b[key]
            rows.append(f"  {b['name']:<36} {key:<18} {v:.3g}")
print("\n".join(rows) if rows else "(none)")
PY
  )
fi
elapsed=$((SECONDS - start))
echo
echo "================ device check summary (${elapsed}s of ${budget}s) ================"
printf '%-22s %s\n' "build" "$build_status"
printf '%-22s %s (passed %d, failed %d)\n' "tests" "$tests_status" "$tests_passed" "$tests_failed"
printf '%-22s %s (%d errors)\n' "compute-sanitizer" "$san_status" "$san_errors"
((${#san_incomplete[@]} == 0)) || echo "  timed out: ${san_incomplete[*]}"
((${#san_skipped[@]} == 0)) || echo "  not run (budget): ${san_skipped[*]}"
printf '%-22s %s (json: %s)\n' "microbenchmarks" "$bench_status" "$json"
printf '%-22s %s (log: %s)\n' "end to end" "$e2e_status" "$log_dir/e2e.log"
printf '%-22s %s (json: %s)\n' "cost model check" "$model_status" "$model_dir"
echo "key benchmark numbers:"
echo "$ratios"
if [[ -s $log_dir/e2e.log ]]; then
  echo "coopgnn compare --backend cuda --pes 4 --pes-per-gpu 4 (Cora, 3 epochs):"
  tail -n 16 "$log_dir/e2e.log"
fi
if [[ -s $log_dir/model_vs_measured.log ]]; then
  echo "cost model vs GPU (measured / modelled per stage):"
  cat "$log_dir/model_vs_measured.log"
fi
if ((failed)); then
  echo "RESULT: FAILED (logs in $log_dir)"
  exit 1
fi
echo "RESULT: OK"
