"""The smallest directml program: a matrix product through DML_OPERATOR_GEMM, checked against NumPy.

DirectML tensors are 4-D, so an M x K matrix is the tensor [1, 1, M, K].
Run: python samples/matmul.py [--device cpu|cuda|directml]
"""

import argparse

import numpy as np

import directml as dml
from sample_device import add_device_argument, open_device


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_device_argument(parser)
    parser.add_argument("-m", type=int, default=256)
    parser.add_argument("-k", type=int, default=384)
    parser.add_argument("-n", type=int, default=128)
    args = parser.parse_args()

    device = open_device(args.device)
    graph = dml.Graph(device)
    a = graph.input([1, 1, args.m, args.k], name="a")
    b = graph.input([1, 1, args.k, args.n], name="b")
    product = graph.compile([dml.gemm(a, b)])

    rng = np.random.default_rng(0)
    a_data = rng.standard_normal((args.m, args.k), dtype=np.float32)
    b_data = rng.standard_normal((args.k, args.n), dtype=np.float32)
    # A flat or exactly-shaped array fills the tensor; this one is [M, K] reshaped to the tensor's shape.
    (result,) = product({"a": a_data.reshape(1, 1, args.m, args.k), "b": b_data.reshape(1, 1, args.k, args.n)})

    expected = a_data @ b_data
    error = np.abs(result[0, 0] - expected).max() / np.abs(expected).max()
    print(f"{device.kind} ({device.name}): [{args.m}x{args.k}] @ [{args.k}x{args.n}] -> {result.shape}")
    print(f"max relative error against NumPy: {error:.2e}")
    if not error < 1e-4:
        raise SystemExit("result differs from NumPy")


if __name__ == "__main__":
    main()
