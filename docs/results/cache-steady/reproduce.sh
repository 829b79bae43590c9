#!/usr/bin/env bash
# Steady-state feature-cache miss rates under dependent minibatching: LABOR, fanouts 10,10,10,
# B = 1024, cache of 10% of |V| per PE (and 25% / 50% on twitter), kappa 1 vs 256, P = 1 and 4.
# The first epoch (cnr2000) or the first 48 batches (twitter) only warm the caches.
# Datasets as in docs/results/reproduce.sh. Run from the repository root after building.
#   docs/results/cache-steady/reproduce.sh [BUILD_DIR] [DATA_DIR]
set -euo pipefail
BIN=${1:-build/default}/coopgnn
DATA=${2:-/tmp/coopgnn-data}
OUT=docs/results/cache-steady
$BIN bench cache --dataset $DATA/cnr2000-task --kappas 1,256 --fractions 0.1 --pes 1,4 \
  --policies lru,s3fifo --epochs 2 --warmup 191 --no-plots --out $OUT
$BIN bench cache --dataset $DATA/twitter-task --kappas 1,256 --fractions 0.1 --pes 1,4 \
  --policies lru,s3fifo --epochs 6 --warmup 48 --no-plots --out $OUT
$BIN bench cache --dataset $DATA/twitter-task --kappas 1,256 --fractions 0.25,0.5 \
  --modes cooperative --pes 1,4 --policies lru,s3fifo --epochs 6 --warmup 48 --no-plots \
  --out $OUT/twitter-larger-cache
# LABOR's layer dependency (every layer uses the same variates): fewer distinct vertices per
# batch (30 instead of 37 rows per seed on twitter), so the same caches hold more of it.
$BIN bench cache --dataset $DATA/twitter-task --kappas 1,256 --fractions 0.1 --pes 1,4 \
  --policies lru,s3fifo --epochs 6 --warmup 48 --layer-dependency --no-plots \
  --out $OUT/twitter-layer-dependency
$BIN bench cache --dataset $DATA/twitter-task --kappas 1,256 --fractions 0.1 --pes 4 \
  --modes cooperative --policies sieve,clock,setassoc --epochs 6 --warmup 48 \
  --layer-dependency --no-plots --out $OUT/twitter-layer-dependency/other-policies
$BIN bench cache --dataset $DATA/cnr2000-task --kappas 1,256 --fractions 0.1 --pes 1,4 \
  --policies lru,s3fifo --epochs 2 --warmup 191 --layer-dependency --no-plots \
  --out $OUT/cnr2000-layer-dependency
$BIN report $OUT --title "Feature caches at steady state (dependent minibatching, K = 1 vs K = 256)"
$BIN report $OUT/twitter-larger-cache --title "twitter with caches of 25% and 50% of |V| per PE"
$BIN report $OUT/twitter-layer-dependency --title "twitter, 10% of |V| per PE, LABOR layer dependency"
$BIN report $OUT/cnr2000-layer-dependency --title "cnr2000, 10% of |V| per PE, LABOR layer dependency"
$BIN report $OUT/twitter-layer-dependency/other-policies --title "twitter, layer dependency, SIEVE, CLOCK and set-associative"
