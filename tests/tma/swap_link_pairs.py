"""Swaps the destinations of the first training pair and of the first later pair with another
destination in a link split's seeds file ([M, 2] int64 .npy), in place: the same size and
vertices, another split (for the tma test whose ranks disagree on the split).

Usage: swap_link_pairs.py DATASET/set/link_train_seeds.npy
"""
import sys

import numpy as np


def main() -> None:
    path = sys.argv[1]
    pairs = np.load(path)
    other = np.flatnonzero(pairs[:, 1] != pairs[0, 1])
    if other.size == 0:
        sys.exit(f"{path}: every pair has the same destination; nothing to swap")
    i = int(other[0])
    pairs[[0, i], 1] = pairs[[i, 0], 1]
    np.save(path, pairs)


if __name__ == "__main__":
    main()
