"""multihead_attention against a NumPy reference: every query / key / value form (separate and stacked), bias,
each mask type, relative position bias, past key / value and the present outputs."""

import numpy as np
import pytest

import directml as dml

RNG = np.random.default_rng(13)
MT = dml.MultiheadAttentionMaskType


@pytest.fixture
def graph(device):
    return dml.Graph(device)


def rand(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mha_ref(q, k, v, heads, scale=None, bias=None, additive_mask=None, rel=None, past_k=None, past_v=None):
    """q [B, S, H*hs], k [B, kvS, H*hs], v [B, kvS, H*vhs]; additive_mask [B, H, S, T] added to the scores."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    b, s, hidden = q.shape
    hs, vhs = hidden // heads, v.shape[2] // heads
    if bias is not None:
        bias = bias.astype(np.float64)
        q, k, v = q + bias[:hidden], k + bias[hidden:2 * hidden], v + bias[2 * hidden:]
    Q = q.reshape(b, s, heads, hs).transpose(0, 2, 1, 3)
    K = k.reshape(b, -1, heads, hs).transpose(0, 2, 1, 3)
    V = v.reshape(b, -1, heads, vhs).transpose(0, 2, 1, 3)
    if past_k is not None:
        K = np.concatenate([past_k.astype(np.float64), K], axis=2)
        V = np.concatenate([past_v.astype(np.float64), V], axis=2)
    scores = (1 / np.sqrt(hs) if scale is None else scale) * Q @ K.swapaxes(-1, -2)
    if rel is not None:
        scores = scores + rel
    if additive_mask is not None:
        scores = scores + additive_mask
    out = (softmax(scores) @ V).transpose(0, 2, 1, 3).reshape(b, s, heads * vhs)
    return out, K, V


def close(got, want, dtype=np.float32):
    tol = 1e-5 if dtype == np.float32 else 1e-2
    np.testing.assert_allclose(got.astype(np.float64), want, atol=tol, rtol=tol)


def run(graph, outputs, feeds):
    return graph.compile([o for o in outputs if o is not None])(feeds)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("with_bias", [False, True])
def test_separate_query_key_value(graph, dtype, with_bias):
    B, S, kvS, H, hs, vhs = 2, 3, 5, 2, 4, 3
    q, k, v = rand((B, S, H * hs), dtype), rand((B, kvS, H * hs), dtype), rand((B, kvS, H * vhs), dtype)
    bias = rand((2 * H * hs + H * vhs,), dtype)
    eq, ek, ev = graph.input(q.shape, dtype), graph.input(k.shape, dtype), graph.input(v.shape, dtype)
    eb = graph.input(bias.shape, dtype) if with_bias else None
    out = dml.multihead_attention(eq, ek, ev, bias=eb, head_count=H)
    assert out.output.shape == (B, S, H * vhs) and out.output.dtype == dtype
    assert out.present_key is None and out.present_value is None
    (got,) = run(graph, [out.output], {eq: q, ek: k, ev: v, **({eb: bias} if with_bias else {})})
    close(got, mha_ref(q, k, v, H, bias=bias if with_bias else None)[0], dtype)


@pytest.mark.parametrize("form", ["qkv", "qk+v", "q+kv"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_stacked_forms(graph, form, with_bias):
    B, S, H, hs = 2, 4, 3, 2
    q, k, v = rand((B, S, H * hs)), rand((B, S, H * hs)), rand((B, S, H * hs))
    bias = rand((3 * H * hs,))
    heads = lambda a: a.reshape(B, S, H, 1, hs)  # noqa: E731
    eb = graph.input(bias.shape) if with_bias else None
    feeds = {eb: bias} if with_bias else {}
    if form == "qkv":
        stacked = np.concatenate([heads(q), heads(k), heads(v)], axis=3)
        e = graph.input(stacked.shape)
        out = dml.multihead_attention(stacked_query_key_value=e, bias=eb, head_count=H)
        feeds[e] = stacked
    elif form == "qk+v":
        stacked = np.concatenate([heads(q), heads(k)], axis=3)
        e, ev = graph.input(stacked.shape), graph.input(v.shape)
        out = dml.multihead_attention(value=ev, stacked_query_key=e, bias=eb, head_count=H)
        feeds.update({e: stacked, ev: v})
    else:
        stacked = np.concatenate([heads(k), heads(v)], axis=3)
        eq, e = graph.input(q.shape), graph.input(stacked.shape)
        out = dml.multihead_attention(eq, stacked_key_value=e, bias=eb, head_count=H)
        feeds.update({eq: q, e: stacked})
    (got,) = run(graph, [out.output], feeds)
    close(got, mha_ref(q, k, v, H, bias=bias if with_bias else None)[0])


def key_mask(b, h, s, t, begin, end, filter_value):
    """The additive mask of keys outside [begin[b], end[b])."""
    j = np.arange(t)
    keep = (j[None, :] >= np.asarray(begin)[:, None]) & (j[None, :] < np.asarray(end)[:, None])
    return np.broadcast_to(np.where(keep, 0.0, filter_value)[:, None, None, :], (b, h, s, t))


@pytest.mark.parametrize("mask_type", [MT.KEY_SEQUENCE_LENGTH, MT.KEY_SEQUENCE_END_START,
                                       MT.KEY_QUERY_SEQUENCE_LENGTH_START_END, MT.BOOLEAN])
@pytest.mark.parametrize("filter_value", [-10000.0, -3.0])
def test_masks(graph, mask_type, filter_value):
    B, S, T, H, hs = 3, 2, 6, 2, 2
    q, k, v = rand((B, S, H * hs)), rand((B, T, H * hs)), rand((B, T, H * hs))
    if mask_type == MT.KEY_SEQUENCE_LENGTH:
        mask, additive = np.int32([[4, 6, 1]]), key_mask(B, H, S, T, [0, 0, 0], [4, 6, 1], filter_value)
    elif mask_type == MT.KEY_SEQUENCE_END_START:
        mask = np.int32([[5, 6, 3], [1, 0, 2]])  # row 0 the ends (exclusive), row 1 the starts
        additive = key_mask(B, H, S, T, [1, 0, 2], [5, 6, 3], filter_value)
    elif mask_type == MT.KEY_QUERY_SEQUENCE_LENGTH_START_END:
        mask = np.int32([2, 5, 6, 0, 2, 4, 6, 0, 6, 12, 18])  # key lengths first
        additive = key_mask(B, H, S, T, [0, 0, 0], [2, 5, 6], filter_value)
    else:
        mask = RNG.integers(0, 2, (B, H, S, T)).astype(np.int32)
        mask[..., 0] = 3  # anything non-zero keeps
        additive = np.where(mask == 0, filter_value, 0.0)
        if graph.device.kind == "directml":  # DirectML adds (1 - mask) * filter (its docs define 0 and 1 only)
            additive = (1.0 - mask) * filter_value
    eq, ek, ev, em = graph.input(q.shape), graph.input(k.shape), graph.input(v.shape), graph.input(mask.shape, np.int32)
    out = dml.multihead_attention(eq, ek, ev, mask=em, head_count=H, mask_type=mask_type,
                                  mask_filter_value=filter_value)
    (got,) = run(graph, [out.output], {eq: q, ek: k, ev: v, em: mask})
    close(got, mha_ref(q, k, v, H, additive_mask=additive)[0])


def test_broadcast_boolean_mask_and_relative_position_bias(graph, directml_differs):
    directml_differs("a broadcast (zero-stride) BOOLEAN mask with relative position bias weighs otherwise")
    B, S, T, H, hs = 2, 3, 4, 2, 3
    q, k, v = rand((B, S, H * hs)), rand((B, T, H * hs)), rand((B, T, H * hs))
    key_padding = np.int32([[1, 1, 0, 1], [1, 0, 0, 0]]).reshape(B, 1, 1, T)
    rel = rand((1, H, S, T))
    eq, ek, ev = graph.input(q.shape), graph.input(k.shape), graph.input(v.shape)
    em, er = graph.input(key_padding.shape, np.int32), graph.input(rel.shape)
    out = dml.multihead_attention(eq, ek, ev, mask=dml.broadcast(em, [B, H, S, T]),
                                  relative_position_bias=dml.broadcast(er, [B, H, S, T]), head_count=H,
                                  mask_type=MT.BOOLEAN, scale=0.5)
    (got,) = run(graph, [out.output], {eq: q, ek: k, ev: v, em: key_padding, er: rel})
    additive = np.broadcast_to(np.where(key_padding == 0, -10000.0, 0.0), (B, H, S, T))
    close(got, mha_ref(q, k, v, H, scale=0.5, additive_mask=additive, rel=rel)[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_past_key_value_and_present_outputs(graph, dtype):
    B, S, P, H, hs, vhs = 2, 2, 3, 2, 3, 2
    q, k, v = rand((B, S, H * hs), dtype), rand((B, S, H * hs), dtype), rand((B, S, H * vhs), dtype)
    pk, pv, bias = rand((B, H, P, hs), dtype), rand((B, H, P, vhs), dtype), rand((2 * H * hs + H * vhs,), dtype)
    arrays = dict(query=q, key=k, value=v, past_key=pk, past_value=pv, bias=bias)
    inputs = {name: graph.input(a.shape, dtype) for name, a in arrays.items()}
    out = dml.multihead_attention(**inputs, head_count=H, output_present_key=True, output_present_value=True)
    assert out.present_key.shape == (B, H, P + S, hs) and out.present_value.shape == (B, H, P + S, vhs)
    got, got_k, got_v = run(graph, out, {inputs[n]: a for n, a in arrays.items()})
    want, want_k, want_v = mha_ref(q, k, v, H, bias=bias, past_k=pk, past_v=pv)
    close(got, want, dtype)
    close(got_k, want_k, dtype)
    close(got_v, want_v, dtype)


def test_present_without_past_and_only_one_present(graph, directml_differs):
    directml_differs("CompileGraph refuses only one of the present key / value (E_INVALIDARG)")
    B, S, H, hs = 1, 3, 2, 2
    q, k, v = rand((B, S, H * hs)), rand((B, S, H * hs)), rand((B, S, H * hs))
    eq, ek, ev = graph.input(q.shape), graph.input(k.shape), graph.input(v.shape)
    out = dml.multihead_attention(eq, ek, ev, head_count=H, output_present_value=True)
    assert out.present_key is None
    got, got_v = run(graph, out, {eq: q, ek: k, ev: v})
    want, _, want_v = mha_ref(q, k, v, H)
    close(got, want)
    close(got_v, want_v)


def test_leading_ones_and_strided_query(graph):
    # a 4-D query [1, B, S, hidden] read from every other row of a larger buffer; 5-D key and value
    B, S, H, hs = 2, 3, 2, 2
    q_big, k, v = rand((1, B, 2 * S, H * hs)), rand((1, 1, B, S, H * hs)), rand((1, 1, B, S, H * hs))
    eq, ek, ev = graph.input(q_big.shape), graph.input(k.shape), graph.input(v.shape)
    q_view = dml.reinterpret(eq, [1, B, S, H * hs], [0, 2 * S * H * hs, 2 * H * hs, 1])
    out = dml.multihead_attention(q_view, ek, ev, head_count=H)
    assert out.output.shape == (B, S, H * hs)
    (got,) = run(graph, [out.output], {eq: q_big, ek: k, ev: v})
    close(got, mha_ref(q_big[0, :, ::2], k[0, 0], v[0, 0], H)[0])


# Shapes a fused float16 kernel takes (head sizes 64 and 128), with partial tiles of queries and keys (77 is
# SD's text length), each sequence mask, stacked inputs, bias and past key / value.
@pytest.mark.parametrize("hs", [64, 128])
@pytest.mark.parametrize("S, T", [(77, 77), (130, 77), (33, 200)])
def test_float16_head_sizes_of_fused_kernels(graph, hs, S, T):
    B, H = 2, 3
    q, k, v = rand((B, S, H * hs), np.float16), rand((B, T, H * hs), np.float16), rand((B, T, H * hs), np.float16)
    eq, ek, ev = graph.input(q.shape, np.float16), graph.input(k.shape, np.float16), graph.input(v.shape, np.float16)
    (got,) = run(graph, [dml.multihead_attention(eq, ek, ev, head_count=H).output], {eq: q, ek: k, ev: v})
    close(got, mha_ref(q, k, v, H)[0], np.float16)


# Head sizes that, of the fused float16 kernels, only cuDNN's SDPA takes (multiples of 8: SD 1.5's 40, 80 and 160;
# value heads of another size than the query's), from separate inputs and read in place from a stacked one.
@pytest.mark.parametrize("hs, vhs, stacked", [(40, 40, False), (80, 80, False), (160, 160, False), (64, 32, False),
                                              (40, 40, True), (80, 80, True)])
def test_float16_other_head_sizes(graph, hs, vhs, stacked):
    B, S, T, H = 2, 100, 77, 2
    if stacked:
        qkv = rand((B, S, H, 3, hs), np.float16)
        e = graph.input(qkv.shape, np.float16)
        (got,) = run(graph, [dml.multihead_attention(stacked_query_key_value=e, head_count=H).output], {e: qkv})
        q, k, v = (qkv[:, :, :, i].reshape(B, S, H * hs) for i in range(3))
    else:
        q, k, v = rand((B, S, H * hs), np.float16), rand((B, T, H * hs), np.float16), rand((B, T, H * vhs), np.float16)
        eq, ek, ev = (graph.input(a.shape, np.float16) for a in (q, k, v))
        (got,) = run(graph, [dml.multihead_attention(eq, ek, ev, head_count=H).output], {eq: q, ek: k, ev: v})
    close(got, mha_ref(q, k, v, H)[0], np.float16)


@pytest.mark.parametrize("mask_type", [MT.KEY_SEQUENCE_LENGTH, MT.KEY_SEQUENCE_END_START, MT.BOOLEAN])
def test_float16_head_size_64_masks(graph, mask_type):
    B, S, T, H, hs = 2, 70, 90, 2, 64
    q, k, v = rand((B, S, H * hs), np.float16), rand((B, T, H * hs), np.float16), rand((B, T, H * hs), np.float16)
    if mask_type == MT.KEY_SEQUENCE_LENGTH:
        mask, additive = np.int32([[65, 1]]), key_mask(B, H, S, T, [0, 0], [65, 1], -10000.0)
    elif mask_type == MT.KEY_SEQUENCE_END_START:
        mask, additive = np.int32([[90, 40], [3, 39]]), key_mask(B, H, S, T, [3, 39], [90, 40], -10000.0)
    else:
        mask = RNG.integers(0, 2, (B, H, S, T)).astype(np.int32)
        additive = np.where(mask == 0, -10000.0, 0.0)
    eq, ek, ev = graph.input(q.shape, np.float16), graph.input(k.shape, np.float16), graph.input(v.shape, np.float16)
    em = graph.input(mask.shape, np.int32)
    out = dml.multihead_attention(eq, ek, ev, mask=em, head_count=H, mask_type=mask_type)
    (got,) = run(graph, [out.output], {eq: q, ek: k, ev: v, em: mask})
    close(got, mha_ref(q, k, v, H, additive_mask=additive)[0], np.float16)


def test_float16_head_size_64_stacked_bias_past_and_present(graph):
    B, S, P, H, hs = 2, 40, 30, 2, 64
    qkv = rand((B, S, H, 3, hs), np.float16)
    pk, pv, bias = rand((B, H, P, hs), np.float16), rand((B, H, P, hs), np.float16), rand((3 * H * hs,), np.float16)
    e, epk, epv, eb = (graph.input(a.shape, np.float16) for a in (qkv, pk, pv, bias))
    out = dml.multihead_attention(stacked_query_key_value=e, past_key=epk, past_value=epv, bias=eb, head_count=H,
                                  output_present_key=True, output_present_value=True)
    got, got_k, got_v = run(graph, out, {e: qkv, epk: pk, epv: pv, eb: bias})
    q, k, v = (qkv[:, :, :, i].reshape(B, S, H * hs) for i in range(3))
    want, want_k, want_v = mha_ref(q, k, v, H, bias=bias, past_k=pk, past_v=pv)
    close(got, want, np.float16)
    close(got_k, want_k, np.float16)
    close(got_v, want_v, np.float16)


def test_attention_errors(graph):
    q, k, v = graph.input([2, 3, 4]), graph.input([2, 5, 4]), graph.input([2, 5, 6])
    mha = dml.multihead_attention
    with pytest.raises(ValueError, match="exactly one query, key and value"):
        mha(q, k, head_count=2)
    with pytest.raises(ValueError, match="exactly one query, key and value"):
        mha(q, k, v, stacked_key_value=graph.input([2, 5, 2, 2, 2]), head_count=2)
    with pytest.raises(ValueError, match="not a multiple of head_count 3"):
        mha(q, k, v, head_count=3)
    with pytest.raises(ValueError, match="head_count must be positive"):
        mha(q, k, v, head_count=0)
    with pytest.raises(TypeError):
        mha(q, k, v)  # head_count is required
    with pytest.raises(ValueError, match=r"key must be \[2, 5, 4\]"):
        mha(q, graph.input([2, 5, 6]), v, head_count=2)
    with pytest.raises(ValueError, match=r"value must be \[2, 5, 6\]"):
        mha(q, k, graph.input([2, 4, 6]), head_count=2)
    with pytest.raises(ValueError, match=r"bias must be \[14\]"):
        mha(q, k, v, bias=graph.input([12]), head_count=2)
    with pytest.raises(ValueError, match="leading 1s"):
        mha(graph.input([2, 2, 3, 4]), k, v, head_count=2)
    with pytest.raises(ValueError, match="element types differ"):
        mha(q, k, graph.input([2, 5, 6], np.float16), head_count=2)
    with pytest.raises(ValueError, match="FLOAT32 or FLOAT16"):
        mha(graph.input([2, 3, 4], np.float64), graph.input([2, 5, 4], np.float64),
            graph.input([2, 5, 6], np.float64), head_count=2)
    with pytest.raises(ValueError, match="a mask needs a mask_type"):
        mha(q, k, v, mask=graph.input([1, 2], np.int32), head_count=2)
    with pytest.raises(ValueError, match="mask_type needs a mask"):
        mha(q, k, v, head_count=2, mask_type=MT.BOOLEAN)
    with pytest.raises(ValueError, match="mask has type FLOAT32"):
        mha(q, k, v, mask=graph.input([1, 2]), head_count=2, mask_type=MT.KEY_SEQUENCE_LENGTH)
    with pytest.raises(ValueError, match=r"mask must be \[2, 2, 3, 5\]"):
        mha(q, k, v, mask=graph.input([2, 1, 1, 5], np.int32), head_count=2, mask_type=MT.BOOLEAN)
    with pytest.raises(ValueError, match=r"mask must be \[2, 2\]"):
        mha(q, k, v, mask=graph.input([1, 2], np.int32), head_count=2, mask_type=MT.KEY_SEQUENCE_END_START)
    with pytest.raises(ValueError, match="past_key and past_value come together"):
        mha(q, k, v, past_key=graph.input([2, 2, 1, 2]), head_count=2)
    with pytest.raises(ValueError, match=r"past_value must be \[2, 2, 1, 3\]"):
        mha(q, k, v, past_key=graph.input([2, 2, 1, 2]), past_value=graph.input([2, 2, 1, 2]), head_count=2)
    with pytest.raises(ValueError, match=r"relative_position_bias must be \[2, 2, 3, 5\]"):
        mha(q, k, v, relative_position_bias=graph.input([2, 2, 3, 4]), head_count=2)
    with pytest.raises(ValueError, match=r"stacked_query_key_value must be \[batch, sequence, 2 \(heads\), 3"):
        mha(stacked_query_key_value=graph.input([2, 3, 2, 2, 2]), head_count=2)
