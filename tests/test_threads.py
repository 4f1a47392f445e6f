"""Threads: one CompiledOperator dispatched from several Python threads at once gives every thread its own correct
results (dispatches of one operator are serialized: they share its arena), separate operators run side by side,
failures in one thread leave the others alone, and dispatch and compile release the GIL while they run long."""

import threading
import time

import numpy as np
import pytest

import directml as dml

THREADS = 8


def run_threads(worker, count=THREADS):
    """Runs worker(i) in `count` threads started together; re-raises the first failure."""
    failures = []
    start = threading.Barrier(count)

    def body(i):
        try:
            start.wait()
            worker(i)
        except BaseException as e:  # noqa: BLE001  (reported in the main thread)
            failures.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]


def reference(xv, wv, bv):
    h = np.maximum(xv.astype(np.float64) @ wv + bv, 0)
    e = np.exp(h - h.max(axis=3, keepdims=True))
    return e / e.sum(axis=3, keepdims=True), h.max(axis=3, keepdims=True)


@pytest.fixture
def net(device, rng):
    g = dml.Graph(device)
    x = g.input([1, 1, 12, 20], name="x")
    w = g.input([1, 1, 20, 16], name="w", owned=True)
    bv = rng.standard_normal((1, 1, 1, 16)).astype(np.float32)
    b = g.constant(bv)
    h = dml.gemm(x, w, dml.broadcast(b, [1, 1, 12, 16]), fused_activation=dml.FusedActivation.relu())
    op = g.compile([dml.activation_softmax(h, axes=[3]), dml.reduce(h, function=dml.ReduceFunction.MAX, axes=[3])])
    wv = rng.standard_normal((1, 1, 20, 16)).astype(np.float32)
    op.initialize({w: wv})
    return op, lambda xv: reference(xv, wv, bv)


def test_one_operator_from_several_threads(net, rng):
    op, ref = net
    inputs = [rng.standard_normal((1, 1, 12, 20)).astype(np.float32) for _ in range(THREADS)]

    def worker(i):
        want_p, want_m = ref(inputs[i])
        for k in range(30):
            if k % 3 == 2:  # Buffers out: each dispatch returns memory of its own, not the shared arena
                p, m = (b.numpy() for b in op({"x": inputs[i]}, readback=False))
            else:
                p, m = op({"x": dml.Buffer(op.device, inputs[i]) if k % 3 else inputs[i]})
            np.testing.assert_allclose(p, want_p, rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(m, want_m, rtol=1e-4, atol=1e-5)

    run_threads(worker)


def test_results_stay_valid_while_other_threads_dispatch(net, rng):
    """An output array is the caller's: later dispatches by other threads do not overwrite it."""
    op, ref = net
    inputs = [rng.standard_normal((1, 1, 12, 20)).astype(np.float32) for _ in range(THREADS)]
    kept = {}

    def worker(i):
        kept[i] = op({"x": inputs[i]})
        for _ in range(20):
            op({"x": inputs[(i + 1) % THREADS]})

    run_threads(worker)
    for i, (p, m) in kept.items():
        np.testing.assert_allclose(p, ref(inputs[i])[0], rtol=1e-4, atol=1e-6)


def test_separate_operators_and_failures_in_threads(device, rng):
    """Each thread builds, compiles and runs its own graph; every other dispatch fails and changes nothing."""

    def worker(i):
        g = dml.Graph(device)
        x = g.input([4, 5 + i], name="x")
        op = g.compile([dml.reduce(x * float(i + 1), function=dml.ReduceFunction.SUM, axes=[1])])
        xv = rng.standard_normal((4, 5 + i)).astype(np.float32)
        for k in range(20):
            if k % 2:
                with pytest.raises(ValueError, match="input 0 'x'"):
                    op({"x": np.zeros((4, 5 + i), np.int32)})
            (y,) = op({"x": xv})
            want = (xv.astype(np.float64) * (i + 1)).sum(axis=1, keepdims=True)
            np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)

    run_threads(worker)


def test_buffers_and_constants_from_several_threads(device, rng):
    data = [rng.standard_normal((3, 7)).astype(np.float16) for _ in range(THREADS)]

    def worker(i):
        for _ in range(50):
            b = dml.Buffer(device, data[i])
            g = dml.Graph(device)
            c = g.constant(b)
            (y,) = g.compile([dml.identity(c)])()
            np.testing.assert_array_equal(y, data[i])
            np.testing.assert_array_equal(b.numpy(), data[i])

    run_threads(worker)


# --- the GIL -----------------------------------------------------------------------------------------------------

def long_operator(kind, scale=1):
    """A dispatch of tens to hundreds of milliseconds on the cpu executor: a large gemm or convolution."""
    cpu = dml.Device("cpu")
    g = dml.Graph(cpu)
    rng = np.random.default_rng(7)
    if kind == "gemm":
        n = 1024 * scale
        a, b = g.input([1, 1, n, n], name="a"), g.input([1, 1, n, n], name="b")
        op = g.compile([dml.gemm(a, b)])  # 2 GFLOP at scale 1
        feeds = {"a": rng.random((1, 1, n, n), np.float32), "b": rng.random((1, 1, n, n), np.float32)}
    else:
        hw = 128 * scale
        x, w = g.input([1, 64, hw, hw], name="x"), g.input([64, 64, 3, 3], name="w")
        op = g.compile([dml.convolution(x, w, start_padding=[1, 1], end_padding=[1, 1])])  # 1.2 GFLOP at scale 1
        feeds = {"x": rng.random((1, 64, hw, hw), np.float32), "w": rng.random((64, 64, 3, 3), np.float32)}
    return op, feeds


def timed_long_operator(kind):
    """long_operator, grown until one dispatch takes 30 ms or more: on a many-core machine (the H200 host's
    16 cores run the scale-1 gemm in 5 ms) a shorter one leaves the other thread no time to show progress."""
    for scale in (1, 2, 4):
        op, feeds = long_operator(kind, scale)
        op(feeds)  # warm-up: thread pool, BLAS
        start = time.perf_counter()
        op(feeds)
        one = time.perf_counter() - start
        if one >= 0.03:
            break
    return op, feeds, one


def assert_other_thread_runs(work, repeats):
    """Runs work() `repeats` times on a worker thread while this thread ticks: during each run the longest pause
    between ticks must be a small part of the run. Were the GIL held, this thread would stop for the whole run."""
    done = threading.Event()
    spans = []

    def worker_body():
        for _ in range(repeats):
            t0 = time.perf_counter()
            work()
            spans.append((t0, time.perf_counter()))
        done.set()

    worker = threading.Thread(target=worker_body)
    ticks = [time.perf_counter()]
    worker.start()
    while not done.is_set():  # this thread's progress: a tick each half millisecond it runs
        now = time.perf_counter()
        if now - ticks[-1] > 5e-4:
            ticks.append(now)
    worker.join()
    ticks = np.array(ticks)
    for t0, t1 in spans:
        during = ticks[(ticks > t0) & (ticks < t1)]
        assert len(during) > 0, f"no progress at all during a {1000 * (t1 - t0):.0f} ms run"
        edges = np.concatenate([[t0], during, [t1]])
        longest = np.diff(edges).max()
        assert longest < 0.5 * (t1 - t0), (
            f"the other thread stalled {1000 * longest:.0f} ms of a {1000 * (t1 - t0):.0f} ms run")


@pytest.mark.parametrize("kind", ["gemm", "convolution"])
def test_dispatch_releases_the_gil(kind):
    """While one thread dispatches, another Python thread keeps running."""
    op, feeds, one = timed_long_operator(kind)
    assert_other_thread_runs(lambda: op(feeds), repeats=max(1, int(0.3 / one)))  # about 0.3 s of dispatching


def large_constant_graph(device, rows):
    """Row sums of x plus a 512 MiB constant: compile uploads the constant where the device has memory of its own
    (about 0.1 s on the H200); on the cpu executor it is lent, and compile is quick."""
    g = dml.Graph(device)
    shape = [1, 1, rows, (128 << 20) // rows]
    constant = np.full(shape, 0.5, np.float32)
    x = g.input([1, 1, 1, shape[3]], name="x")
    total = dml.reduce(g.constant(constant, copy=False) + dml.broadcast(x, shape), function=dml.ReduceFunction.SUM,
                       axes=[3])
    return g, [total]


def test_compile_releases_the_gil(device):
    """While a graph compiles, another Python thread keeps running (SDXL's pipeline builds its next graph then),
    and the operator compiled on the worker thread computes what the same graph compiled here does."""
    g, outputs = large_constant_graph(device, 256)
    start = time.perf_counter()
    g.compile(outputs)
    if time.perf_counter() - start < 0.03:
        pytest.skip(f"compile on {device.kind} takes under 30 ms here: too short to see another thread run")
    g, outputs = large_constant_graph(device, 512)
    compiled = []
    assert_other_thread_runs(lambda: compiled.append(g.compile(outputs)), repeats=1)
    x = np.random.default_rng(4).standard_normal((1, 1, 1, (128 << 20) // 512)).astype(np.float32)
    (got,) = compiled[0]({"x": x})
    (want,) = g.compile(outputs)({"x": x})
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got.reshape(-1), np.full(512, x.astype(np.float64).sum() + 0.5 * x.size), rtol=1e-4)
