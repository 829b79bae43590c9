#!/usr/bin/env bash
# Regenerates docs/results/tma (the TMA scheme comparison) on one host: datasets, then the five
# schemes x 2 seeds + F = 1 on twitter (generated task) and tolokers (real features), RandomTMA /
# SuperTMA / PSGD-PA on a degree-corrected SBM with homophily 0.8, one run with cooperative
# trainers of P = 2 PEs, then the report. Takes about 75 minutes on the 2-core development host.
# usage: docs/results/tma/reproduce.sh COOPGNN WORK_DIR
# with COOPGNN_SHARED_DATA naming the raw datasets folder (data/README.md, "Raw datasets").
set -euo pipefail
B=$(realpath "$1"); W=$2; here=$(cd "$(dirname "$0")" && pwd); repo=$here/../../..
raw=${COOPGNN_SHARED_DATA:?set COOPGNN_SHARED_DATA to the raw datasets folder (data/README.md)}
mkdir -p "$W"
$B convert --from snap "$raw/twitter/twitter_combined.txt.gz" "$W/twitter" --overwrite
$B generate task "$W/twitter" "$W/twitter-task" --classes 8 --feature-dim 32 --overwrite \
  --train-fraction 0.98 --valid-fraction 0.01 --seed 1
$B split-edges "$W/twitter-task" "$W/twitter-lp" --scheme tma --seed 1 --overwrite       # 1000 negatives
$B convert --from npz "$raw/tolokers/tolokers.npz" "$W/tolokers" --symmetrize --overwrite
$B split-edges "$W/tolokers" "$W/tolokers-lp" --scheme tma --seed 1 --overwrite
$B generate sbm "$W/sbm" --overwrite --nodes 20000 --classes 8 --avg-degree 20 --homophily 0.8 \
  --feature-dim 32 --train-fraction 0.9 --valid-fraction 0.05
$B split-edges "$W/sbm" "$W/sbm-lp" --scheme tma --negatives 200 --overwrite
"$repo/tools/tma_experiments.sh" "$B" "$W/runs" "$W/twitter-lp" "$W/tolokers-lp"
TIME_LIMIT=60 INTERVAL=5 SEEDS=1 SCHEMES="randomtma supertma psgd-pa" DROP_SCHEMES="" \
  "$repo/tools/tma_experiments.sh" "$B" "$W/runs" "$W/sbm-lp"
SEEDS=1 SCHEMES=randomtma DROP_SCHEMES="" MODEL="--model sage --hidden 64 --layer-norm true \
  --activation prelu --decoder mlp --fanouts 5,10 --batch-size 1024 --negatives 1 --lr 0.01 \
  --weight-decay 0 --dropout 0 --pes 2 --mode cooperative" \
  "$repo/tools/tma_experiments.sh" "$B" "$W/cooperative-P2" "$W/twitter-lp"
$B report "$W/runs" --title "TMA comparison (2-core host)"
