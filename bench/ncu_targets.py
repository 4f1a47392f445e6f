"""One dispatch each (after two warm-ups) of the memory-bound rows that Nsight Compute profiles: layer norm
[8,2048,4096], softmax [16384,4096], group norm [1,128,1024,1024] and the chain x * sigmoid(x) [64,1024,1024],
float16, on the cuda executor (bench/README.md, runs M and O). Run under ncu, for example:

    ncu --clock-control none -k "regex:rows|held|combine|chain" --section SpeedOfLight --section LaunchStats \\
        --section Occupancy --section InstructionStats python3 bench/ncu_targets.py
"""

import numpy as np

import directml as dml
from bench_cuda import group_norm


def dispatch(device, build, x):
    g = dml.Graph(device)
    op = g.compile([build(g, g.input(x.shape, np.float16, name="x"))])
    feeds = {"x": dml.Buffer(device, x)}
    for _ in range(3):
        op(feeds, readback=False)


def main():
    device = dml.Device("cuda")
    rng = np.random.default_rng(0)
    c = 4096
    scale, bias = rng.standard_normal(c).astype(np.float16), rng.standard_normal(c).astype(np.float16)
    dispatch(device, lambda g, v: dml.mean_variance_normalization(
        v, g.constant(scale.reshape(1, 1, c)), g.constant(bias.reshape(1, 1, c)), axes=[2], normalize_variance=True,
        epsilon=1e-5), rng.standard_normal((8, 2048, c)).astype(np.float16))
    dispatch(device, lambda g, v: dml.activation_softmax(v, axes=[1]),
             rng.standard_normal((16384, 4096)).astype(np.float16))
    scale, bias = rng.standard_normal(128).astype(np.float16), rng.standard_normal(128).astype(np.float16)
    dispatch(device, lambda g, v: group_norm(g, v, 32, scale, bias),
             rng.standard_normal((1, 128, 1024, 1024)).astype(np.float16))
    dispatch(device, lambda g, v: v * dml.activation_sigmoid(v),
             rng.standard_normal((64, 1024, 1024)).astype(np.float16))


if __name__ == "__main__":
    main()
