#!/usr/bin/env python3
"""Fails on an include that points up the layers of the house (docs/design.md section 1).

usage: tools/check_layers.py [--root DIR] [--list]

Each library folder may include its own headers and those of the layers below it, as its CMake
target links them (CMakeLists.txt, coopgnn_layer DEPS); nothing may include a layer above. The
table LAYERS below is that graph: adding a layer or a dependency is one line here and one DEPS
entry there. Scanned: every .hpp, .cpp, .cuh and .cu file under the folders of LAYERS; the
quoted includes of repository headers ("runtime/...", "kernels/...", ...) are checked. Tests,
microbenchmarks and fuzz targets sit on top of everything and are not scanned.

Prints one line per upward include (file:line: layer X includes Y of layer Z, allowed: ...) and
exits 1 when there is one, 0 when there is none; --list prints the table and exits.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

# layer: (folders, layers it may include besides itself: its DEPS, transitively)
LAYERS: dict[str, tuple[list[str], list[str]]] = {
    "core": (["runtime/core"], []),
    "graph": (["runtime/graph"], ["core"]),
    "formats": (["formats"], ["graph"]),
    "comm": (["runtime/comm"], ["core"]),
    "kernels": (["kernels"], ["graph"]),
    "cache": (["cache"], ["kernels"]),
    "models": (["models"], ["kernels"]),
    "pipeline": (["pipeline"], ["models", "cache", "comm"]),
    "tma": (["tma"], ["pipeline"]),
    "bench": (["bench/drivers"], ["pipeline"]),
    "cli": (["tools/coopgnn"], ["bench", "tma", "formats"]),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = (".hpp", ".cpp", ".cuh", ".cu", ".h")


def closure(layer: str) -> set[str]:
    seen, todo = {layer}, [layer]
    while todo:
        for d in LAYERS[todo.pop()][1]:
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def layer_of(path: str) -> str | None:
    """The layer whose folder holds `path` (repository-relative, '/'-separated); the longest
    folder wins (runtime/core before runtime)."""
    best, best_len = None, -1
    for name, (folders, _) in LAYERS.items():
        for f in folders:
            if (path == f or path.startswith(f + "/")) and len(f) > best_len:
                best, best_len = name, len(f)
    return best


def check(root: str) -> list[str]:
    problems = []
    for name, (folders, _) in LAYERS.items():
        allowed = closure(name)
        for folder in folders:
            for dirpath, _, files in os.walk(os.path.join(root, folder)):
                for fn in sorted(files):
                    if not fn.endswith(SOURCES):
                        continue
                    full = os.path.join(dirpath, fn)
                    rel = os.path.relpath(full, root).replace(os.sep, "/")
                    if layer_of(rel) != name:
                        continue  # a sub-folder that belongs to another layer
                    with open(full, encoding="utf-8", errors="replace") as f:
                        for n, line in enumerate(f, 1):
                            m = INCLUDE.match(line)
                            if not m:
                                continue
                            target = layer_of(m.group(1))
                            if target is None:
                                if m.group(1).startswith(("tests/", "tools/", "bench/")):
                                    problems.append(
                                        f"{rel}:{n}: layer {name} includes {m.group(1)}, which "
                                        f"belongs to no library layer")
                                continue
                            if target not in allowed:
                                problems.append(
                                    f"{rel}:{n}: layer {name} includes {m.group(1)} of layer "
                                    f"{target} (allowed: {', '.join(sorted(allowed))})")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--list", action="store_true", help="print the layer table and exit")
    args = ap.parse_args(argv)
    if args.list:
        for name, (folders, deps) in LAYERS.items():
            print(f"{name:<10} {' '.join(folders):<20} may include: "
                  f"{', '.join(sorted(closure(name) - {name})) or '-'}")
        return 0
    problems = check(os.path.abspath(args.root))
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} upward include(s); see docs/design.md section 1",
              file=sys.stderr)
        return 1
    print("check_layers: every include points down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
