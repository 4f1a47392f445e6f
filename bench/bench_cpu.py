"""CPU executor benchmarks, each against a named peer measured in the same run.

Peers: NumPy (its OpenBLAS) for GEMM and element-wise work; PyTorch CPU, when installed, for convolution.
Prints one row per case: our median time, the peer's, and the ratio peer/ours (above 1: we are faster).
Run: python bench/bench_cpu.py [--repeat N]
"""

import argparse
import statistics
import time

import numpy as np

import directml as dml


def median_time(fn, repeat):
    fn()  # warm-up: first-dispatch allocations, thread start
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def row(name, ours, peer_name, peer):
    print(f"{name:<44} {ours * 1e3:9.3f} ms  {peer_name:<14} {peer * 1e3:9.3f} ms  ratio {peer / ours:5.2f}x")


def bench_gemm(device, repeat, m, k, n, dtype=np.float32):
    g = dml.Graph(device)
    a, b = g.input([1, 1, m, k], dtype, name="a"), g.input([1, 1, k, n], dtype, name="b")
    op = g.compile([dml.gemm(a, b)])
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((1, 1, m, k)).astype(dtype), rng.standard_normal((1, 1, k, n)).astype(dtype)
    ours = median_time(lambda: op({"a": A, "b": B}), repeat)
    peer = median_time(lambda: A[0, 0] @ B[0, 0], repeat)
    row(f"gemm {np.dtype(dtype).name} [{m}x{k}]@[{k}x{n}]", ours, "numpy", peer)


def bench_elementwise(device, repeat, n):
    g = dml.Graph(device)
    x, y = g.input([1, 1, 1, n], name="x"), g.input([1, 1, 1, n], name="y")
    op = g.compile([dml.add(x, y, fused_activation=dml.FusedActivation.relu())])
    X, Y = np.random.rand(1, 1, 1, n).astype(np.float32), np.random.rand(1, 1, 1, n).astype(np.float32)
    ours = median_time(lambda: op({"x": X, "y": Y}), repeat)
    peer = median_time(lambda: np.maximum(X + Y, 0), repeat)
    row(f"add+relu {n} float32", ours, "numpy", peer)


def bench_softmax(device, repeat, rows, cols):
    g = dml.Graph(device)
    x = g.input([1, 1, rows, cols], name="x")
    op = g.compile([dml.activation_softmax(x, axes=[3])])
    X = np.random.randn(1, 1, rows, cols).astype(np.float32)

    def numpy_softmax():
        e = np.exp(X - X.max(axis=3, keepdims=True))
        return e / e.sum(axis=3, keepdims=True)

    row(f"softmax [{rows}x{cols}] float32", median_time(lambda: op({"x": X}), repeat), "numpy",
        median_time(numpy_softmax, repeat))


def bench_conv(device, repeat, n, c, hw, m, k):
    try:
        import torch
    except ImportError:
        print(f"conv {c}->{m} {hw}x{hw} k{k}: skipped (PyTorch not installed)")
        return
    g = dml.Graph(device)
    x = g.input([n, c, hw, hw], name="x")
    w_data = np.random.randn(m, c, k, k).astype(np.float32) * 0.1
    y = dml.convolution(x, g.constant(w_data), start_padding=[k // 2] * 2, end_padding=[k // 2] * 2)
    op = g.compile([y])
    X = np.random.randn(n, c, hw, hw).astype(np.float32)
    tx, tw = torch.from_numpy(X), torch.from_numpy(w_data)
    ours = median_time(lambda: op({"x": X}), repeat)
    with torch.no_grad():
        peer = median_time(lambda: torch.nn.functional.conv2d(tx, tw, padding=k // 2).numpy(), repeat)
    row(f"conv [{n},{c},{hw},{hw}] -> {m} k{k}", ours, "torch-cpu", peer)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    device = dml.Device("cpu")
    print(f"device: {device.name}")
    for m, k, n in [(256, 256, 256), (1024, 1024, 1024), (2048, 2048, 2048), (64, 4096, 4096)]:
        bench_gemm(device, args.repeat, m, k, n)
    bench_gemm(device, args.repeat, 1024, 1024, 1024, np.float16)
    bench_elementwise(device, args.repeat, 1 << 22)
    bench_softmax(device, args.repeat, 1024, 1000)
    bench_conv(device, args.repeat, 1, 64, 56, 64, 3)
    bench_conv(device, args.repeat, 1, 256, 28, 256, 1)


if __name__ == "__main__":
    main()
