#!/usr/bin/env bash
# Builds the libFuzzer reader targets (CMake preset `fuzz`: clang, ASan + UBSan, host only) and
# runs each one after the other, from its seed corpus tests/fuzz/corpus/<target>/ (read only; new
# inputs go to build/fuzz/corpus/<target>/, crashes to build/fuzz/artifacts/<target>/).
#
# Usage: tools/fuzz.sh [--time SECONDS] [--runs N] [--no-build] [TARGET...]
#   --time SECONDS  per target (default 60); --runs N  executions per target (both: the first
#                   reached ends the target)
#   TARGET          npy npz metadata ogb snap lightgcn musae partition link torch (default: all)
# Every run uses -rss_limit_mb=2048 -timeout=${FUZZ_TIMEOUT:-10} (seconds of wall time per input:
# raise FUZZ_TIMEOUT for campaigns under nice on a loaded machine, where a starved process can
# pass 10 s on an input that takes 0.2 s). Exit status 1 when any target found a crash,
# a hang or an out-of-memory (its artifact path is printed); the last libFuzzer status line of
# each target (executions, wall and CPU seconds, coverage, peak RSS) is printed as a summary and
# appended as one JSON line to build/fuzz/campaigns.jsonl (the campaign ledger,
# tests/fuzz/CAMPAIGNS.md).
# Needs clang and libFuzzer (Debian: clang, libclang-rt-dev; tools/setup.sh --fuzz installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

ALL=(npy npz metadata ogb snap lightgcn musae partition link torch)
limit=()
build=1
targets=()
while (($#)); do
  case "$1" in
    --time) limit+=(-max_total_time="$2"); shift 2 ;;
    --runs) limit+=(-runs="$2"); shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=("${ALL[@]}")
((${#limit[@]})) || limit=(-max_total_time=60)

if ((build)); then
  build_start=$SECONDS
  cmake --preset fuzz >/dev/null
  cmake --build build/fuzz -j"${JOBS:-2}" --target coopgnn_fuzzers
  echo "fuzz.sh: build of the fuzz targets: $((SECONDS - build_start)) s"
fi

status=0
summary=()
for t in "${targets[@]}"; do
  exe=build/fuzz/tests/fuzz/${t}_fuzz
  [[ -x $exe ]] || { echo "fuzz.sh: no target $t ($exe)" >&2; exit 2; }
  work=build/fuzz/corpus/$t
  art=build/fuzz/artifacts/$t
  mkdir -p "$work" "$art"
  log=build/fuzz/$t.log
  echo "fuzz.sh: $t ${limit[*]} (log $log)"
  rc=0
  TIMEFORMAT='%R %U %S'
  tm=$({ time "$exe" -rss_limit_mb=2048 -timeout="${FUZZ_TIMEOUT:-10}" "${limit[@]}" -print_final_stats=1 \
    -artifact_prefix="$art/" "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1; } 2>&1) || rc=$?
  read -r wall usr sys <<<"$tm" || true
  wall=${wall:-null} usr=${usr:-0} sys=${sys:-0}
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  peak=$(grep -E '^stat::peak_rss_mb' "$log" | awk '{print $2}' || true)
  cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
  line="$t: rc=$rc executions=${execs:-?} wall_s=$wall cpu_s=$cpu peak_rss_mb=${peak:-?} | $last"
  printf '{"date":"%s","target":"%s","rc":%d,"executions":%s,"wall_s":%s,"cpu_s":%s,"peak_rss_mb":%s,"commit":"%s"}\n' \
    "$(date -u +%FT%TZ)" "$t" "$rc" "${execs:-null}" "$wall" "$cpu" "${peak:-null}" \
    "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" >>build/fuzz/campaigns.jsonl
  if ((rc != 0)); then
    status=1
    line+=" | FAILED: $(grep -E 'ERROR: libFuzzer|ERROR: AddressSanitizer|runtime error|SUMMARY' "$log" | head -2 | tr '\n' ' ')"
    line+=" artifacts: $(ls "$art" | tr '\n' ' ')"
  fi
  echo "$line"
  summary+=("$line")
done
echo "---- fuzz.sh summary"
printf '%s\n' "${summary[@]}"
exit $status
