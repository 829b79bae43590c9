#!/usr/bin/env bash
# Regenerates docs/results: converts the raw datasets (the SNAP edge lists of cnr-2000 and
# twitter in $COOPGNN_SHARED_DATA, laid out as data/README.md "Raw datasets" says; needed only for
# datasets not yet in DATA_DIR), attaches synthetic tasks to the structure-only graphs, generates
# an R-MAT graph, runs `bench work` and `bench modes` on each, `bench cache` on cnr2000, and
# renders the report. Run from the repository root after building (README.md).
#   docs/results/reproduce.sh [BUILD_DIR] [DATA_DIR]
set -euo pipefail
BIN=${1:-build/default}/coopgnn
DATA=${2:-/tmp/coopgnn-data}
SHARED=${COOPGNN_SHARED_DATA:-}
OUT=docs/results
mkdir -p "$DATA"

[[ -d $DATA/cnr2000 ]] || $BIN convert --from snap ${SHARED:?set COOPGNN_SHARED_DATA}/cnr2000/cnr-2000.txt.gz $DATA/cnr2000 --symmetrize --name cnr2000
[[ -d $DATA/twitter ]] || $BIN convert --from snap ${SHARED:?set COOPGNN_SHARED_DATA}/twitter/twitter_combined.txt.gz $DATA/twitter --symmetrize --name twitter
[[ -d $DATA/cnr2000-task ]] || $BIN generate task $DATA/cnr2000 $DATA/cnr2000-task --classes 16 --feature-dim 64 --name cnr2000-task
[[ -d $DATA/twitter-task ]] || $BIN generate task $DATA/twitter $DATA/twitter-task --classes 16 --feature-dim 64 --name twitter-task
[[ -d $DATA/rmat18 ]] || $BIN generate rmat $DATA/rmat18 --scale 18 --with-task

[[ -d $DATA/rmat20-f128 ]] || $BIN generate rmat $DATA/rmat20-f128 --scale 20 --with-task --feature-dim 128

# Work counts, and cooperative vs independent with NS and LABOR. `bench modes` measures on this
# machine and MODELS the DGX machines of bench/machines.yaml from the counted work.
for ds in cnr2000-task twitter-task rmat18; do
  [[ ${MODES_ONLY:-0} == 1 ]] || $BIN bench work --dataset $DATA/$ds --fanouts 10,10,10 --repeats 3 --out $OUT
  for sampler in ns labor; do
    $BIN bench modes --dataset $DATA/$ds --sampler $sampler --fanouts 10,10,10 --batch-size 1024 \
      --pes 1,2,4,8 --batches 8 --warmup 1 --out $OUT
  done
done
# The paper's setup (3 layers, fanout 10, 1024 seeds per PE, LABOR, features over UVA) on an
# R-MAT graph of 2^20 vertices with 128 features; 2 measured batches per point (host time).
$BIN bench modes --dataset $DATA/rmat20-f128 --sampler labor --fanouts 10,10,10 --batch-per-pe 1024 \
  --pes 1,2,4,8 --batches 2 --warmup 1 --feature-placement uva --tag paper --out $OUT
# The paper's four settings (NS; LABOR; LABOR + cache; LABOR kappa 256 + cache) for both protocols
# with its model (SAGE-mean, 3 layers of fanout 10, hidden 1024, TF32 GEMMs, features over UVA) on
# cnr2000; 512 seeds per PE, a setassoc cache of 10% of |V| per PE and P = 2, 4 are our choices
# (docs/results/cost-model.md, "The paper's grid").
$BIN bench modes --dataset $DATA/cnr2000-task --fanouts 10,10,10 --batch-per-pe 512 --pes 2,4 \
  --batches 2 --warmup 1 --model sage --hidden 1024 --gemm-math tf32 --feature-placement uva \
  --paper-settings --cache-policy setassoc --cache-fraction 0.1 --tag paper-grid --out $OUT
# The paper's four settings in the authors' configuration (SAGE-mean, 3 layers of fanout 10,
# hidden 1024, TF32 GEMMs, 1024 seeds per PE, features over UVA, a setassoc cache of 500,000 rows
# per PE) on an R-MAT graph of 2^22 vertices with 128 float32 features, P = 4 and 8
# (docs/results/crossover.md, "The paper's setup at 2^22").
[[ -d $DATA/rmat22-f128 ]] || $BIN generate rmat $DATA/rmat22-f128 --scale 22 --with-task --feature-dim 128
$BIN bench modes --dataset $DATA/rmat22-f128 --fanouts 10,10,10 --batch-per-pe 1024 --pes 4,8 \
  --batches 1 --warmup 1 --model sage --hidden 1024 --gemm-math tf32 --feature-placement uva \
  --paper-settings --cache-policy setassoc --cache-rows 500000 --seed 1 --tag paper-grid --out $OUT
# The crossover map (R-MAT 2^20 with 128 float32 and with 768 float16 features, hidden x P x seeds
# per PE, per machine; hidden 1024, P = 8 on the 2^22 graph and on a 2^24 graph with 128 float16
# features, the latter also modelled at 4 bytes per element) and its heat maps (PLOT_PYTHON: a
# Python with matplotlib). bench modes on the 2^24 graph holds about 9 GB (CSC and features).
[[ -d $DATA/rmat20-f768h ]] || $BIN generate rmat $DATA/rmat20-f768h --scale 20 --with-task --feature-dim 768 --feature-dtype float16
[[ -d $DATA/rmat24-f128h ]] || $BIN generate rmat $DATA/rmat24-f128h --scale 24 --with-task --feature-dim 128 --feature-dtype float16
python3 tools/crossover.py --coopgnn $BIN --dataset $DATA/rmat20-f128 --feature-dataset $DATA/rmat20-f768h \
  --size-dataset $DATA/rmat22-f128 --size-feature-bytes 0 --size-dataset $DATA/rmat24-f128h --size-feature-bytes 4 \
  --out $OUT --batches 1
${PLOT_PYTHON:-python3} tools/crossover.py --plot --out $OUT
[[ ${MODES_ONLY:-0} == 1 ]] && exec $BIN report $OUT --title "coopgnn: cooperative vs independent minibatching (host backend)"

# Feature-cache miss rate vs kappa (one epoch of cnr2000, cache of 10% of |V| per PE).
$BIN bench cache --dataset $DATA/cnr2000-task --fractions 0.1 --pes 1,4 \
  --policies lru,setassoc,s3fifo --epochs 1 --sample-threads 2 --no-plots --out $OUT
$BIN report $OUT --title "coopgnn: cooperative vs independent minibatching (host backend)"
