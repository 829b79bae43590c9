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
# at the end, with this run's ccache hits and misses when ccache is installed: where CI's time
# goes.
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
ccache_counts() {  # prints "HITS MISSES" of ccache's cumulative statistics (0 0 without ccache)
  if command -v ccache >/dev/null; then
    { ccache --print-stats 2>/dev/null || true; } | awk '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
      $1 == "cache_miss" { m += $2 } END { print h + 0, m + 0 }'
  else
    echo "0 0"
  fi
}
ccache_start=""
summary() {
  echo "test.sh: wall seconds per phase (total $SECONDS s):"
  local p
  for p in "${phases[@]}"; do echo "  $p"; done
  if [[ -n $ccache_start ]] && command -v ccache >/dev/null; then
    local h0 m0 h1 m1
    read -r h0 m0 <<<"$ccache_start"
    read -r h1 m1 <<<"$(ccache_counts)"
    echo "  ccache in this run: $((h1 - h0)) hits, $((m1 - m0)) misses"
  fi
}
trap summary EXIT

phase setup ./tools/setup.sh --fuzz
ccache_start=$(ccache_counts)  # after setup, which may install ccache
phase default-build bash -c 'cmake --preset default && cmake --build --preset default'
phase default-test ctest --preset default
phase debug-build bash -c 'cmake --preset debug && cmake --build --preset debug'
phase debug-test ctest --preset debug
phase fuzz ./tools/fuzz.sh --runs "${FUZZ_RUNS:-20000}" --time 600
