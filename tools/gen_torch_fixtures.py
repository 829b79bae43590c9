#!/usr/bin/env python3
"""Writes the torch.save fixtures of tests/graph/torch_tensor_test.cpp into tests/data/torch/.

Run with a Python that has PyTorch and NumPy (the fixtures were made with torch 2.2.1):
    /tmp/dglenv/bin/python tools/gen_torch_fixtures.py [OUT_DIR]

For each readable case NAME it writes NAME.pt (torch.save(tensor, NAME.pt)) and NAME.npy
(np.save of tensor.numpy(), the expected values, which numpy writes in C order even for a
non-contiguous tensor). Cases the reader must reject get only a .pt file. Values are small
integers (exact in every dtype) or fixed binary fractions, so comparisons are exact.
"""
import os
import sys

import numpy as np
import torch


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "tests", "data", "torch")
    os.makedirs(out, exist_ok=True)
    g = torch.Generator().manual_seed(14)

    def ints(n, lo, hi):
        return torch.randint(lo, hi, (n,), generator=g)

    big = torch.arange(10, dtype=torch.int64) * 11 - 20
    cases = {
        "float32_2d": (ints(15, -50, 50).to(torch.float32) / 4).reshape(3, 5),
        "float64_1d": ints(7, -1000, 1000).to(torch.float64) / 8,
        "int64_1d": ints(9, -(2**40), 2**40),
        "int32_2d": ints(8, -(2**31), 2**31 - 1).to(torch.int32).reshape(2, 4),
        "int16_1d": ints(6, -(2**15), 2**15 - 1).to(torch.int16),
        "int8_1d": ints(6, -128, 127).to(torch.int8),
        "uint8_1d": ints(6, 0, 255).to(torch.uint8),
        "bool_1d": ints(7, 0, 2).to(torch.bool),
        "scalar_0d": torch.tensor(2.5, dtype=torch.float32),
        # A transposed view: shape (4, 3), strides (1, 4) over a 12-element storage.
        "transposed_2d": torch.arange(12, dtype=torch.float32).reshape(3, 4).t(),
        # A slice: torch.save writes the whole 10-element storage; offset 3, shape (4,).
        "slice_offset": big[3:7],
        # A strided 2-D view with an offset: rows 1..2, every second column of a (4, 6) tensor.
        "strided_2d": torch.arange(24, dtype=torch.int32).reshape(4, 6)[1:3, ::2],
        "empty_0x5": torch.zeros(0, 5, dtype=torch.float32),
        "requires_grad": torch.tensor([1.5, -2.0, 3.25], requires_grad=True),
    }
    for name, t in cases.items():
        torch.save(t, os.path.join(out, name + ".pt"))
        np.save(os.path.join(out, name + ".npy"), t.detach().numpy())

    # Files the reader must reject.
    torch.save({"a": torch.ones(2), "b": torch.zeros(3)}, os.path.join(out, "dict_of_tensors.pt"))
    torch.save(torch.tensor([1.0, 2.0], dtype=torch.float16), os.path.join(out, "float16.pt"))
    torch.save(torch.ones(2), os.path.join(out, "legacy.pt"), _use_new_zipfile_serialization=False)


if __name__ == "__main__":
    main()
