"""DirectML (the directml executor, over vkd3d-proton on native Linux) beside the cuda executor and PyTorch on the
same GPU, in one run: GEMM, convolution and multihead attention (float32 and float16), and the five sample networks
(bench_samples.py's: each sample's own graph, and its PyTorch twin). Each case is one compiled graph dispatched with
its inputs already on the device (dml.Buffer) and its output left there; the time is the median wall time of one
call up to a synchronized result. Ratios are against torch (torch's time / ours: above 1 is faster); the error is
directml's output against torch's (or, without a GPU, against torch on the CPU in float32).

Run (DirectML's libraries found as docs/directml.md says): python bench/bench_directml.py [--reps 20] [--only ...]
--small: tiny shapes and mnist alone, so the directml half runs on lavapipe in a minute; a column whose executor is
missing (no cuda executor, no GPU for torch) reads "-".
"""

import argparse
import itertools
import sys

import numpy as np

import directml as dml
from bench_cuda import median_seconds, relative_error, torch_timer


def kernel_cases(small):
    """(family, name, dtype, build(*inputs), input shapes, torch fn(t, *tensors), flops)."""
    gemm = lambda x, w: dml.gemm(x, w)  # noqa: E731
    conv = lambda x, w: dml.convolution(x, w, start_padding=[1, 1], end_padding=[1, 1])  # noqa: E731
    # (batch, query tokens, key tokens, heads, head size): SDXL's UNet self / cross attention, an LLM prompt and
    # one decoding step against a 2048-token cache
    n, (c, hw), attention = (64, (8, 8), [(1, 16, 16, 2, 8), (1, 1, 16, 2, 8)]) if small else \
        (2048, (320, 64), [(2, 4096, 4096, 10, 64), (2, 4096, 77, 10, 64), (1, 2048, 2048, 32, 128),
                           (1, 1, 2048, 32, 128)])
    out = []
    for dtype in ("float32", "float16"):
        out.append(("gemm", f"GEMM {dtype} {n}^3", dtype, gemm, [(1, 1, n, n)] * 2,
                    lambda t, x, w: t.matmul(x[0, 0], w[0, 0]), 2 * n ** 3))
        out.append(("conv", f"conv {dtype} [2,{c},{hw},{hw}] 3x3 -> {c}", dtype, conv, [(2, c, hw, hw), (c, c, 3, 3)],
                    lambda t, x, w: t.nn.functional.conv2d(x, w, padding=1), 2 * 2 * c * hw * hw * c * 9))
        for b, sq, sk, h, d in attention:
            def mha(q, k, v, h=h):
                return dml.multihead_attention(query=q, key=k, value=v, head_count=h).output

            def sdpa(t, q, k, v, b=b, h=h, d=d):
                # Not torch's cuDNN backend: in a process that also runs DirectML over vkd3d-proton it failed
                # (mha_graph.execute, float16 h32 d128, H200 2026-12-02); flash and memory-efficient did not.
                from torch.nn.attention import SDPBackend, sdpa_kernel
                q, k, v = (a.view(b, -1, h, d).transpose(1, 2) for a in (q, k, v))
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                    o = t.nn.functional.scaled_dot_product_attention(q, k, v)
                return o.transpose(1, 2).reshape(b, -1, h * d)
            out.append(("attention", f"attention {dtype} b{b} q{sq} k{sk} h{h} d{d}", dtype, mha,
                        [(b, sq, h * d), (b, sk, h * d), (b, sk, h * d)], sdpa, 4 * b * h * sq * sk * d))
    return out


def devices():
    """Our executors that this machine has, by kind."""
    found = {}
    for kind in ("directml", "cuda"):
        try:
            found[kind] = dml.Device(kind)
        except dml.DeviceError as e:
            print(f"no {kind} executor here: {str(e)[:100]}")
    return found


def time_compiled(device, op, feeds, reps):
    """The median time of `op` on `feeds` (arrays by input) as device Buffers, and its output read back."""
    buffers = {i: dml.Buffer(device, a) for i, a in feeds.items()}
    got = op(buffers)[0]
    return median_seconds(lambda: op(buffers, readback=False), reps), np.asarray(got, np.float32)


def time_graph(device, build, arrays, reps):
    g = dml.Graph(device)
    inputs = [g.input(a.shape, a.dtype) for a in arrays]
    return time_compiled(device, g.compile([build(*inputs)]), dict(zip(inputs, arrays)), reps)


def cell(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def ratio(theirs, ours):
    return "-" if theirs is None or ours is None else f"{theirs / ours:.2f}x"


def print_row(name, times, err, work=None):
    """times: {"directml", "cuda", "torch"} -> seconds or None; work: flops, for directml's TFLOP/s."""
    d, c, t = times["directml"], times["cuda"], times["torch"]
    rate = "-" if d is None or work is None else f"{work / d / 1e12:.3g}"
    print(f"| {name} | {cell(d)} | {cell(c)} | {cell(t)} | {ratio(t, d)} | {ratio(t, c)} | {rate} | {err} |", flush=True)


def time_executors(name, kinds, times, want, timed_run):
    """Fills times[kind] for our executors (None where `kinds` lacks one or it failed); timed_run(kind) gives
    (seconds, output). Returns directml's relative error against `want`, or its failure. A failure is printed too."""
    err = "-"
    for kind in ("directml", "cuda"):
        times[kind] = None
        if kind not in kinds:
            continue
        try:
            times[kind], got = timed_run(kind)
        except dml.DeviceError as e:
            err = f"{kind}: {type(e).__name__}: {str(e)[:60]}" if kind == "directml" else err
            print(f"{name}: {kind} failed: {type(e).__name__}: {str(e)[:300]}", file=sys.stderr)
            continue
        if kind == "directml":
            err = f"{relative_error(got.reshape(want.shape), want):.1e}"
    return err


def run_kernels(torch, found, gpu, args):
    timed = torch_timer(torch) if gpu else (lambda fn: fn)
    where = "cuda" if gpu else "cpu"
    rng = np.random.default_rng(0)
    for family, name, dtype, build, shapes, fn, flops in kernel_cases(args.small):
        if args.only and family not in args.only:
            continue
        arrays = [(rng.standard_normal(s) / (np.sqrt(np.prod(s[1:])) if family == "conv" and i == 1 else 1))
                  .astype(dtype) for i, s in enumerate(shapes)]
        # torch on the GPU in the case's dtype; without one, on the CPU in float32 (the reference only)
        tensors = [torch.from_numpy(a if gpu else a.astype(np.float32)).to(where) for a in arrays]
        times = {"torch": median_seconds(timed(lambda: fn(torch, *tensors)), args.reps) if gpu else None}
        want = fn(torch, *tensors).float().cpu().numpy()
        err = time_executors(name, found, times, want, lambda kind: time_graph(found[kind], build, arrays, args.reps))
        print_row(name, times, err, flops)


def run_samples(torch, found, gpu, args):
    import bench_samples  # the five networks: the samples' own graphs and their PyTorch twins

    try:
        data = bench_samples.sample_data.data_dir(args.data)
    except SystemExit as e:  # no sample data on this machine: the kernel rows stand alone
        print(f"(sample networks skipped: {e})")
        return
    where = "cuda" if gpu else "cpu"
    timed = torch_timer(torch) if gpu else (lambda fn: fn)
    first = 1 if args.small else None  # mnist comes first
    compiled = {kind: {c[0]: c for c in itertools.islice(bench_samples.cases(data, device), first)}
                for kind, device in found.items()}
    torch.backends.cudnn.allow_tf32 = False
    for name, _, input_name, net, weights, x in next(iter(compiled.values()), {}).values():
        ops = bench_samples.TorchOps(weights, where)
        tx = torch.from_numpy(x).to(where)
        with torch.inference_mode():
            times = {"torch": median_seconds(timed(lambda: net(ops, tx)), args.reps) if gpu else None}
            want = net(ops, tx).float().cpu().numpy()
        feeds = {input_name: x}
        err = time_executors(name, compiled, times, want,
                             lambda kind: time_compiled(found[kind], compiled[kind][name][1], feeds, args.reps))
        print_row(name, times, err)


def main():
    import torch
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--small", action="store_true", help="tiny shapes and mnist alone (lavapipe)")
    parser.add_argument("--only", nargs="*", choices=["gemm", "conv", "attention", "samples"], default=None)
    parser.add_argument("--data", default=None, help="sample data folder (as the samples take it)")
    args = parser.parse_args()
    found = devices()
    gpu = torch.cuda.is_available()
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    print(f"directml: {found['directml'].name if 'directml' in found else '-'}; "
          f"torch {torch.__version__} on {torch.cuda.get_device_name() if gpu else 'the CPU (reference only)'}")
    print("| case | directml ms | cuda ms | torch ms | directml / torch | cuda / torch | directml TFLOP/s | "
          "directml rel err |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    if not args.only or set(args.only) - {"samples"}:
        run_kernels(torch, found, gpu, args)
    if not args.only or "samples" in args.only:
        run_samples(torch, found, gpu, args)


if __name__ == "__main__":
    main()
