"""DirectML (the directml executor, over vkd3d-proton on native Linux) beside the cuda executor and PyTorch on the
same GPU, in one run: GEMM and convolution, float32 and float16. Each case is one compiled graph dispatched with
its inputs already on the device (dml.Buffer) and its output left there; the time is the median wall time of one
call up to a synchronized result. Ratios are written against torch (torch's time / ours: above 1 is faster).

Run (DirectML's libraries found as docs/directml.md says): python bench/bench_directml.py [--reps 20]
"""

import argparse

import numpy as np

import directml as dml
from bench_cuda import median_seconds, relative_error, torch_timer


def cases():
    # (name, dtype, build(x, w), x shape, w shape, torch fn, flops)
    gemm = lambda x, w: dml.gemm(x, w)
    conv = lambda x, w: dml.convolution(x, w, start_padding=[1, 1], end_padding=[1, 1])
    out = []
    for dtype in ("float32", "float16"):
        n = 2048
        out.append((f"GEMM {dtype} {n}^3", dtype, gemm, (1, 1, n, n), (1, 1, n, n),
                    lambda t, x, w: t.matmul(x, w), 2 * n ** 3))
        out.append((f"conv {dtype} [2,320,64,64] 3x3 -> 320", dtype, conv, (2, 320, 64, 64), (320, 320, 3, 3),
                    lambda t, x, w: t.nn.functional.conv2d(x, w, padding=1), 2 * 2 * 320 * 64 * 64 * 320 * 9))
    return out


def time_ours(kind, build, xs, reps):
    device = dml.Device(kind)
    g = dml.Graph(device)
    inputs = [g.input(a.shape, a.dtype) for a in xs]
    op = g.compile([build(*inputs)])
    buffers = {i: dml.Buffer(device, a) for i, a in zip(inputs, xs)}
    result = op(buffers)[0]
    return median_seconds(lambda: op(buffers, readback=False), reps), result


def main():
    import torch
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    timed = torch_timer(torch)
    rng = np.random.default_rng(0)
    print("| case | directml TFLOP/s | cuda TFLOP/s | torch TFLOP/s | directml / torch | cuda / torch | directml rel err |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, dtype, build, xshape, wshape, fn, flops in cases():
        x = rng.standard_normal(xshape).astype(dtype)
        w = (rng.standard_normal(wshape) / np.sqrt(np.prod(wshape[1:]))).astype(dtype)
        tx, tw = (torch.from_numpy(a.reshape(a.shape if "conv" in name else a.shape[2:])).cuda() for a in (x, w))
        theirs = median_seconds(timed(lambda: fn(torch, tx, tw)), args.reps)
        want = fn(torch, tx, tw).float().cpu().numpy()
        cuda_s, _ = time_ours("cuda", build, (x, w), args.reps)
        try:
            dml_s, got = time_ours("directml", build, (x, w), args.reps)
            err = relative_error(got.reshape(want.shape), want)
            dml_cells = f"{flops / dml_s / 1e12:.1f} | ", f"{theirs / dml_s:.2f}x", f"{err:.1e}"
        except dml.DeviceError as e:
            dml_cells = "- | ", "-", f"{type(e).__name__}: {str(e)[:60]}"
        print(f"| {name} | {dml_cells[0]}{flops / cuda_s / 1e12:.1f} | {flops / theirs / 1e12:.1f} | {dml_cells[1]} | "
              f"{theirs / cuda_s:.2f}x | {dml_cells[2]} |", flush=True)


if __name__ == "__main__":
    main()
