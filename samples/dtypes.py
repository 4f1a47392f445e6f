"""One graph at float32 and at float16, and what dispatch refuses.

The element type is part of a tensor's description: a graph built for float16 computes in float16 and returns
float16. Arrays are converted to a tensor's type only where the conversion keeps the kind of value (float to
float, int to int) or NumPy calls it safe; anything else must be converted explicitly with .astype().
Run: python samples/dtypes.py [--device cpu|cuda|directml]
"""

import argparse

import numpy as np

import directml as dml
from sample_device import add_device_argument, open_device


def build(device: dml.Device, dtype) -> dml.CompiledOperator:
    """y = relu(x @ w + b), for x [1, 1, 4, 8] and w [1, 1, 8, 3]."""
    graph = dml.Graph(device)
    x = graph.input([1, 1, 4, 8], dtype, name="x")
    w = graph.input([1, 1, 8, 3], dtype, name="w", owned=True)  # weights: bound once with initialize()
    b = graph.input([1, 1, 1, 3], dtype, name="b", owned=True)
    y = dml.gemm(x, w, dml.broadcast(b, [1, 1, 4, 3]), fused_activation=dml.FusedActivation.relu())
    return graph.compile([y])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_device_argument(parser)
    args = parser.parse_args()
    device = open_device(args.device)

    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 1, 4, 8))
    w = rng.standard_normal((1, 1, 8, 3))
    b = rng.standard_normal(3)  # a flat array fills the [1, 1, 1, 3] tensor
    expected = np.maximum(x[0, 0] @ w[0, 0] + b, 0)

    for dtype in (np.float32, np.float16):
        op = build(device, dtype)
        op.initialize({"w": w, "b": b})  # float64 arrays convert to either float type: same kind
        (y,) = op({"x": x})
        error = np.abs(y[0, 0].astype(np.float64) - expected).max()
        print(f"{np.dtype(dtype).name}: result {y.dtype} {y.shape}, max error {error:.1e}")
        if not error < (1e-5 if dtype == np.float32 else 2e-2):
            raise SystemExit(f"{np.dtype(dtype).name} result differs from NumPy")

    op = build(device, np.float16)
    op.initialize({"w": w, "b": b})
    refusals = {
        "an integer array for a float tensor": {"x": x.astype(np.int32)},
        "an array of the wrong shape": {"x": x[..., :4]},
        "an input bound by a name the graph lacks": {"x": x, "z": x},
        "an owned input bound at dispatch": {"x": x, "w": w},
        "a Buffer of another element type": {"x": dml.Buffer(device, x.astype(np.float32))},
    }
    for what, bindings in refusals.items():
        try:
            op(bindings)
        except ValueError as error:
            print(f"refused {what}: {error}")
        else:
            raise SystemExit(f"dispatch accepted {what}")


if __name__ == "__main__":
    main()
