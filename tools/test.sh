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
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh --fuzz
cmake --preset default && cmake --build --preset default && ctest --preset default
cmake --preset debug && cmake --build --preset debug && ctest --preset debug
./tools/fuzz.sh --runs "${FUZZ_RUNS:-20000}" --time 600
