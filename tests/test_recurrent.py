"""gru against a NumPy reference GRU with ONNX's semantics (gates z, r, h), which DirectML follows."""

import numpy as np
import pytest

import directml as dml

RNG = np.random.default_rng(3)
Dir, Opt, FA = dml.RecurrentNetworkDirection, dml.GRUOutputOptions, dml.FusedActivation

ACT = {
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0),
    "hard_sigmoid": lambda x: np.clip(0.2 * x + 0.5, 0, 1),
    "scaled_tanh": lambda x: 1.5 * np.tanh(0.5 * x),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.1 * x),
}
FUSED = {"sigmoid": FA.sigmoid(), "tanh": FA.tanh(), "relu": FA.relu(), "hard_sigmoid": FA.hard_sigmoid(0.2, 0.5),
         "scaled_tanh": FA.scaled_tanh(1.5, 0.5), "leaky_relu": FA.leaky_relu(0.1)}


@pytest.fixture
def graph(device):
    return dml.Graph(device)


def gru_ref(x, w, r, b, h0, lengths, acts, direction, linear_before_reset):
    """x [seq, batch, input], w [dirs, 3H, input], r [dirs, 3H, H], b [dirs, 6H], h0 [dirs, batch, H]."""
    seq, batch, _ = x.shape
    dirs, hidden = w.shape[0], r.shape[2]
    y = np.zeros((seq, dirs, batch, hidden))
    y_last = np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        f, g = ACT[acts[2 * d]], ACT[acts[2 * d + 1]]
        wz, wr, wh = np.split(w[d], 3)
        rz, rr, rh = np.split(r[d], 3)
        wbz, wbr, wbh, rbz, rbr, rbh = np.split(b[d], 6)
        reverse = direction == Dir.BACKWARD or d == 1
        for n in range(batch):
            h = h0[d, n].copy()
            length = int(lengths[n])
            steps = range(length - 1, -1, -1) if reverse else range(length)
            for t in steps:
                xt = x[t, n]
                z = f(xt @ wz.T + h @ rz.T + wbz + rbz)
                rt = f(xt @ wr.T + h @ rr.T + wbr + rbr)
                if linear_before_reset:
                    hh = g(xt @ wh.T + rt * (h @ rh.T + rbh) + wbh)
                else:
                    hh = g(xt @ wh.T + (rt * h) @ rh.T + rbh + wbh)
                h = (1 - z) * hh + z * h
                y[t, d, n] = h
            y_last[d, n] = h
    return y, y_last


def make(direction, seq=5, batch=3, input_size=4, hidden=3, dtype=np.float32):
    dirs = 2 if direction == Dir.BIDIRECTIONAL else 1
    return dict(
        x=RNG.uniform(-1, 1, (1, seq, batch, input_size)).astype(dtype),
        w=RNG.uniform(-1, 1, (1, dirs, 3 * hidden, input_size)).astype(dtype),
        r=RNG.uniform(-1, 1, (1, dirs, 3 * hidden, hidden)).astype(dtype),
        b=RNG.uniform(-0.5, 0.5, (1, 1, dirs, 6 * hidden)).astype(dtype),
        h0=RNG.uniform(-1, 1, (1, dirs, batch, hidden)).astype(dtype),
    )


@pytest.mark.parametrize("direction", [Dir.FORWARD, Dir.BACKWARD, Dir.BIDIRECTIONAL])
@pytest.mark.parametrize("linear_before_reset", [False, True])
@pytest.mark.parametrize("optional", ["none", "bias_init", "all"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gru(graph, direction, linear_before_reset, optional, dtype):
    a = make(direction, dtype=dtype)
    seq, batch, dirs, hidden = 5, 3, a["w"].shape[1], 3
    lengths = np.array([5, 2, 0], np.uint32) if optional == "all" else np.full(batch, seq, np.uint32)
    ex, ew, er = (graph.input(a[k].shape, dtype) for k in ("x", "w", "r"))
    feeds = {ex: a["x"], ew: a["w"], er: a["r"]}
    eb = eh = el = None
    if optional != "none":
        eb, eh = graph.input(a["b"].shape, dtype), graph.input(a["h0"].shape, dtype)
        feeds.update({eb: a["b"], eh: a["h0"]})
    if optional == "all":
        el = graph.input([1, 1, 1, batch], np.uint32)
        feeds[el] = lengths.reshape(1, 1, 1, batch)
    out = dml.gru(ex, ew, er, eb, eh, el, direction=direction, linear_before_reset=linear_before_reset)
    assert out.sequence.shape == (seq, dirs, batch, hidden) and out.single.shape == (1, dirs, batch, hidden)
    assert out.sequence.dtype == dtype
    got_seq, got_single = graph.compile([out.sequence, out.single])(feeds)
    f64 = {k: v.astype(np.float64) for k, v in a.items()}
    b = f64["b"][0, 0] if optional != "none" else np.zeros((dirs, 6 * hidden))
    h0 = f64["h0"][0] if optional != "none" else np.zeros((dirs, batch, hidden))
    want_seq, want_single = gru_ref(f64["x"][0], f64["w"][0], f64["r"][0], b, h0, lengths,
                                    ["sigmoid", "tanh"] * dirs, direction, linear_before_reset)
    tol = 1e-5 if dtype == np.float32 else 1e-2
    # DirectML: an empty sequence's single output is 0 in the forward direction (the backward one keeps h0)
    empty_forward_gives_zero = graph.device.kind == "directml" and optional == "all" and direction != Dir.BACKWARD
    if empty_forward_gives_zero:
        want_single[0, 2] = 0
    np.testing.assert_allclose(got_seq, want_seq, atol=tol)
    np.testing.assert_allclose(got_single[0], want_single, atol=tol)
    if optional == "all":  # steps past a sequence's length are zeros; an empty sequence keeps its initial state
        assert (got_seq[2:, :, 1] == 0).all() and (got_seq[:, :, 2] == 0).all()
        kept = slice(1, None) if empty_forward_gives_zero else slice(None)
        np.testing.assert_allclose(got_single[0, kept, 2], a["h0"][0, kept, 2], atol=tol)


@pytest.mark.parametrize("direction,acts", [
    (Dir.FORWARD, ["hard_sigmoid", "relu"]),
    (Dir.BACKWARD, ["sigmoid", "scaled_tanh"]),
    (Dir.BIDIRECTIONAL, ["hard_sigmoid", "leaky_relu", "sigmoid", "scaled_tanh"]),
])
def test_gru_activations(graph, direction, acts):
    a = make(direction, seq=4, batch=2, input_size=3, hidden=2)
    dirs = a["w"].shape[1]
    ex, ew, er, eb = (graph.input(a[k].shape) for k in ("x", "w", "r", "b"))
    out = dml.gru(ex, ew, er, eb, activation_descs=[FUSED[n] for n in acts], direction=direction,
                  output_options=Opt.SEQUENCE)
    assert out.single is None
    (got,) = graph.compile([out.sequence])({ex: a["x"], ew: a["w"], er: a["r"], eb: a["b"]})
    want, _ = gru_ref(a["x"][0].astype(np.float64), a["w"][0], a["r"][0], a["b"][0, 0], np.zeros((dirs, 2, 2)),
                      [4, 4], acts, direction, False)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_gru_single_output_broadcast_weights_and_strided_input(graph, directml_differs):
    directml_differs("CompileGraph refuses this GRU on lavapipe (E_INVALIDARG): single output only, shared weights")
    # both directions share one weight tensor (zero direction stride); x is a time-major view of a
    # batch-major buffer; the NumPy feed for r is a non-contiguous array
    seq, batch, inp, hidden = 4, 2, 3, 2
    x_bm = RNG.uniform(-1, 1, (batch, seq, inp)).astype(np.float32)
    w1 = RNG.uniform(-1, 1, (1, 1, 3 * hidden, inp)).astype(np.float32)
    r_big = RNG.uniform(-1, 1, (1, 2, 3 * hidden, 2 * hidden)).astype(np.float32)
    r = r_big[..., ::2]
    ex, ew, er = graph.input(x_bm.shape), graph.input(w1.shape), graph.input(r.shape)
    x_view = dml.reinterpret(ex, [1, seq, batch, inp], [0, inp, seq * inp, 1])
    out = dml.gru(x_view, dml.broadcast(ew, [1, 2, 3 * hidden, inp]), er, direction=Dir.BIDIRECTIONAL,
                  output_options=Opt.SINGLE)
    assert out.sequence is None
    (got,) = graph.compile([out.single])({ex: x_bm, ew: w1, er: r})
    w = np.concatenate([w1[0], w1[0]]).astype(np.float64)
    _, want = gru_ref(x_bm.transpose(1, 0, 2).astype(np.float64), w, r[0].astype(np.float64),
                      np.zeros((2, 6 * hidden)), np.zeros((2, batch, hidden)), [seq] * batch,
                      ["sigmoid", "tanh"] * 2, Dir.BIDIRECTIONAL, False)
    np.testing.assert_allclose(got[0], want, atol=1e-5)


def test_gru_sequence_lengths_beyond_seq_are_clamped(graph, directml_differs):
    directml_differs("a sequence length past the sequence gives a single output of 0, not the clamped one")
    a = make(Dir.FORWARD, seq=3, batch=1)
    ex, ew, er = (graph.input(a[k].shape) for k in ("x", "w", "r"))
    el = graph.input([1, 1, 1, 1], np.uint32)
    out = dml.gru(ex, ew, er, sequence_lengths=el)
    got = graph.compile([out.single])({ex: a["x"], ew: a["w"], er: a["r"], el: np.uint32([[[[1000]]]])})[0]
    _, want = gru_ref(a["x"][0].astype(np.float64), a["w"][0], a["r"][0], np.zeros((1, 18)), np.zeros((1, 1, 3)),
                      [3], ["sigmoid", "tanh"], Dir.FORWARD, False)
    np.testing.assert_allclose(got[0], want, atol=1e-5)


def test_gru_errors(graph):
    x, w, r = graph.input([1, 5, 2, 4]), graph.input([1, 1, 9, 4]), graph.input([1, 1, 9, 3])
    with pytest.raises(ValueError, match=r"weight must be \[1, 2, 9, 4\]"):
        dml.gru(x, w, r, direction=Dir.BIDIRECTIONAL)
    with pytest.raises(ValueError, match=r"recurrence must be \[1, 1, 9, 3\]"):
        dml.gru(x, w, graph.input([1, 1, 6, 3]))
    with pytest.raises(ValueError, match=r"bias must be \[1, 1, 1, 18\]"):
        dml.gru(x, w, r, graph.input([1, 1, 1, 9]))
    with pytest.raises(ValueError, match=r"hidden_init must be \[1, 1, 2, 3\]"):
        dml.gru(x, w, r, None, graph.input([1, 1, 3, 3]))
    with pytest.raises(ValueError, match="sequence_lengths has type INT32"):
        dml.gru(x, w, r, sequence_lengths=graph.input([1, 1, 1, 2], np.int32))
    with pytest.raises(ValueError, match=r"sequence_lengths must be \[1, 1, 1, 2\]"):
        dml.gru(x, w, r, sequence_lengths=graph.input([1, 1, 1, 3], np.uint32))
    with pytest.raises(ValueError, match="weight has type FLOAT16"):
        dml.gru(x, graph.input([1, 1, 9, 4], np.float16), r)
    with pytest.raises(ValueError, match="input has type FLOAT64"):
        dml.gru(graph.input([1, 5, 2, 4], np.float64), w, r)
    with pytest.raises(ValueError, match=r"input must be \[1, seq_length"):
        dml.gru(graph.input([2, 5, 2, 4]), w, r)
    with pytest.raises(ValueError, match="needs 4 activations"):
        dml.gru(x, graph.input([1, 2, 9, 4]), graph.input([1, 2, 9, 3]), direction=Dir.BIDIRECTIONAL,
                activation_descs=[FA.sigmoid(), FA.tanh()])
    with pytest.raises(ValueError, match="must not be FusedActivation.none"):
        dml.gru(x, w, r, activation_descs=[FA.none(), FA.tanh()])
