#!/usr/bin/env bash
# Records the numbers a refactor must not change: per-epoch train loss, validation/test metric,
# work counters and cache counters of `coopgnn train` for a fixed seed, on the bundled Cora
# (3 epochs; SAGE and GCN) and on a cnr-2000 task (1 epoch, fanouts 10,10,10, batch 1024; SAGE),
# 4 PEs, cooperative and independent, NS and LABOR: 20 runs, one summary line per epoch.
# Compare the summaries of two builds with diff: a refactor that changes no number prints none.
#
# Usage: tools/regression_numbers.sh [--backend host|emulated|cuda] BIN OUTDIR
#   BIN     the coopgnn executable; OUTDIR gets one .jsonl per run and summary.txt
#   The cnr-2000 task is generated once into ${CNR_TASK:-/tmp/cnr2000-task} from
#   $COOPGNN_SHARED_DATA/cnr2000/cnr-2000.txt.gz (data/README.md, "Raw datasets"; convert
#   --symmetrize --drop-self-loops; generate task --classes 16 --feature-dim 64). ~2 min, 2 cores.
set -euo pipefail
backend=host
if [[ ${1:-} == --backend ]]; then backend=${2:?--backend needs a value}; shift 2; fi
if [[ $# -ne 2 || ${1:-} == --help ]]; then sed -n '2,13p' "$0"; exit 2; fi
bin=$1
out=$2
task=${CNR_TASK:-/tmp/cnr2000-task}
mkdir -p "$out"
rm -f "$out"/*.jsonl
if [[ ! -d $task ]]; then
  raw=${COOPGNN_SHARED_DATA:?set COOPGNN_SHARED_DATA to the raw datasets folder (data/README.md)}
  "$bin" convert --from snap "$raw/cnr2000/cnr-2000.txt.gz" "$task.graph" \
    --symmetrize --drop-self-loops >/dev/null
  "$bin" generate task "$task.graph" "$task" --classes 16 --feature-dim 64 >/dev/null
fi
for ds in cora cnr; do
  if [[ $ds == cora ]]; then data=(); epochs=3; extra=(); models=(sage gcn)
  else data=(--dataset "$task"); epochs=1; extra=(--fanouts 10,10,10 --batch-size 1024); models=(sage)
  fi
  for mode in cooperative independent; do
    for sampler in ns labor; do
      for model in "${models[@]}"; do
        echo "regression_numbers: $ds $mode $sampler $model" >&2
        "$bin" train "${data[@]}" "${extra[@]}" --pes 4 --mode "$mode" --sampler "$sampler" \
          --model "$model" --epochs "$epochs" --eval-every 0 --no-progress --quiet \
          --backend "$backend" --metrics-out "$out/$ds-$mode-$sampler-$model.jsonl" >/dev/null
      done
    done
  done
done
python3 - "$out" >"$out/summary.txt" <<'PY'
import json, pathlib, sys
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.jsonl")):
    for line in f.open():
        r = json.loads(line)
        if "epoch" not in r: continue  # the run's selection record
        print(f.name, r["epoch"], repr(r["train_loss"]), r.get("val_metric"), r.get("test_metric"),
              json.dumps(r["work"], sort_keys=True), json.dumps(r.get("cache"), sort_keys=True))
PY
cat "$out/summary.txt"
