"""Nothing leaks: many compile/dispatch/readback cycles, Buffer create/free cycles, repeated dispatches and failing
calls keep the process's resident memory flat, and on CUDA the device's free memory flat.

Each test runs its cycle WARMUP times (allocator pools, caches and lazily created Python objects settle), reads the
resident set size from /proc/self/statm, runs CYCLES more cycles and reads it again: it may grow by at most
BOUND_MB. A leak of even 1 KB per cycle grows it by 10 MB. DIRECTML_LEAK_CYCLES=n changes the count.
"""

import gc
import os
from pathlib import Path

import numpy as np
import pytest

import directml as dml

CYCLES = int(os.environ.get("DIRECTML_LEAK_CYCLES", "10000"))
WARMUP = 500
BOUND_MB = 10

# AddressSanitizer keeps freed memory in quarantine and maps shadow memory: RSS would measure those, not us. Under
# it (.ci/sanitize.sh) the cycles still run, fewer of them, for the sanitizer to check every free; RSS is not judged.
UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")

pytestmark = pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads RSS from /proc/self/statm (Linux)")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def assert_flat(cycle, cycles=CYCLES, measure=rss_bytes, bound=BOUND_MB * 2**20, what="RSS", warmup=WARMUP):
    """Runs `cycle(i)` `warmup` times, then `cycles` times; `measure()` may grow by at most `bound` meanwhile."""
    if UNDER_ASAN:
        for i in range(min(cycles, 1000)):
            cycle(i)
        return
    for i in range(warmup):
        cycle(i)
    gc.collect()
    before = measure()
    for i in range(cycles):
        cycle(i)
    gc.collect()
    after = measure()
    print(f"{what}: {before / 2**20:.1f} MB before, {after / 2**20:.1f} MB after {cycles} cycles")
    assert after - before < bound, (f"{what} grew by {(after - before) / 2**20:.1f} MB over {cycles} cycles "
                                    f"({(after - before) / cycles:.0f} bytes per cycle)")


def compile_dispatch_readback(device, rng):
    """One cycle: a small graph of several families, with a constant, compiled, dispatched, read back."""
    x_data = rng.standard_normal((1, 1, 4, 6)).astype(np.float32)
    w_data = rng.standard_normal((1, 1, 6, 3)).astype(np.float32)

    def cycle(i):
        g = dml.Graph(device)
        x = g.input([1, 1, 4, 6], name="x")
        w = g.constant(w_data)
        y = dml.activation_softmax(dml.gemm(x, w, fused_activation=dml.FusedActivation.relu()) * 0.5 + 1, axes=[3])
        s = dml.reduce(y, function=dml.ReduceFunction.SUM, axes=[3])
        op = g.compile([y, s])
        if i % 2:
            out, total = op({"x": x_data})
        else:  # Buffers out, then read back
            out, total = (b.numpy() for b in op({x: x_data}, readback=False))
        assert out.shape == (1, 1, 4, 3) and abs(float(total.sum()) - 4) < 1e-4

    return cycle


def test_compile_dispatch_readback_cycles_keep_rss_flat(device, rng):
    if device.kind == "directml":
        # A compile there runs DirectML's graph compiler and builds a pipeline per shader (about 0.5 s a cycle on
        # lavapipe): fewer cycles, judged at 32 KB per cycle. The same code grew RSS by 0 bytes a cycle on lavapipe
        # and 10.5 KB on the H200's driver (2026-12-02), which keeps something per pipeline built; a leaked operator,
        # with its heaps and DirectML objects, would pass 32 KB.
        n = min(CYCLES, 300)
        assert_flat(compile_dispatch_readback(device, rng), cycles=n, bound=n * 32 * 2**10, warmup=50)
    else:
        assert_flat(compile_dispatch_readback(device, rng))


def test_buffer_create_free_cycles_keep_rss_flat(device, rng):
    data = [rng.standard_normal(n).astype(t) for n, t in [(1, np.float32), (1000, np.float16), (4096, np.int64)]]

    def cycle(i):
        a = data[i % len(data)]
        b = dml.Buffer(device, a)
        assert b.nbytes == a.nbytes
        if i % 3 == 0:
            np.testing.assert_array_equal(b.numpy(), a)
        elif i % 3 == 1 and device.kind == "cpu":
            np.testing.assert_array_equal(np.from_dlpack(b), a)  # a view that keeps the Buffer alive, then dies
        del b

    assert_flat(cycle)


def test_repeated_dispatch_keeps_rss_flat(device, rng):
    g = dml.Graph(device)
    x = g.input([8, 16], name="x")
    w = g.input([16], name="w", owned=True)
    y = dml.activation_tanh(x * dml.broadcast(w, [8, 16]) - 1)
    op = g.compile([y, dml.reduce(y, function=dml.ReduceFunction.ARGMAX, axes=[1])])
    op.initialize({"w": np.ones(16, np.float32)})
    inputs = [rng.standard_normal((8, 16)).astype(np.float32) for _ in range(4)]

    def cycle(i):
        out, idx = op({"x": inputs[i % 4]})
        assert out.shape == (8, 16) and idx.shape == (8, 1)

    assert_flat(cycle)


def test_failing_calls_keep_rss_flat(device):
    """Every failure is a clean exception that frees what the call had made (builders, bindings, views)."""
    g = dml.Graph(device)
    x = g.input([2, 3], name="x")
    op = g.compile([x + 1])
    mistakes = [
        (ValueError, lambda: dml.gemm(x, x)),                                      # a builder refuses its operands
        (ValueError, lambda: dml.reinterpret(x, [4, 4])),                          # a view past its buffer
        (ValueError, lambda: op({"x": np.zeros((2, 3), np.int32)})),               # a binding of the wrong type
        (ValueError, lambda: op({"x": np.zeros(7, np.float32)})),                  # ... of the wrong size
        (ValueError, lambda: op({"nobody": np.zeros(6, np.float32)})),             # an unknown input
        (TypeError, lambda: op({"x": object()})),                                  # not an array
        (ValueError, lambda: dml.Buffer(device, np.zeros(3, np.complex64))),       # no DirectML type
    ]

    def cycle(i):
        error, call = mistakes[i % len(mistakes)]
        with pytest.raises(error):
            call()

    assert_flat(cycle)
    np.testing.assert_array_equal(op({"x": np.zeros((2, 3), np.float32)})[0], np.ones((2, 3)))  # still works


# --- CUDA device memory -----------------------------------------------------------------------------------------------

NO_CUDA = "no CUDA device: the cuda executor is not built here, or no GPU / driver is present"


def cuda_used_bytes():
    """Device memory in use, from the driver (cuMemGetInfo), in the CUDA context this thread uses."""
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    rc = lib.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
    if rc != 0:
        pytest.skip(f"cuMemGetInfo failed ({rc}): no CUDA context current on this thread")
    return total.value - free.value


@pytest.mark.skipif("cuda" not in dml.available_device_kinds(), reason=NO_CUDA)
def test_cuda_device_memory_stays_flat(rng):
    cuda = dml.Device("cuda")
    compile_cycle = compile_dispatch_readback(cuda, rng)
    data = rng.standard_normal(1 << 18).astype(np.float32)  # 1 MB: a leak of one Buffer per cycle is obvious

    def cycle(i):
        compile_cycle(i)
        b = dml.Buffer(cuda, data)
        assert b.nbytes == data.nbytes

    compile_cycle(0)  # the context exists before the first reading
    assert_flat(cycle, cycles=2000, measure=cuda_used_bytes, bound=64 * 2**20, what="CUDA memory in use")
