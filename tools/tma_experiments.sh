#!/usr/bin/env bash
# The TMA comparison of docs/results/tma (Zhu et al. 2023, Tables 2, 3 and 6 in shape) on one
# machine: RandomTMA, SuperTMA, PSGD-PA, LLCG and GGS with M = 3 trainers (mpirun -np 4), two seeds
# each, plus F = 1 (one of 3 parts dropped) for the three partitioned averaging schemes. Every run
# writes OUT/<dataset>/<scheme>-F<f>-s<seed>/ (tma.jsonl, summary.json); then
# `coopgnn report OUT` draws the tables and curves.
#
# usage: tools/tma_experiments.sh COOPGNN OUT DATASET_DIR [DATASET_DIR...]
# env:   TIME_LIMIT (s, default 120), INTERVAL (s, default 10), SEEDS ("1 2"), EXTRA (more
#        coopgnn tma options), SCHEMES ("randomtma supertma psgd-pa llcg ggs"), DROP_SCHEMES
#        ("randomtma supertma psgd-pa"), MPIRUN_FLAGS (default: loopback, oversubscribed)
set -euo pipefail
coopgnn=$(realpath "$1"); out=$2; shift 2
time_limit=${TIME_LIMIT-120}
interval=${INTERVAL-10}
seeds=${SEEDS-"1 2"}
schemes=${SCHEMES-"randomtma supertma psgd-pa llcg ggs"}
drop_schemes=${DROP_SCHEMES-"randomtma supertma psgd-pa"}
flags=${MPIRUN_FLAGS:-"--oversubscribe --bind-to none --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo"}
# Scaled to a small host: a short interval and time limit (the paper: 2 min and 4 h), lr 0.01
# (the paper: 0.001 over hours), fanouts 5,10 (the paper: 10,25).
model=${MODEL:-"--model sage --hidden 64 --layer-norm true --activation prelu --decoder mlp --fanouts 5,10 --batch-size 1024 --negatives 1 --lr 0.01 --weight-decay 0 --dropout 0 --pes 1 --mode independent"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {  # dataset_dir scheme F seed
  local ds=$1 scheme=$2 f=$3 seed=$4 name dir np drop=""
  name=$(basename "$ds")
  dir=$out/$name/$scheme-F$f-s$seed
  np=4
  if [[ $f == 1 ]]; then drop="--parts 3 --drop-parts 2"; np=3; fi
  mkdir -p "$dir"
  echo "== $name $scheme F=$f seed $seed -> $dir"
  # shellcheck disable=SC2086
  timeout $((time_limit * 3 + 300)) mpirun -np $np $flags "$coopgnn" tma --dataset "$ds" \
    --scheme "$scheme" --interval "$interval" --time-limit "$time_limit" --seed "$seed" \
    --partition-seed "$seed" $drop $model ${EXTRA:-} --no-progress --out "$dir" \
    > "$dir/stdout.txt" 2> "$dir/stderr.txt" || echo "   failed (see $dir/stderr.txt)"
  tail -1 "$dir/stdout.txt"
}
for ds in "$@"; do
  for seed in $seeds; do
    for scheme in $schemes; do run "$ds" "$scheme" 0 "$seed"; done
  done
  for scheme in $drop_schemes; do run "$ds" "$scheme" 1 1; done
done
