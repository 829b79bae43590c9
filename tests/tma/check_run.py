#!/usr/bin/env python3
"""Checks one `coopgnn tma` output directory (tests/CMakeLists.txt runs it after mpirun).

usage: check_run.py OUT SCHEME TRAINERS [--dropped K,...] [--completed]

Asserts, from the files alone: the start line names the scheme, trainers and dropped parts;
aggregation generations run 1, 2, ... with the last one a STOP; each trainer's step count never
decreases and ends at the final line's count; the final line's aggregation count matches;
best.npy and last.npy hold float32 vectors of the start line's parameter count, and last.npy
equals the last aggregate the evaluator was given (its best, when the last is the best);
a finite test metric for the best and the last aggregate. --completed: the run ended because
every trainer finished its epoch budget (before the time limit). Prints PASS or the failure.
"""
import json
import math
import os
import sys

import numpy as np


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def main():
    out, scheme, trainers = sys.argv[1], sys.argv[2], int(sys.argv[3])
    dropped = []
    if "--dropped" in sys.argv:
        dropped = [int(x) for x in sys.argv[sys.argv.index("--dropped") + 1].split(",")]
    lines = [json.loads(l) for l in open(os.path.join(out, "tma.jsonl")) if l.strip()]
    start, final = lines[0], lines[-1]
    if start["event"] != "start" or final["event"] != "final":
        fail(f"first/last events {start['event']}/{final['event']}")
    if start["scheme"] != scheme or start["trainers"] != trainers:
        fail(f"start line: scheme {start['scheme']} trainers {start['trainers']}")
    if start["dropped_parts"] != dropped or final["dropped_parts"] != dropped:
        fail(f"dropped parts {start['dropped_parts']} vs {dropped}")
    aggs = [l for l in lines if l["event"] == "aggregation"]
    if [a["generation"] for a in aggs] != list(range(1, len(aggs) + 1)):
        fail("generations are not 1, 2, ...")
    if aggs[-1]["command"] != "stop" or any(a["command"] != "average" for a in aggs[:-1]):
        fail("commands: averages then one stop")
    if final["aggregations"] != len(aggs):
        fail(f"final aggregations {final['aggregations']} vs {len(aggs)} lines")
    for t in range(trainers):
        s = [a["steps"][t] for a in aggs]
        if s != sorted(s):
            fail(f"trainer {t + 1} steps decrease: {s}")
        if s[-1] != final["steps"][t]:
            fail(f"trainer {t + 1} final steps {final['steps'][t]} vs last aggregation {s[-1]}")
    if min(final["steps"]) < 1:
        fail(f"a trainer made no step: {final['steps']}")
    n = start["parameters"]
    last = np.load(os.path.join(out, "last.npy"))
    if last.dtype != np.float32 or last.shape != (n,):
        fail(f"last.npy {last.dtype} {last.shape}, expected float32 ({n},)")
    if final["best"]["generation"] is not None:
        best = np.load(os.path.join(out, "best.npy"))
        if best.shape != (n,):
            fail(f"best.npy shape {best.shape}")
        if final["best"]["generation"] == final["last"]["generation"] and not np.array_equal(best, last):
            fail("the last aggregate is the best but best.npy != last.npy")
    for k in ("best", "last"):
        v = final[k]["test"]
        if v is None or not math.isfinite(v) or not 0 <= v <= 1:
            fail(f"{k} test metric {v}")
    if "--completed" in sys.argv and final["seconds"] >= start["time_limit"]:
        fail(f"ran {final['seconds']} s: did not stop at the epoch budget")
    print(f"PASS {scheme}: {len(aggs)} aggregations, steps {final['steps']}, "
          f"test {final['metric']} best {final['best']['test']:.4f} last {final['last']['test']:.4f}")


if __name__ == "__main__":
    main()
