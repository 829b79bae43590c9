#!/usr/bin/env bash
# The test suite: what README's "Quick start" names and CI runs (.ci/run calls this script and
# nothing else). Installs the dependencies, then
#   1. the default preset (Release; CUDA when nvcc is found): build, ctest (labels gpu|large out);
#   2. the debug preset (Debug, ASan + UBSan with -fno-sanitize-recover, host only): build, the
#      same ctest selection with ASAN/UBSAN/LSAN_OPTIONS from CMakePresets.json's `debug` test
#      preset; any sanitizer report fails its test;
#   3. the fuzz preset (clang, libFuzzer + ASan + UBSan, the readers only): every reader target
#      runs a short fixed number of executions from its committed corpus (tools/fuzz.sh --runs;
#      FUZZ_RUNS, default 20000); a crash, hang or out-of-memory fails the suite. Long campaigns
#      are run by hand (tests/fuzz/README.md, tests/fuzz/CAMPAIGNS.md).
# ThreadSanitizer is not part of it (see README, "Sanitizers"):
#   cmake --preset tsan && cmake --build --preset tsan && ctest --preset tsan
# Each phase's wall time is printed as it ends ("test.sh: phase NAME: S s") and all of them again
# at the end, with the ccache hit count when ccache is installed: where CI's time goes.
set -euo pipefail
cd "$(dirname "$0")/.."

phases=()
phase() {  # phase NAME COMMAND...: runs COMMAND, records its wall seconds under NAME
  local name=$1 start=$SECONDS
  shift
  "$@"
  phases+=("$(printf '%-14s %5d s' "$name" $((SECONDS - start)))")
  echo "test.sh: phase $name: $((SECONDS - start)) s"
}
summary() {
  echo "test.sh: wall seconds per phase (total $SECONDS s):"
  local p
  for p in "${phases[@]}"; do echo "  $p"; done
  if command -v ccache >/dev/null; then ccache --show-stats 2>/dev/null | grep -iE 'hits|misses' | head -4 || true; fi
}
trap summary EXIT

phase setup ./tools/setup.sh --fuzz
phase default-build bash -c 'cmake --preset default && cmake --build --preset default'
phase default-test ctest --preset default
phase debug-build bash -c 'cmake --preset debug && cmake --build --preset debug'
phase debug-test ctest --preset debug
phase fuzz ./tools/fuzz.sh --runs "${FUZZ_RUNS:-20000}" --time 600
