"""The cuda executor against PyTorch on the same GPU, in the same run.

GEMM (float32 and float16: square 4096 and transformer shapes), products of one row (a token through a
linear layer), convolution (SD-UNet float16 shapes),
multihead attention (SDXL float16 shapes, against scaled_dot_product_attention), group and layer normalization
(float16), memory-bound operators on tensors of 64 MiB and more (layer norm on LLM shapes, group norm on SDXL's
VAE at 1024x1024, alone and with the swish after it, softmax over rows of 4096, a plain add, swish and the chain
x * sigmoid(x); their GB/s
also as a share of the H200's 4.2 TB/s copy bandwidth), element-wise chains that compile fuses (x * sigmoid(x),
y + y * 0.5, alone and 20 in a row, against eager torch) and a stack of 20 UNet ResNet blocks (against the same
network in eager torch):
throughput of one dispatch (inputs already on the GPU as dml.Buffers, outputs left there) against torch's, both
timed per call on the wall clock up to a synchronized result, median of many calls; ratio = our throughput /
torch's. Then the host overhead of dispatching a 100-node element-wise graph, in microseconds per dispatch, with
CUDA-graph replay and without (DIRECTML_CUDA_GRAPHS=0), and torch's eager loop for reference (compile fuses that
graph's chains: the row names how many nodes it compiled to).

Run: python bench/bench_cuda.py [--reps 30] [--json out.json] [--quick]
     [--only gemm gemv conv attention norm large chain resnet]
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


def kernel_seconds(torch, fn, reps):
    """GPU time per call of the kernels (and memsets) `fn` launches, from CUPTI through torch.profiler, which sees
    every stream of the process (ours too): the work on the device without the host's launch and synchronize."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    return sum(e.self_device_time_total for e in prof.key_averages()) / reps / 1e6


def relative_error(got, want):
    """Max |got - want| / max |want|, element for element in C order (got may be a view of another shape)."""
    want = np.asarray(want, np.float32)
    got = np.asarray(got, np.float32).reshape(want.shape)
    return float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30))


def throughput_row(case, work, unit, ours, theirs, err):
    """`work` in units of `unit` (TFLOP or GB) per call."""
    return {"case": case, f"ours_{unit}": work / ours, f"torch_{unit}": work / theirs, "ratio": theirs / ours,
            "ours_ms": ours * 1e3, "torch_ms": theirs * 1e3, "rel_err": err}


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
        err = relative_error(got.numpy()[0, 0, :64, :64], want[0, 0, :64, :64])
        rows.append(throughput_row(f"gemm {dtype} [{b0},{b1},{m},{k}]x{'T' if tb else ''}[{k},{n}]",
                                   2.0 * b0 * b1 * m * k * n / 1e12, "tflops", ours, theirs, err))
    return rows


def bench_matrix_vector(device, torch, reps, quick):
    """Products of one output row (a token through a linear layer, the weights stored [out, in] as nn.Linear's or
    [in, out]): bound by reading the weights once; GB/s counts the operands read once and the output written once,
    on the wall clock and over the kernels' GPU time, and `roof` is the wall figure as a share of ROOF_GBPS."""
    rows = []
    timed = torch_timer(torch)
    rng = np.random.default_rng(0)
    cases = [  # (dtype, K, N, weights stored [N, K])
        ("float16", 4096, 4096, True), ("float16", 4096, 4096, False), ("float16", 4096, 11008, True),
        ("float16", 11008, 4096, True), ("float32", 4096, 4096, True), ("float32", 4096, 4096, False),
    ]
    for dtype, k, n, tb in cases[:2] if quick else cases:
        a = rng.standard_normal((1, 1, 1, k)).astype(dtype)
        b = (rng.standard_normal((1, 1, n, k) if tb else (1, 1, k, n)) / np.sqrt(k)).astype(dtype)
        g = dml.Graph(device)
        x, y = g.input(a.shape, dtype, name="a"), g.input(b.shape, dtype, name="b")
        op = g.compile([dml.gemm(x, y, trans_b=dml.MatrixTransform.TRANSPOSE if tb else dml.MatrixTransform.NONE)])
        feeds = {"a": dml.Buffer(device, a), "b": dml.Buffer(device, b)}
        ta, tbt = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        product = lambda: ta @ (tbt.transpose(-1, -2) if tb else tbt)  # noqa: E731
        ours = median_seconds(lambda: op(feeds, readback=False), reps)
        theirs = median_seconds(timed(product), reps)
        (got,) = op(feeds, readback=False)
        gb = (a.nbytes + b.nbytes + n * a.itemsize) / 1e9
        r = throughput_row(f"gemv {dtype} [1,{k}]x{'T' if tb else ''}[{k},{n}]", gb, "gbps", ours, theirs,
                           relative_error(got.numpy(), product().float().cpu().numpy()))
        r["roof"] = r["ours_gbps"] / ROOF_GBPS
        r["ours_kernel_gbps"] = gb / kernel_seconds(torch, lambda: op(feeds, readback=False), reps)
        r["torch_kernel_gbps"] = gb / kernel_seconds(torch, product, reps)
        r["kernel_roof"] = r["ours_kernel_gbps"] / ROOF_GBPS
        rows.append(r)
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
        ho, wo = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
        rows.append(throughput_row(f"conv float16 [{n},{c},{h},{w}] {k}x{k}/{s} -> {cout}",
                                   2.0 * n * cout * ho * wo * c * k * k / 1e12, "tflops", ours, theirs,
                                   relative_error(got.numpy(), want)))
    return rows



def attention_cases(quick):
    cases = [  # (batch, query tokens, key tokens, heads, head size), float16: SDXL's UNet self/cross attention
        (2, 4096, 4096, 10, 64),
        (2, 1024, 1024, 20, 64),
        (2, 4096, 77, 10, 64),
        (2, 1024, 77, 20, 64),
    ]
    return cases[:1] if quick else cases


def bench_attention(device, torch, reps, quick):
    """multihead_attention on [batch, tokens, heads * head size] against torch's scaled_dot_product_attention on
    the same memory viewed as [batch, heads, tokens, head size]."""
    rows = []
    timed = torch_timer(torch)
    for b, sq, sk, h, d in attention_cases(quick):
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal((b, s, h * d)).astype(np.float16) for s in (sq, sk, sk))
        g = dml.Graph(device)
        out = dml.multihead_attention(query=g.input(q.shape, np.float16, name="q"),
                                      key=g.input(k.shape, np.float16, name="k"),
                                      value=g.input(v.shape, np.float16, name="v"), head_count=h).output
        op = g.compile([out])
        feeds = {"q": dml.Buffer(device, q), "k": dml.Buffer(device, k), "v": dml.Buffer(device, v)}
        ours = median_seconds(lambda: op(feeds, readback=False), reps)
        tq, tk, tv = (torch.from_numpy(a).cuda().view(b, -1, h, d).transpose(1, 2) for a in (q, k, v))
        sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)  # noqa: E731
        theirs = median_seconds(timed(sdpa), reps)
        (got,) = op(feeds, readback=False)
        want = sdpa().transpose(1, 2).reshape(b, sq, h * d).float().cpu().numpy()
        rows.append(throughput_row(f"attention float16 b{b} q{sq} k{sk} h{h} d{d}", 4.0 * b * h * sq * sk * d / 1e12,
                                   "tflops", ours, theirs, relative_error(got.numpy(), want)))
    return rows


def group_norm(g, x, groups, scale, bias, eps=1e-5):
    """GroupNorm as DirectML spells it: mean_variance_normalization over a [N, G, C / G, H, W] view."""
    n, c, h, w = x.shape
    grouped = dml.reinterpret(x, [n, groups, c // groups, h, w])
    shape = [1, groups, c // groups, 1, 1]
    y = dml.mean_variance_normalization(grouped, g.constant(scale.reshape(shape)), g.constant(bias.reshape(shape)),
                                        axes=[2, 3, 4], normalize_variance=True, epsilon=eps)
    return dml.reinterpret(y, [n, c, h, w])


def bench_normalization(device, torch, reps, quick):
    """Group norm (32 groups, SD-UNet activations) and layer norm (transformer tokens), float16, against torch's
    F.group_norm / F.layer_norm; GB/s counts one read and one write of the activations."""
    rows = []
    timed = torch_timer(torch)
    F = torch.nn.functional
    rng = np.random.default_rng(0)
    for n, c, h, w in [(2, 320, 64, 64), (2, 640, 32, 32), (2, 1280, 16, 16)][: 1 if quick else 3]:
        x = rng.standard_normal((n, c, h, w)).astype(np.float16)
        scale, bias = rng.standard_normal(c).astype(np.float16), rng.standard_normal(c).astype(np.float16)
        g = dml.Graph(device)
        op = g.compile([group_norm(g, g.input(x.shape, np.float16, name="x"), 32, scale, bias)])
        feeds = {"x": dml.Buffer(device, x)}
        ours = median_seconds(lambda: op(feeds, readback=False), reps)
        tx, ts, tb = (torch.from_numpy(a).cuda() for a in (x, scale, bias))
        gn = lambda: F.group_norm(tx, 32, ts, tb, 1e-5)  # noqa: E731
        theirs = median_seconds(timed(gn), reps)
        (got,) = op(feeds, readback=False)
        rows.append(throughput_row(f"group norm float16 [{n},{c},{h},{w}] 32 groups", 2 * x.nbytes / 1e9, "gbps",
                                   ours, theirs, relative_error(got.numpy(), gn().float().cpu().numpy())))
    for b, t, c in [(2, 4096, 640), (2, 1024, 1280), (8, 2048, 4096)][: 1 if quick else 3]:
        x = rng.standard_normal((b, t, c)).astype(np.float16)
        scale, bias = rng.standard_normal(c).astype(np.float16), rng.standard_normal(c).astype(np.float16)
        g = dml.Graph(device)
        op = g.compile([dml.mean_variance_normalization(
            g.input(x.shape, np.float16, name="x"), g.constant(scale.reshape(1, 1, c)), g.constant(bias.reshape(1, 1, c)),
            axes=[2], normalize_variance=True, epsilon=1e-5)])
        feeds = {"x": dml.Buffer(device, x)}
        ours = median_seconds(lambda: op(feeds, readback=False), reps)
        tx, ts, tb = (torch.from_numpy(a).cuda() for a in (x, scale, bias))
        ln = lambda: F.layer_norm(tx, (c,), ts, tb, 1e-5)  # noqa: E731
        theirs = median_seconds(timed(ln), reps)
        (got,) = op(feeds, readback=False)
        rows.append(throughput_row(f"layer norm float16 [{b},{t},{c}]", 2 * x.nbytes / 1e9, "gbps", ours, theirs,
                                   relative_error(got.numpy(), ln().float().cpu().numpy())))
    return rows


ROOF_GBPS = 4200.0  # the H200's device-to-device copy bandwidth


def bench_large(device, torch, reps, quick, kernel_times=True):
    """Memory-bound operators on float16 tensors of 64 MiB and more; GB/s counts each operand read once and the
    output written once, and `roof` is that as a share of ROOF_GBPS; the same bytes over the kernels' GPU time
    (kernel_gbps, kernel_roof) too."""
    rows = []
    timed = torch_timer(torch)
    F = torch.nn.functional
    rng = np.random.default_rng(0)

    def row(case, arrays, op, torch_fn, out_bytes):
        ins = {f"x{i}": a for i, a in enumerate(arrays)}
        feeds = {k: dml.Buffer(device, a) for k, a in ins.items()}
        ours = median_seconds(lambda: op(feeds, readback=False), reps)
        theirs = median_seconds(timed(torch_fn), reps)
        (got,) = op(feeds, readback=False)
        want = torch_fn().float().cpu().numpy()
        gb = (sum(a.nbytes for a in arrays) + out_bytes) / 1e9
        r = throughput_row(case, gb, "gbps", ours, theirs, relative_error(got.numpy(), want))
        r["roof"] = r["ours_gbps"] / ROOF_GBPS
        # The same bytes over the kernels' GPU time: a wall-clock call also holds ~10 us of launch and synchronize,
        # a sixth of a 64 MiB layer norm's time at the roof.
        if kernel_times:
            r["ours_kernel_gbps"] = gb / kernel_seconds(torch, lambda: op(feeds, readback=False), reps)
            r["torch_kernel_gbps"] = gb / kernel_seconds(torch, torch_fn, reps)
            r["kernel_roof"] = r["ours_kernel_gbps"] / ROOF_GBPS
        rows.append(r)

    for b, t, c in [(8, 2048, 4096), (4, 4096, 8192)][: 1 if quick else 2]:  # LLM hidden states
        x = rng.standard_normal((b, t, c)).astype(np.float16)
        scale, bias = rng.standard_normal(c).astype(np.float16), rng.standard_normal(c).astype(np.float16)
        g = dml.Graph(device)
        op = g.compile([dml.mean_variance_normalization(
            g.input(x.shape, np.float16, name="x0"), g.constant(scale.reshape(1, 1, c)),
            g.constant(bias.reshape(1, 1, c)), axes=[2], normalize_variance=True, epsilon=1e-5)])
        tx, ts, tb = (torch.from_numpy(a).cuda() for a in (x, scale, bias))
        row(f"layer norm float16 [{b},{t},{c}]", [x], op, lambda: F.layer_norm(tx, (c,), ts, tb, 1e-5), x.nbytes)
    for n, c, h, w in [(1, 128, 1024, 1024), (1, 512, 256, 256)][: 1 if quick else 2]:  # SDXL VAE decoder
        x = rng.standard_normal((n, c, h, w)).astype(np.float16)
        scale, bias = rng.standard_normal(c).astype(np.float16), rng.standard_normal(c).astype(np.float16)
        g = dml.Graph(device)
        op = g.compile([group_norm(g, g.input(x.shape, np.float16, name="x0"), 32, scale, bias)])
        tx, ts, tb = (torch.from_numpy(a).cuda() for a in (x, scale, bias))
        row(f"group norm float16 [{n},{c},{h},{w}] 32 groups", [x], op, lambda: F.group_norm(tx, 32, ts, tb, 1e-5),
            x.nbytes)
        # The decoder's group norm + swish, the swish taken on the normalization's grouped view: the graph's output
        # then has the normalization's own description and compile folds the swish into it, as inside the VAE (an
        # output of the [n,c,h,w] view would keep the swish a node of its own). The row says how many nodes.
        g = dml.Graph(device)
        norm = group_norm(g, g.input(x.shape, np.float16, name="x0"), 32, scale, bias)
        op = g.compile([dml.activation_swish(dml.reinterpret(norm, [n, 32, c // 32, h, w]))])
        row(f"group norm + swish float16 [{n},{c},{h},{w}] 32 groups ({len(op._node_types)} nodes)", [x], op,
            lambda: F.silu(F.group_norm(tx, 32, ts, tb, 1e-5)), x.nbytes)
    x = rng.standard_normal((16384, 4096)).astype(np.float16)  # attention scores: rows of 4096 keys
    g = dml.Graph(device)
    op = g.compile([dml.activation_softmax(g.input(x.shape, np.float16, name="x0"), axes=[1])])
    tx = torch.from_numpy(x).cuda()
    row("softmax float16 [16384,4096] over 4096", [x], op, lambda: torch.softmax(tx, dim=1), x.nbytes)
    a, b = (rng.standard_normal((64, 1024, 1024)).astype(np.float16) for _ in range(2))
    g = dml.Graph(device)
    op = g.compile([dml.add(g.input(a.shape, np.float16, name="x0"), g.input(b.shape, np.float16, name="x1"))])
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    row("add float16 [64,1024,1024]", [a, b], op, lambda: ta + tb, a.nbytes)
    g = dml.Graph(device)
    op = g.compile([dml.activation_swish(g.input(a.shape, np.float16, name="x0"))])
    row("swish float16 [64,1024,1024]", [a], op, lambda: F.silu(ta), a.nbytes)
    g = dml.Graph(device)
    v = g.input(a.shape, np.float16, name="x0")
    op = g.compile([v * dml.activation_sigmoid(v)])  # a chain of two steps (fuse_elementwise_chains.h)
    row(f"x * sigmoid(x) float16 [64,1024,1024] ({op._node_types.count('internal ELEMENT_WISE_CHAIN')} chains)", [a],
        op, lambda: ta * torch.sigmoid(ta), a.nbytes)
    return rows


def bench_chains(device, torch, reps, quick):
    """Element-wise chains that compile fuses into one kernel a chain (fuse_elementwise_chains.h), float16, against
    the same expressions in eager torch (one kernel per operator): swish written as x * sigmoid(x), y + y * 0.5,
    20 of each in a row, and 20 swish operators in a row (bench/README.md's "swish chain"), on SD-UNet's
    [2,320,64,64] (bench_large has x * sigmoid(x) on 128 MiB). GB/s counts the graph's input read once and its output
    written once."""
    rows = []
    timed = torch_timer(torch)
    swish = (lambda v: v * dml.activation_sigmoid(v), lambda v: v * torch.sigmoid(v))
    half_more = (lambda v: v + v * 0.5, lambda v: v + v * 0.5)
    silu = (dml.activation_swish, torch.nn.functional.silu)  # one operator: 20 in a row make chains of 8
    cases = [("x * sigmoid(x)", swish, 1, (2, 320, 64, 64)), ("y + y * 0.5", half_more, 1, (2, 320, 64, 64)),
             ("x * sigmoid(x)", swish, 20, (2, 320, 64, 64)), ("y + y * 0.5", half_more, 20, (2, 320, 64, 64)),
             ("swish", silu, 20, (2, 320, 64, 64))]
    for name, (ours_fn, torch_fn), repeat, shape in cases[:2] if quick else cases:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float16) * 0.5
        g = dml.Graph(device)
        v = g.input(x.shape, np.float16, name="x")
        for _ in range(repeat):
            v = ours_fn(v)
        op = g.compile([v])
        feeds = {"x": dml.Buffer(device, x)}
        tx = torch.from_numpy(x).cuda()

        def torch_chain():
            t = tx
            for _ in range(repeat):
                t = torch_fn(t)
            return t

        ours = median_seconds(lambda: op(feeds, readback=False), reps)
        theirs = median_seconds(timed(torch_chain), reps)
        (got,) = op(feeds, readback=False)
        rows.append(throughput_row(
            f"{name}{f' x{repeat}' if repeat > 1 else ''} float16 [{','.join(map(str, shape))}] "
            f"({op._node_types.count('internal ELEMENT_WISE_CHAIN')} chains)", 2 * x.nbytes / 1e9, "gbps", ours, theirs,
            relative_error(got.numpy(), torch_chain().float().cpu().numpy())))
    return rows


def bench_resnet_stack(device, torch, reps, quick, blocks=20, shape=(2, 320, 64, 64)):
    """A stack of SD-UNet-style ResNet blocks, x + conv(silu(gn(conv(silu(gn(x)))))), float16, against the same
    network in eager PyTorch (cuDNN benchmark mode on)."""
    blocks = 4 if quick else blocks
    n, c, h, w = shape
    rng = np.random.default_rng(0)
    params = [{"gn1": (1 + 0.1 * rng.standard_normal(c), 0.1 * rng.standard_normal(c)),
               "gn2": (1 + 0.1 * rng.standard_normal(c), 0.1 * rng.standard_normal(c)),
               "conv1": (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c), 0.1 * rng.standard_normal(c)),
               "conv2": (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c), 0.1 * rng.standard_normal(c))}
              for _ in range(blocks)]
    params = [{k: tuple(a.astype(np.float16) for a in v) for k, v in p.items()} for p in params]
    x = rng.standard_normal(shape).astype(np.float16)

    g = dml.Graph(device)
    y = g.input(x.shape, np.float16, name="x")

    def conv(v, weights):
        f, b = weights
        return dml.convolution(v, g.constant(f), g.constant(b.reshape(1, c, 1, 1)), start_padding=[1, 1],
                               end_padding=[1, 1])

    for p in params:
        r = conv(dml.activation_swish(group_norm(g, y, 32, *p["gn1"])), p["conv1"])
        r = conv(dml.activation_swish(group_norm(g, r, 32, *p["gn2"])), p["conv2"])
        y = y + r
    op = g.compile([y])
    feeds = {"x": dml.Buffer(device, x)}
    ours = median_seconds(lambda: op(feeds, readback=False), reps)

    F = torch.nn.functional
    tp = [{k: tuple(torch.from_numpy(a).cuda() for a in v) for k, v in p.items()} for p in params]
    tx = torch.from_numpy(x).cuda()

    def torch_net():
        v = tx
        for p in tp:
            r = F.conv2d(F.silu(F.group_norm(v, 32, *p["gn1"], 1e-5)), *p["conv1"], padding=1)
            r = F.conv2d(F.silu(F.group_norm(r, 32, *p["gn2"], 1e-5)), *p["conv2"], padding=1)
            v = v + r
        return v

    with torch.inference_mode():
        theirs = median_seconds(torch_timer(torch)(torch_net), reps)
        want = torch_net().float().cpu().numpy()
    (got,) = op(feeds, readback=False)
    flops = blocks * 2 * 2.0 * n * c * h * w * c * 9
    return [throughput_row(f"{blocks} UNet ResNet blocks float16 [{n},{c},{h},{w}]", flops / 1e12, "tflops", ours,
                           theirs, relative_error(got.numpy(), want))]


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
        rows.append({"case": f"{count}-node element-wise dispatch ({len(op._node_types)} compiled), CUDA graphs "
                             f"{'on' if graphs == '1' else 'off'}",
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
    """Our kernels' GPU time by name (CUPTI sees every stream of the process), for some convolutions and the large
    normalizations (a group norm whose groups are cut into chunks shows three kernels: the chunks' partials, the
    groups' totals (combine_kernel) and the outputs)."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    def show(label, op, feeds):
        for _ in range(3):
            op(feeds, readback=False)
        with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                op(feeds, readback=False)
        print(f"{label}: 10 dispatches")
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=6, max_name_column_width=100))

    rng = np.random.default_rng(0)
    for n, c, h, w, cout, k, s in conv_cases(quick)[1:4]:
        x = rng.standard_normal((n, c, h, w)).astype(np.float16)
        f = rng.standard_normal((cout, c, k, k)).astype(np.float16)
        g = dml.Graph(device)
        p = k // 2
        op = g.compile([dml.convolution(g.input(x.shape, np.float16, name="x"), g.input(f.shape, np.float16, name="f"),
                                        strides=[s, s], start_padding=[p, p], end_padding=[p, p])])
        show(f"conv [{n},{c},{h},{w}] {k}x{k}/{s} -> {cout}", op,
             {"x": dml.Buffer(device, x), "f": dml.Buffer(device, f)})
    for n, c, h, w in [(1, 128, 1024, 1024), (1, 512, 256, 256)][: 1 if quick else 2]:
        x = rng.standard_normal((n, c, h, w)).astype(np.float16)
        scale, bias = rng.standard_normal(c).astype(np.float16), rng.standard_normal(c).astype(np.float16)
        g = dml.Graph(device)
        op = g.compile([group_norm(g, g.input(x.shape, np.float16, name="x"), 32, scale, bias)])
        show(f"group norm [{n},{c},{h},{w}] 32 groups ({x.nbytes >> 20} MiB)", op, {"x": dml.Buffer(device, x)})
    x = rng.standard_normal((4, 4096, 8192)).astype(np.float16)
    scale, bias = rng.standard_normal(8192).astype(np.float16), rng.standard_normal(8192).astype(np.float16)
    g = dml.Graph(device)
    op = g.compile([dml.mean_variance_normalization(
        g.input(x.shape, np.float16, name="x"), g.constant(scale.reshape(1, 1, -1)), g.constant(bias.reshape(1, 1, -1)),
        axes=[2], normalize_variance=True, epsilon=1e-5)])
    show(f"layer norm [4,4096,8192] ({x.nbytes >> 20} MiB)", op, {"x": dml.Buffer(device, x)})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--quick", action="store_true", help="a few cases only")
    parser.add_argument("--only", nargs="*",
                        help="some of: gemm gemv conv attention norm large chain resnet (default all)")
    parser.add_argument("--profile", action="store_true",
                        help="also print our kernels' GPU times for some convolutions and the large normalizations")
    parser.add_argument("--no-kernel-times", action="store_true",
                        help="leave out the large rows' kernel times (CUPTI), e.g. under Nsight Compute")
    args = parser.parse_args()
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # float32 GEMM in float32 on both sides (DirectML's too)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True  # torch at its best: cuDNN picks its fastest algorithm
    device = dml.Device("cuda")
    print(f"device: {device.name}; torch {torch.__version__}, {torch.cuda.get_device_name()}")
    benches = {"gemm": bench_gemm, "gemv": bench_matrix_vector, "conv": bench_conv, "attention": bench_attention,
               "norm": bench_normalization, "large": bench_large, "chain": bench_chains, "resnet": bench_resnet_stack}
    rows = []
    print(f"{'case':58} {'ours':>9} {'torch':>9} {'unit':>7} {'ratio':>6} {'ours ms':>8} {'torch ms':>8} {'rel err':>8}"
          f" {'roof':>5}")
    for name, bench in benches.items():
        if args.only and name not in args.only:
            continue
        extra = {"kernel_times": not args.no_kernel_times} if name == "large" else {}
        for r in bench(device, torch, args.reps, args.quick, **extra):
            unit = "tflops" if "ours_tflops" in r else "gbps"
            print(f"{r['case']:58} {r['ours_' + unit]:9.1f} {r['torch_' + unit]:9.1f} "
                  f"{'TFLOP/s' if unit == 'tflops' else 'GB/s':>7} {r['ratio']:6.2f} {r['ours_ms']:8.3f} "
                  f"{r['torch_ms']:8.3f} {r['rel_err']:8.1e}" + (f" {r['roof']:5.0%}" if "roof" in r else "") +
                  (f"  kernels: {r['ours_kernel_gbps']:6.0f} / {r['torch_kernel_gbps']:6.0f} GB/s"
                   f" {r['kernel_roof']:4.0%}" if "kernel_roof" in r else ""),
                  flush=True)
            rows.append(r)
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
