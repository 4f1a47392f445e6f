"""CPU executor benchmarks, each against a named peer measured in the same run.

Peers: NumPy (its OpenBLAS) and PyTorch CPU (oneDNN under its convolutions), when installed; each row compares
with the faster of the two (chosen on rounds of its own). Prints one row per case: our median time, the faster
peer's, and the ratio peer/ours (above 1: we are faster); convolution rows add our compiled graph's temporary
memory. Ours and the peers run interleaved (one call of each in turn, `repeat` rounds) so that a change in the
machine's load touches all alike.
`--threads N` sets every side's thread count: ours (dml.Device(threads=)), PyTorch's (torch.set_num_threads) and
NumPy's BLAS (threadpoolctl's threadpool_limits), so that no peer runs more threads than we do. With more than one
thread, `--block N` runs N calls of one side in a row after a pause: NumPy's OpenBLAS threads spin for about 0.1 s
after each of its calls (and OpenMP's after PyTorch's), holding a core that our next call would use.
Run: python bench/bench_cpu.py [--repeat N] [--threads N] [--only NAME ...] [--cpu-time] [--block N]
"""

import argparse
import contextlib
import os
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import directml as dml

try:
    import torch
except ImportError:
    torch = None


def median_time(fn, repeat):
    return interleaved_medians({"": fn}, repeat)[""]


# What times a call: wall time, or with --cpu-time the process's CPU time (time.process_time), which on one thread
# leaves out the time other processes hold the core (a shared machine's load) but also any idle wait of ours.
clock = time.perf_counter


BLOCK_PAUSE = 0.5
BLOCK_WARMUP = 3
block = 1  # calls of one side in a row in compare() (--block)


def interleaved_medians(fns, repeat, block=1):
    """{name: median seconds} of `repeat` calls of each in `fns`, each warmed up once, then timed in turn: `block`
    calls of one, then `block` of the next, and so on, each round starting one side later than the last: a call runs
    slower after one that filled the caches with other data, and a fixed order would charge that to one side. Blocks
    longer than one leave each side the cores: a peer whose threads spin after its calls (OpenMP's, ONNX Runtime's)
    would take a core from the next side's, so each block starts after a pause of BLOCK_PAUSE seconds in which they
    go to sleep, and BLOCK_WARMUP untimed calls (on this VM the first calls after a pause run slow on every side)."""
    for fn in fns.values():
        fn()  # warm-up: first-dispatch allocations, thread start
    times = {name: [] for name in fns}
    names = list(fns)
    for r in range(-(-repeat // block)):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = fns[name]
            if block > 1:
                time.sleep(BLOCK_PAUSE)
                for _ in range(BLOCK_WARMUP):
                    fn()
            for _ in range(min(block, repeat - len(times[name]))):
                t = clock()
                fn()
                times[name].append(clock() - t)
    return {name: statistics.median(ts) for name, ts in times.items()}


def use_cpu_time(on):
    global clock
    clock = time.process_time if on else time.perf_counter


def row(name, ours, peer_name, peer, note=""):
    print(f"{name:<44} {ours * 1e3:9.3f} ms  {peer_name:<14} {peer * 1e3:9.3f} ms  ratio {peer / ours:5.2f}x  {note}",
          flush=True)


def compare(name, repeat, ours, numpy_fn=None, torch_fn=None, note=""):
    """One row: `ours` against the faster of NumPy and (when installed, under no_grad) PyTorch, interleaved. With two
    peers the faster is chosen on rounds of its own before the timed ones: the smaller of two noisy medians reads
    low, so the rounds that choose a peer would also bias the time it is compared by (against us, where the peers
    are equally fast)."""
    peers = {}
    if numpy_fn:
        peers["numpy"] = numpy_fn
    if torch_fn and torch is not None:
        peers["torch-cpu"] = torch_fn
    if not peers:
        return
    with torch.no_grad() if torch is not None else contextlib.nullcontext():
        if len(peers) > 1:
            chosen = interleaved_medians(peers, max(3, repeat // 3), block)
            peers = {k: peers[k] for k in [min(chosen, key=chosen.get)]}
        t = interleaved_medians({"ours": ours, **peers}, repeat, block)
    (peer,) = peers
    row(name, t["ours"], peer, t[peer], note)


def bench_gemm(device, repeat, m, k, n, dtype=np.float32):
    g = dml.Graph(device)
    a, b = g.input([1, 1, m, k], dtype, name="a"), g.input([1, 1, k, n], dtype, name="b")
    op = g.compile([dml.gemm(a, b)])
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((1, 1, m, k)).astype(dtype), rng.standard_normal((1, 1, k, n)).astype(dtype)
    tA, tB = (torch.from_numpy(A[0, 0]), torch.from_numpy(B[0, 0])) if torch is not None else (None, None)
    compare(f"gemm {np.dtype(dtype).name} [{m}x{k}]@[{k}x{n}]", repeat, lambda: op({"a": A, "b": B}),
            lambda: A[0, 0] @ B[0, 0], lambda: (tA @ tB).numpy())


def bench_elementwise(device, repeat, n):
    g = dml.Graph(device)
    x, y = g.input([1, 1, 1, n], name="x"), g.input([1, 1, 1, n], name="y")
    op = g.compile([dml.add(x, y, fused_activation=dml.FusedActivation.relu())])
    X, Y = np.random.rand(1, 1, 1, n).astype(np.float32), np.random.rand(1, 1, 1, n).astype(np.float32)
    tX, tY = (torch.from_numpy(X), torch.from_numpy(Y)) if torch is not None else (None, None)
    compare(f"add+relu {n} float32", repeat, lambda: op({"x": X, "y": Y}), lambda: np.maximum(X + Y, 0),
            lambda: torch.relu(tX + tY).numpy())


def bench_sigmoid(device, repeat, n):
    g = dml.Graph(device)
    x = g.input([1, 1, 1, n], name="x")
    op = g.compile([dml.activation_sigmoid(x)])
    X = np.random.randn(1, 1, 1, n).astype(np.float32)
    tX = torch.from_numpy(X) if torch is not None else None
    compare(f"sigmoid {n} float32", repeat, lambda: op({"x": X}), lambda: 1 / (1 + np.exp(-X)),
            lambda: torch.sigmoid(tX).numpy())


def bench_softmax(device, repeat, rows, cols):
    g = dml.Graph(device)
    x = g.input([1, 1, rows, cols], name="x")
    op = g.compile([dml.activation_softmax(x, axes=[3])])
    X = np.random.randn(1, 1, rows, cols).astype(np.float32)

    def numpy_softmax():
        e = np.exp(X - X.max(axis=3, keepdims=True))
        return e / e.sum(axis=3, keepdims=True)

    tX = torch.from_numpy(X) if torch is not None else None
    compare(f"softmax [{rows}x{cols}] float32", repeat, lambda: op({"x": X}), numpy_softmax,
            lambda: torch.softmax(tX, 3).numpy())


def bench_batch_norm(device, repeat, shape):
    c = shape[1]
    rng = np.random.default_rng(0)
    mean, var, scale, bias = (rng.random(c).astype(np.float32) + 0.5 for _ in range(4))
    g = dml.Graph(device)
    x = g.input(shape, name="x")
    vec = [g.constant(v.reshape(1, c, 1, 1)) for v in (mean, var, scale, bias)]
    op = g.compile([dml.batch_normalization(x, *vec, spatial=True, epsilon=1e-5)])
    X = rng.standard_normal(shape).astype(np.float32)
    m4, v4, s4, b4 = (v.reshape(1, c, 1, 1) for v in (mean, var, scale, bias))
    t = [torch.from_numpy(v) for v in (X, mean, var, scale, bias)] if torch is not None else None
    compare(f"batch_norm {shape}", repeat, lambda: op({"x": X}), lambda: (X - m4) / np.sqrt(v4 + 1e-5) * s4 + b4,
            lambda: torch.nn.functional.batch_norm(t[0], t[1], t[2], t[3], t[4], eps=1e-5).numpy())


def bench_instance_norm(device, repeat, shape):
    c = shape[1]
    rng = np.random.default_rng(0)
    scale, bias = rng.random(c).astype(np.float32), rng.random(c).astype(np.float32)
    g = dml.Graph(device)
    x = g.input(shape, name="x")
    y = dml.mean_variance_normalization(x, g.constant(scale.reshape(1, c, 1, 1)), g.constant(bias.reshape(1, c, 1, 1)),
                                        axes=[2, 3], normalize_variance=True, epsilon=1e-5)
    op = g.compile([y])
    X = rng.standard_normal(shape).astype(np.float32)

    def numpy_norm():
        mu = X.mean(axis=(2, 3), keepdims=True)
        return (X - mu) / np.sqrt(X.var(axis=(2, 3), keepdims=True) + 1e-5) * scale.reshape(1, c, 1, 1) + \
            bias.reshape(1, c, 1, 1)

    t = [torch.from_numpy(v) for v in (X, scale, bias)] if torch is not None else None
    compare(f"mean_variance_norm (instance) {shape}", repeat, lambda: op({"x": X}), numpy_norm,
            lambda: torch.nn.functional.instance_norm(t[0], weight=t[1], bias=t[2], eps=1e-5).numpy())


def bench_max_pool(device, repeat, shape, k, stride):
    g = dml.Graph(device)
    x = g.input(shape, name="x")
    op = g.compile([dml.max_pooling(x, window_size=[k, k], strides=[stride, stride]).values])
    X = np.random.randn(*shape).astype(np.float32)
    tX = torch.from_numpy(X) if torch is not None else None
    compare(f"max_pool {shape} k{k} s{stride}", repeat, lambda: op({"x": X}),
            torch_fn=lambda: torch.nn.functional.max_pool2d(tX, k, stride).numpy())


def bench_conv(device, repeat, n, c, hw, m, k, groups=1, stride=1):
    if torch is None:
        print(f"conv {c}->{m} {hw}x{hw} k{k}: skipped (PyTorch not installed)")
        return
    g = dml.Graph(device)
    x = g.input([n, c, hw, hw], name="x")
    w_data = np.random.randn(m, c // groups, k, k).astype(np.float32) * 0.1
    b_data = np.random.randn(m).astype(np.float32)
    y = dml.convolution(x, g.constant(w_data), g.constant(b_data.reshape(1, m, 1, 1)), strides=[stride] * 2,
                        start_padding=[k // 2] * 2, end_padding=[k // 2] * 2, group_count=groups,
                        fused_activation=dml.FusedActivation.relu())
    op = g.compile([y])
    X = np.random.randn(n, c, hw, hw).astype(np.float32)
    tx, tw, tb = torch.from_numpy(X), torch.from_numpy(w_data), torch.from_numpy(b_data)
    kind = "depthwise " if groups == c and groups > 1 else ""
    compare(f"{kind}conv [{n},{c},{hw},{hw}] -> {m} k{k}" + (f" s{stride}" if stride > 1 else "") + " +bias+relu",
            repeat, lambda: op({"x": X}),
            torch_fn=lambda: torch.relu(torch.nn.functional.conv2d(tx, tw, tb, stride, k // 2, 1, groups)).numpy(),
            note=f"temporary {op.temporary_size / 2**20:.1f} MiB")


def peer_blas():
    """threadpoolctl's info on every BLAS loaded but ours (NumPy's), whose thread count the peers' rows run with. Ours
    (DIRECTML_OPENBLAS, loaded once a CPU device exists) stays at one thread: the executor splits products itself."""
    ours = os.environ.get("DIRECTML_OPENBLAS", "")
    return [p for p in threadpool_info() if p["user_api"] == "blas" and
            not (ours and os.path.exists(p["filepath"]) and os.path.samefile(p["filepath"], ours))]


def limit_peer_blas(threads):
    threadpool_limits(limits={p["filepath"]: threads for p in peer_blas()})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=None, help="every side's threads: ours, torch's and NumPy's BLAS")
    parser.add_argument("--only", nargs="*", default=None, help="rows of these groups: gemm, elementwise, softmax, "
                        "batch_norm, instance_norm, max_pool, depthwise, conv")
    parser.add_argument("--cpu-time", action="store_true", help="time by process CPU time (meant for --threads 1)")
    parser.add_argument("--block", type=int, default=1, help="calls of one side in a row, each block after a pause "
                        "(above 1: peers' spinning threads leave the cores before our calls, and ours before theirs)")
    args = parser.parse_args()
    use_cpu_time(args.cpu_time)
    global block
    block = args.block
    device = dml.Device("cpu", threads=args.threads)
    if torch is not None and args.threads:
        torch.set_num_threads(args.threads)
    if args.threads:
        limit_peer_blas(args.threads)
    blas = [f"{os.path.basename(p['filepath'])} {p['num_threads']} threads" for p in peer_blas()]
    print(f"device: {device.name}" + (f"; torch {torch.__version__}, {torch.get_num_threads()} threads" if torch else "") +
          f"; peers' BLAS: {', '.join(blas) or 'none found'}")
    r = args.repeat
    groups = {
        "gemm": [lambda m=m, k=k, n=n: bench_gemm(device, r, m, k, n) for m, k, n in
                 [(256, 256, 256), (1024, 1024, 1024), (2048, 2048, 2048), (64, 4096, 4096)]] +
                [lambda: bench_gemm(device, r, 1024, 1024, 1024, np.float16)],
        "elementwise": [lambda: bench_elementwise(device, r, 1 << 22), lambda: bench_sigmoid(device, r, 1 << 22)],
        "softmax": [lambda: bench_softmax(device, r, 1024, 1000)],
        "batch_norm": [lambda: bench_batch_norm(device, r, [1, 96, 112, 112])],
        "instance_norm": [lambda: bench_instance_norm(device, r, [1, 32, 200, 200])],
        "max_pool": [lambda: bench_max_pool(device, r, [1, 64, 112, 112], 3, 2)],
        "depthwise": [lambda: bench_conv(device, r, 1, 144, 56, 144, 3, groups=144),
                      lambda: bench_conv(device, r, 1, 96, 112, 96, 3, groups=96, stride=2)],
        "conv": [lambda: bench_conv(device, r, 1, 64, 56, 64, 3), lambda: bench_conv(device, r, 1, 256, 28, 256, 1),
                 lambda: bench_conv(device, r, 1, 64, 56, 64, 5), lambda: bench_conv(device, r, 1, 3, 200, 32, 9),
                 lambda: bench_conv(device, r, 1, 32, 200, 3, 9)],
    }
    for name, cases in groups.items():
        if args.only is None or name in args.only:
            for case in cases:
                case()


if __name__ == "__main__":
    main()
