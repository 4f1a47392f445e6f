"""The cuda executor against PyTorch on the same GPU, in the same run.

GEMM (float32 and float16: square 4096 and transformer shapes) and convolution (SD-UNet-like float16 shapes):
throughput of one dispatch (inputs already on the GPU as dml.Buffers, outputs left there) against torch's
matmul / conv2d, both timed per call on the wall clock up to a synchronized result, median of many calls; ratio =
our throughput / torch's. Then the host overhead of dispatching a 100-node element-wise graph, in microseconds per
dispatch, with CUDA-graph replay and without (DIRECTML_CUDA_GRAPHS=0), and torch's eager loop for reference.

Run: python bench/bench_cuda.py [--reps 30] [--json out.json] [--quick]
"""

import argparse
import json
import os
import statistics
import time

import numpy as np

import directml as dml


def median_seconds(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def torch_timer(torch):
    def timed(fn):
        def call():
            fn()
            torch.cuda.synchronize()
        return call
    return timed


def gemm_cases(quick):
    cases = [  # (dtype, b0, b1, M, K, N, trans_b)
        ("float32", 1, 1, 4096, 4096, 4096, False),
        ("float16", 1, 1, 4096, 4096, 4096, False),
        ("float16", 1, 1, 8192, 4096, 4096, False),
        ("float16", 1, 1, 8192, 4096, 4096, True),    # weights stored [out, in], as nn.Linear
        ("float16", 1, 1, 8192, 4096, 11008, True),
        ("float16", 1, 1, 8192, 11008, 4096, True),
        ("float16", 1, 32, 2048, 128, 2048, True),    # attention scores, per head
        ("float32", 1, 1, 8192, 4096, 4096, False),
    ]
    return cases[:3] if quick else cases


def conv_cases(quick):
    cases = [  # (N, C, H, W, Cout, k, stride), float16, padding k // 2
        (2, 4, 64, 64, 320, 3, 1),      # conv_in
        (2, 320, 64, 64, 320, 3, 1),
        (2, 320, 64, 64, 320, 3, 2),    # downsample
        (2, 640, 32, 32, 640, 3, 1),
        (2, 1280, 16, 16, 1280, 3, 1),
        (2, 1280, 8, 8, 1280, 3, 1),
        (2, 640, 32, 32, 1280, 1, 1),   # 1x1 shortcut
    ]
    return cases[1:3] if quick else cases


def bench_gemm(device, torch, reps, quick):
    rows = []
    timed = torch_timer(torch)
    for dtype, b0, b1, m, k, n, tb in gemm_cases(quick):
        rng = np.random.default_rng(0)
        a = rng.standard_normal((b0, b1, m, k)).astype(dtype)
        b = rng.standard_normal((b0, b1, n, k) if tb else (b0, b1, k, n)).astype(dtype)
        g = dml.Graph(device)
        x, y = g.input(a.shape, dtype, name="a"), g.input(b.shape, dtype, name="b")
        op = g.compile([dml.gemm(x, y, trans_b=dml.MatrixTransform.TRANSPOSE if tb else dml.MatrixTransform.NONE)])
        feeds = {"a": dml.Buffer(device, a), "b": dml.Buffer(device, b)}
        ours = median_seconds(lambda: op(feeds, readback=False), reps)
        ta, tbt = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        theirs = median_seconds(timed(lambda: ta @ (tbt.transpose(-1, -2) if tb else tbt)), reps)
        # Agreement on a corner, so that a fast wrong answer does not pass.
        (got,) = op(feeds, readback=False)
        want = (ta @ (tbt.transpose(-1, -2) if tb else tbt)).float().cpu().numpy()
        err = float(np.max(np.abs(got.numpy()[0, 0, :64, :64].astype(np.float32) - want[0, 0, :64, :64])) /
                    (np.max(np.abs(want[0, 0, :64, :64])) + 1e-30))
        flops = 2.0 * b0 * b1 * m * k * n
        rows.append({"case": f"gemm {dtype} [{b0},{b1},{m},{k}]x{'T' if tb else ''}[{k},{n}]",
                     "ours_tflops": flops / ours / 1e12, "torch_tflops": flops / theirs / 1e12,
                     "ratio": theirs / ours, "ours_ms": ours * 1e3, "torch_ms": theirs * 1e3, "rel_err": err})
    return rows


def bench_conv(device, torch, reps, quick):
    rows = []
    timed = torch_timer(torch)
    for n, c, h, w, cout, k, s in conv_cases(quick):
        rng = np.random.default_rng(0)
        x = rng.standard_normal((n, c, h, w)).astype(np.float16)
        f = (rng.standard_normal((cout, c, k, k)) / np.sqrt(c * k * k)).astype(np.float16)
        bias = rng.standard_normal((1, cout, 1, 1)).astype(np.float16)
        p = k // 2
        g = dml.Graph(device)
        xi, fi, bi = (g.input(x.shape, np.float16, name="x"), g.input(f.shape, np.float16, name="f"),
                      g.input(bias.shape, np.float16, name="bias"))
        op = g.compile([dml.convolution(xi, fi, bi, strides=[s, s], start_padding=[p, p], end_padding=[p, p])])
        feeds = {"x": dml.Buffer(device, x), "f": dml.Buffer(device, f), "bias": dml.Buffer(device, bias)}
        ours = median_seconds(lambda: op(feeds, readback=False), reps)
        tx, tf, tbias = torch.from_numpy(x).cuda(), torch.from_numpy(f).cuda(), torch.from_numpy(bias).cuda().flatten()
        conv = lambda: torch.nn.functional.conv2d(tx, tf, tbias, stride=s, padding=p)  # noqa: E731
        theirs = median_seconds(timed(conv), reps)
        (got,) = op(feeds, readback=False)
        want = conv().float().cpu().numpy()
        err = float(np.max(np.abs(got.numpy().astype(np.float32) - want)) / (np.max(np.abs(want)) + 1e-30))
        ho, wo = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
        flops = 2.0 * n * cout * ho * wo * c * k * k
        rows.append({"case": f"conv float16 [{n},{c},{h},{w}] {k}x{k}/{s} -> {cout}",
                     "ours_tflops": flops / ours / 1e12, "torch_tflops": flops / theirs / 1e12,
                     "ratio": theirs / ours, "ours_ms": ours * 1e3, "torch_ms": theirs * 1e3, "rel_err": err})
    return rows


def elementwise_chain(g, x, nodes):
    v = x
    for i in range(nodes):
        v = dml.activation_relu(v) if i % 3 == 0 else (dml.tanh(v) if i % 3 == 1 else v * 1.01)
    return v


def bench_dispatch(device, torch, reps, nodes=100):
    """Wall time per dispatch of a chain of `nodes` tiny element-wise nodes: host overhead plus the GPU's own
    per-kernel latency. torch's CUDA-graph replay of the same chain is the GPU-side floor; a 1-node graph shows our
    fixed cost per dispatch."""
    rows = []
    x = np.random.default_rng(0).standard_normal((1, 256)).astype(np.float32)
    for count, graphs in ((nodes, "1"), (nodes, "0"), (1, "1")):
        os.environ["DIRECTML_CUDA_GRAPHS"] = graphs  # read when a plan is compiled
        g = dml.Graph(device)
        op = g.compile([elementwise_chain(g, g.input(x.shape, name="x"), count)])
        feeds = {"x": dml.Buffer(device, x)}
        t = median_seconds(lambda: op(feeds, readback=False), max(reps, 200), warmup=10)
        rows.append({"case": f"{count}-node element-wise dispatch, CUDA graphs {'on' if graphs == '1' else 'off'}",
                     "us_per_dispatch": t * 1e6})
    os.environ.pop("DIRECTML_CUDA_GRAPHS")
    tx = torch.from_numpy(x).cuda()

    def chain():
        v = tx
        for i in range(nodes):
            v = torch.relu(v) if i % 3 == 0 else (torch.tanh(v) if i % 3 == 1 else v * 1.01)
        return v

    t = median_seconds(torch_timer(torch)(chain), max(reps, 200), warmup=10)
    rows.append({"case": f"{nodes}-node element-wise, torch eager", "us_per_dispatch": t * 1e6})
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        chain()  # warm up on the capturing stream
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        chain()
    t = median_seconds(torch_timer(torch)(graph.replay), max(reps, 200), warmup=10)
    rows.append({"case": f"{nodes}-node element-wise, torch CUDA-graph replay", "us_per_dispatch": t * 1e6})
    return rows


def profile(device, torch, quick):
    """Our kernels' GPU time by name (CUPTI sees every stream of the process), for the convolution cases."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    for n, c, h, w, cout, k, s in conv_cases(quick)[1:4]:
        rng = np.random.default_rng(0)
        x = rng.standard_normal((n, c, h, w)).astype(np.float16)
        f = rng.standard_normal((cout, c, k, k)).astype(np.float16)
        g = dml.Graph(device)
        p = k // 2
        op = g.compile([dml.convolution(g.input(x.shape, np.float16, name="x"), g.input(f.shape, np.float16, name="f"),
                                        strides=[s, s], start_padding=[p, p], end_padding=[p, p])])
        feeds = {"x": dml.Buffer(device, x), "f": dml.Buffer(device, f)}
        for _ in range(3):
            op(feeds, readback=False)
        with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                op(feeds, readback=False)
        print(f"conv [{n},{c},{h},{w}] {k}x{k}/{s} -> {cout}: 10 dispatches")
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=6, max_name_column_width=70))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--quick", action="store_true", help="a few cases only")
    parser.add_argument("--profile", action="store_true", help="also print our kernels' GPU times for some convolutions")
    args = parser.parse_args()
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # float32 GEMM in float32 on both sides (DirectML's too)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True  # torch at its best: cuDNN picks its fastest algorithm
    device = dml.Device("cuda")
    print(f"device: {device.name}; torch {torch.__version__}, {torch.cuda.get_device_name()}")
    rows = bench_gemm(device, torch, args.reps, args.quick) + bench_conv(device, torch, args.reps, args.quick)
    print(f"{'case':58} {'ours TFLOP/s':>12} {'torch':>8} {'ratio':>6} {'ours ms':>8} {'torch ms':>8} {'rel err':>8}")
    for r in rows:
        print(f"{r['case']:58} {r['ours_tflops']:12.1f} {r['torch_tflops']:8.1f} {r['ratio']:6.2f} {r['ours_ms']:8.3f} "
              f"{r['torch_ms']:8.3f} {r['rel_err']:8.1e}")
    overhead = bench_dispatch(device, torch, args.reps)
    for r in overhead:
        print(f"{r['case']:58} {r['us_per_dispatch']:10.1f} us per dispatch")
    if args.profile:
        profile(device, torch, args.quick)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device.name, "rows": rows + overhead}, f, indent=1)


if __name__ == "__main__":
    main()
