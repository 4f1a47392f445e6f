"""Property tests (hypothesis): random graphs, views, dtypes and bindings give NumPy's answer or a clean ValueError or
TypeError that names the problem; never a crash, never a silent wrong answer.

- test_random_graph chains random operators of every family (element-wise, activations, softmax, reduce,
  cumulative, gemm, convolution, pooling, normalization, slice/join/split/padding/tile/depth-space, gather,
  scatter, reverse_subsequences, top_k, cast, and reshapes, transposes, strided views and broadcasts of
  intermediate values) on shapes of 1 to 8 dimensions (now and then past the kernels' threading grain), every
  dtype, inputs given as packed tensors, zero-stride broadcasts and strided or bit-reinterpreted views of larger
  buffers; binds them in random ways (names or Expressions, arrays, flat or non-contiguous arrays, Python lists,
  Buffers), dispatches again on other data, and compares every output of the first dispatch with a float64 NumPy
  reference within an error bound carried along the chain (integers: exactly). Invalid arguments drawn on
  purpose (axes, windows, split sizes, views past their buffer, broadcasts) must be refused.
- test_random_bindings: wrong dtypes, sizes and shapes, Buffers of another device or type, unknown, missing and
  doubly bound keys, objects that are no arrays, against the cast rule; each is refused naming the input, or
  gives the right answer.
- test_index_operators_adversarial: gather, gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot,
  reverse_subsequences and top_k with indices anywhere in their type's range: out-of-range ones read 0 and write
  nothing, and .ci/sanitize.sh runs this under AddressSanitizer (nothing is read or written out of bounds).
- test_top_k_adversarial: NaN, infinities and extremes; k anywhere.
- test_any_values_and_parameters: NaN, infinities, extremes and denormals in every input of most operator
  families, parameters at and past the edge of their range, adversarial integer inputs (roi batch indices,
  attention masks, sequence lengths): a clean refusal or outputs of the promised type and shape.

Examples per run: the number in each @property_test; DIRECTML_PROPERTY_EXAMPLES=n runs n per property instead.
"""

import functools
import math
import os
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import directml as dml

DEV = dml.Device()
OTHER = dml.Device("cpu")  # another device: its Buffers must be refused by DEV's operators
EXAMPLES = int(os.environ.get("DIRECTML_PROPERTY_EXAMPLES", "0")) or None


def property_test(examples):
    """A hypothesis test of `examples` examples drawing from st.data(); an example whose graph a builder or the
    executor refused (cleanly, as allowed) ends there."""
    def wrap(fn):
        @functools.wraps(fn)
        def body(data):
            try:
                fn(data)
            except Refused:
                event("refused")
        return settings(max_examples=EXAMPLES or examples, deadline=None, database=None, print_blob=True,
                        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])(
            given(st.data())(body))
    return wrap


FLOATS = [np.float32, np.float16, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
ALL = FLOATS + INTS
NUMERIC = [np.dtype(t) for t in ALL if t is not np.float64]  # DirectML's tables list every type but FLOAT64
F16_32 = [np.dtype(np.float32), np.dtype(np.float16)]
UNIT = {np.dtype(np.float16): 2.0**-11, np.dtype(np.float32): 2.0**-24, np.dtype(np.float64): 2.0**-53}
LIMIT = {np.dtype(np.float16): 200.0, np.dtype(np.float32): 1e5, np.dtype(np.float64): 1e5}  # magnitudes we grow to
MAX_ELEMENTS = 600  # what tile, padding and join may grow a small tensor to


class Refused(Exception):
    """A builder refused a call it is allowed to refuse; the chain goes on without that operator."""


def is_float(dtype):
    return np.dtype(dtype).kind == "f"


@dataclass
class Node:
    """A graph value with its reference: float64 for float tensors (within `tol`), the exact values otherwise."""
    expr: object
    ref: np.ndarray
    tol: float = 0.0
    inputs: frozenset = field(default_factory=frozenset)  # the graph inputs it reads

    @property
    def dtype(self):
        return np.dtype(self.expr.dtype)

    @property
    def shape(self):
        return tuple(self.ref.shape)

    @property
    def mag(self):
        return float(np.max(np.abs(self.ref.astype(np.float64))))


def rounding(dtype, mag, terms=1):
    """What one operator's own rounding may add: a few units in the last place of `mag`, per accumulated term."""
    dtype = np.dtype(dtype)
    return (4 + 2 * terms) * UNIT[dtype] * (1 + mag) if is_float(dtype) else 0.0


def values(rng, shape, dtype, full=False, lo=-3.0, hi=3.0):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.uniform(lo, hi, shape).astype(dtype)
    info = np.iinfo(dtype)
    if full:  # anywhere in the type's range: wrap-around, INT_MIN / -1, shifts past the width
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return rng.integers(max(int(info.min), -9), min(int(info.max), 9), size=shape, endpoint=True).astype(dtype)


def index_values(rng, shape, n, dtype):
    """Indices into a dimension of n: valid ones (negative ones too for signed types) mixed with adversarial ones."""
    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    bad = [n, n + 1, n + 7, int(info.max), int(info.max) - 1, min(2**31 - 1, int(info.max)), min(2**32, int(info.max))]
    if info.min < 0:
        bad += [-n - 1, int(info.min), int(info.min) + 1, max(-(2**31), int(info.min))]
    good = rng.integers(0, n, size=shape)
    if info.min < 0:
        good = np.where(rng.random(shape) < 0.4, good - n, good)
    pick = np.array(bad, dtype=object)[rng.integers(0, len(bad), size=shape)]
    out = np.where(rng.random(shape) < 0.3, pick, good.astype(object))
    return np.array(out.tolist(), dtype=dtype).reshape(shape)


def resolve(indices, n):
    """DirectML's reading of an index: a negative one counts from the end; -1 when it is out of range."""
    i = np.asarray(indices).astype(object)
    i = np.where(i < 0, i + n, i)
    return np.where((i >= 0) & (i < n), i, -1).astype(np.int64)


def factorize(rng, count, rank):
    """Random sizes of `rank` dimensions whose product is count."""
    sizes = [1] * rank
    n, p = count, 2
    while n > 1:
        while n % p:
            p += 1
        sizes[int(rng.integers(rank))] *= p
        n //= p
    return sizes


class Ctx:
    """One random graph under construction: the draws, the graph, the host data of its inputs."""

    def __init__(self, data):
        self.data = data
        self.g = dml.Graph(DEV)
        self.feeds = {}
        self.rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))

    def draw(self, strategy, label=None):
        return self.data.draw(strategy, label=label)

    def pick(self, options, label=None):
        return self.data.draw(st.sampled_from(list(options)), label=label)

    def int(self, lo, hi, label=None):
        return self.data.draw(st.integers(lo, hi), label=label)

    def flag(self, label=None):
        return self.data.draw(st.booleans(), label=label)

    def build(self, what, fn, accept=True):
        """Calls a builder. accept: True (the call is valid), False (it is not), None (the dtype tables decide)."""
        try:
            result = fn()
        except (ValueError, TypeError) as e:
            if accept is True:
                raise AssertionError(f"{what} refused a valid call: {type(e).__name__}: {e}") from e
            text = str(e)
            assert text and ("DML_OPERATOR_" in text or what in text), f"{what}: the error names nothing: {e!r}"
            note(f"refused: {what}: {text}")
            raise Refused(text) from None
        if accept is False:
            raise AssertionError(f"{what} accepted an invalid call")
        return result

    def compile(self, outputs):
        """Every executor runs every graph the builders accepted: a refusal at compile fails."""
        return self.build("compile", lambda: self.g.compile(list(outputs)), True)

    def refuses(self, what, fn):
        try:
            self.build(what, fn, False)
        except Refused:
            pass

    def input(self, shape, dtype, array):
        x = self.g.input(list(shape), dtype)
        self.feeds[x] = array
        return x

    def source(self, shape, dtype, *, full=None, lo=-3.0, hi=3.0, views=True, data=None):
        """A new graph input seen as `shape`: packed, a zero-stride broadcast or a strided view of a larger buffer."""
        shape, dtype = tuple(shape), np.dtype(dtype)
        if full is None:
            full = dtype.kind != "f" and self.flag("full range")
        make = data or (lambda s: values(self.rng, s, dtype, full, lo, hi))
        kind = self.pick(["packed", "broadcast", "strided", "bitview"] if views else ["packed"], "source")
        if kind == "bitview" and (dtype.kind == "f" or data is not None):
            kind = "strided"
        if kind == "broadcast":
            drop = self.int(0, len(shape) - 1)
            small = [1 if self.flag() else s for s in shape[drop:]]
            a = make(small)
            x = self.input(small, dtype, a)
            e = self.build("broadcast", lambda: dml.broadcast(x, list(shape)))
            return Node(e, self.reference(np.broadcast_to(a, shape)), 0.0, frozenset([x]))
        if kind in ("strided", "bitview"):
            strides = [self.int(0, 4) for _ in shape]
            extent = 1 + sum((s - 1) * t for s, t in zip(shape, strides))
            base = self.pick([t for t in INTS if np.dtype(t).itemsize != dtype.itemsize] or INTS) \
                if kind == "bitview" else dtype
            base = np.dtype(base)
            count = -(-extent * dtype.itemsize // base.itemsize)
            if self.flag("too short") and (extent - 1) * dtype.itemsize // base.itemsize > 0:
                short = self.g.input([(extent - 1) * dtype.itemsize // base.itemsize], base)
                self.refuses("reinterpret", lambda: dml.reinterpret(short, list(shape), strides, dtype=dtype))
            count += self.int(0, 2)
            a = values(self.rng, [count], base, full) if kind == "bitview" else make([count])
            x = self.input([count], base, a)
            e = self.build("reinterpret", lambda: dml.reinterpret(x, list(shape), strides, dtype=dtype))
            flat = np.frombuffer(a.tobytes()[:count * base.itemsize // dtype.itemsize * dtype.itemsize], dtype)
            view = np.lib.stride_tricks.as_strided(flat, shape, [t * dtype.itemsize for t in strides])
            return Node(e, self.reference(view), 0.0, frozenset([x]))
        a = make(shape)
        x = self.input(shape, dtype, a)
        return Node(x, self.reference(a), 0.0, frozenset([x]))

    @staticmethod
    def reference(a):
        a = np.asarray(a)
        return a.astype(np.float64) if a.dtype.kind == "f" else a.copy()

    def like(self, node, **kw):
        return self.source(node.shape, node.dtype, **kw)

    def packed(self, node):
        """The node as a packed tensor (a view is copied by IDENTITY first), so that reinterpret reshapes it."""
        if node.expr.strides is None and node.expr.name is None:
            return node
        return Node(self.build("identity", lambda: dml.identity(node.expr)), node.ref, node.tol, node.inputs)

    def reshape(self, node, sizes):
        p = self.packed(node)
        e = self.build("reinterpret", lambda: dml.reinterpret(p.expr, list(sizes)))
        return Node(e, p.ref.reshape(sizes), p.tol, p.inputs)


def derived(ctx_node, expr, ref, tol, *others):
    inputs = ctx_node.inputs.union(*[o.inputs for o in others])
    return Node(expr, ref, tol, inputs)


# --- the operators a chain draws from ----------------------------------------------------------------------------
# Each takes (ctx, node) and returns the next Node, or raises Refused. `kinds`: "f" float, "i" integer tensors.

OPERATORS = []


def operator(kinds, weight=1):
    def register(fn):
        OPERATORS.extend([(fn, kinds)] * weight)
        return fn
    return register


def accepts(node, allowed):
    """True when DirectML's tables promise the dtype, None (may refuse) otherwise."""
    return True if node.dtype in [np.dtype(t) for t in allowed] else None


UNARY = {  # name: (reference, Lipschitz bound on the domain, domain check)
    "tanh": (np.tanh, lambda r: 1.0, None),
    "sin": (np.sin, lambda r: 1.0, None),
    "cos": (np.cos, lambda r: 1.0, None),
    "atan": (np.arctan, lambda r: 1.0, None),
    "erf": (np.vectorize(math.erf, otypes=[np.float64]), lambda r: 1.13, None),
    "exp": (np.exp, lambda r: math.exp(r.max()), lambda r: r.max() < 3),
    "log": (np.log, lambda r: 1 / r.min(), lambda r: r.min() > 0.25),
    "sqrt": (np.sqrt, lambda r: 0.5 / math.sqrt(r.min()), lambda r: r.min() > 0.25),
    "recip": (lambda x: 1 / x, lambda r: 1 / np.abs(r).min() ** 2, lambda r: np.abs(r).min() > 0.25),
    "abs": (np.abs, lambda r: 1.0, None),
    "negate": (np.negative, lambda r: 1.0, None),
    "identity": (lambda x: x, lambda r: 1.0, None),
    "floor": (np.floor, None, None),  # None: discontinuous, only on exact inputs
    "ceil": (np.ceil, None, None),
}


@operator("f")
def unary_float(ctx, node):
    name = ctx.pick(UNARY, "unary")
    ref_fn, lip, domain = UNARY[name]
    scale_bias = None if lip is None else ctx.pick([None, (0.5, 0.25), (-1.5, 1.0), (2.0, -0.5)], "scale_bias")
    x = node.ref if scale_bias is None else node.ref * scale_bias[0] + scale_bias[1]
    slack = node.tol * (1 if scale_bias is None else abs(scale_bias[0]))  # how far the device's input may be off
    if lip is None and slack > 0:
        raise Refused(f"{name} of an inexact input")
    reach = np.concatenate([x.ravel() - slack, x.ravel() + slack])
    if domain and not domain(reach):
        raise Refused(f"{name} outside its domain")
    out = ref_fn(x)
    if np.abs(out).max() > LIMIT[node.dtype]:
        raise Refused(f"{name} grows too far")
    sb = None if scale_bias is None else dml.ScaleBias(*scale_bias)
    e = ctx.build(name, lambda: getattr(dml, name)(node.expr, scale_bias=sb), accepts(node, F16_32))
    tol = 0.0 if lip is None else lip(reach) * slack + rounding(node.dtype, np.abs(out).max())
    return derived(node, e, out, tol, node)


@operator("i")
def unary_integer(ctx, node):
    name = ctx.pick(["abs", "negate", "sign", "bit_not", "bit_count", "identity", "logical_not"], "unary")
    x = node.ref
    t = node.dtype
    if name in ("abs", "negate"):
        allowed, out = [np.int8, np.int16, np.int32, np.int64], (np.abs(x) if name == "abs" else -x)  # INT_MIN wraps
    elif name == "sign":
        allowed, out = NUMERIC, np.sign(x).astype(t)
    elif name == "bit_not":
        allowed, out = ALL, ~x
    elif name == "bit_count":
        allowed = ALL
        bits = x.view(f"u{t.itemsize}").astype(np.uint64)
        out = np.array([bin(int(v)).count("1") for v in bits.ravel()], np.uint8).reshape(x.shape)
    elif name == "logical_not":
        allowed, out = [np.uint8, np.uint32], (x == 0).astype(t)
    else:
        allowed, out = ALL, x.copy()
    e = ctx.build(name, lambda: getattr(dml, name)(node.expr), accepts(node, allowed))
    return derived(node, e, out, 0.0, node)


ACTIVATIONS = {  # name: (kwargs, reference, Lipschitz)
    "activation_relu": ({}, lambda x: np.maximum(x, 0), 1.0),
    "activation_leaky_relu": ({"alpha": 0.1}, lambda x: np.where(x > 0, x, 0.1 * x), 1.0),
    "activation_elu": ({"alpha": 0.7}, lambda x: np.where(x > 0, x, 0.7 * (np.exp(x) - 1)), 1.0),
    "activation_celu": ({"alpha": 1.5}, lambda x: np.maximum(x, 0) + np.minimum(0, 1.5 * (np.exp(x / 1.5) - 1)), 1.0),
    "activation_sigmoid": ({}, lambda x: 1 / (1 + np.exp(-x)), 0.25),
    "activation_softsign": ({}, lambda x: x / (1 + np.abs(x)), 1.0),
    "activation_softplus": ({"steepness": 2.0}, lambda x: np.log1p(np.exp(2 * x)) / 2, 1.0),
    "activation_hard_sigmoid": ({"alpha": 0.3, "beta": 0.4}, lambda x: np.clip(0.3 * x + 0.4, 0, 1), 0.3),
    "activation_scaled_tanh": ({"alpha": 1.5, "beta": 0.5}, lambda x: 1.5 * np.tanh(0.5 * x), 0.75),
    "activation_linear": ({"alpha": -0.5, "beta": 2.0}, lambda x: -0.5 * x + 2, 0.5),
    "activation_gelu": ({}, lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))), 1.13),
    "activation_swish": ({"sigmoid_input_scale": 1.0}, lambda x: x / (1 + np.exp(-x)), 1.1),
    "activation_hard_swish": ({}, lambda x: x * np.clip(x / 6 + 0.5, 0, 1), 1.5),
}


@operator("fi")
def activation(ctx, node):
    name = ctx.pick(ACTIVATIONS, "activation")
    kwargs, ref_fn, lip = ACTIVATIONS[name]
    if not is_float(node.dtype):
        if name != "activation_relu":
            raise Refused("integer activation")
        e = ctx.build(name, lambda: dml.activation_relu(node.expr), accepts(node, [np.int8, np.int16, np.int32]))
        return derived(node, e, np.maximum(node.ref, 0).astype(node.dtype), 0.0, node)
    out = ref_fn(node.ref)
    e = ctx.build(name, lambda: getattr(dml, name)(node.expr, **kwargs), accepts(node, F16_32))
    return derived(node, e, out, lip * node.tol + rounding(node.dtype, np.abs(out).max()), node)


@operator("f")
def clip_threshold(ctx, node):
    lo = ctx.pick([-1.0, -0.5, 0.0, 0.25])
    hi = ctx.pick([0.5, 1.0, 2.0])
    if ctx.flag("threshold"):
        e = ctx.build("threshold", lambda: dml.threshold(node.expr, min=lo), accepts(node, F16_32))
        return derived(node, e, np.maximum(node.ref, lo), node.tol, node)
    e = ctx.build("clip", lambda: dml.clip(node.expr, min=lo, max=hi), accepts(node, F16_32))
    return derived(node, e, np.clip(node.ref, lo, hi), node.tol, node)


@operator("f")
def softmax(ctx, node):
    rank = len(node.shape)
    axes = sorted(ctx.draw(st.sets(st.integers(0, rank - 1), min_size=1, max_size=rank), "axes"))
    name = ctx.pick(["activation_softmax", "activation_log_softmax", "activation_hardmax"])
    x = node.ref
    shifted = x - x.max(axis=tuple(axes), keepdims=True)
    total = np.exp(shifted).sum(axis=tuple(axes), keepdims=True)
    if name == "activation_hardmax":
        if node.tol > 0:
            raise Refused("hardmax of an inexact input")
        last = list(range(rank - len(axes), rank))  # the softmax axes, moved to the end
        moved = np.moveaxis(x, axes, last)
        flat = moved.reshape(-1, int(np.prod([x.shape[a] for a in axes])))
        first = np.zeros_like(flat)
        first[np.arange(len(flat)), flat.argmax(axis=1)] = 1  # DirectML: 1 at the first largest element
        out = np.moveaxis(first.reshape(moved.shape), last, axes)
        tol = 0.0
    else:
        # The denominator sums n terms: a float32 sum (float16 accumulates in float32) is off by up to n - 1 units
        # relative, which log_softmax adds and softmax scales by its output (at most 1); 2688 terms were 1.4e-5 off.
        n = int(np.prod([x.shape[a] for a in axes]))
        summed = n * UNIT[np.dtype(np.float64 if node.dtype == np.float64 else np.float32)]
        if name == "activation_softmax":
            out, tol = np.exp(shifted) / total, 2 * node.tol + rounding(node.dtype, 1.0, 4) + summed
        else:
            out = shifted - np.log(total)
            tol = 2 * node.tol + rounding(node.dtype, np.abs(out).max(), 4) + summed
    e = ctx.build(name, lambda: getattr(dml, name)(node.expr, axes=axes), accepts(node, F16_32))
    return derived(node, e, out, tol, node)


RF = dml.ReduceFunction


@operator("fi")
def reduce(ctx, node):
    rank = len(node.shape)
    bad_axis = ctx.draw(st.integers(0, 15)) == 0
    axes = sorted(ctx.draw(st.sets(st.integers(0, rank - 1), max_size=rank), "axes")) + ([rank] if bad_axis else [])
    f = ctx.pick(list(RF), "function")
    t = node.dtype
    if f in (RF.ARGMAX, RF.ARGMIN, RF.MAX, RF.MIN):
        allowed = NUMERIC
    elif f in (RF.SUM, RF.L1, RF.SUM_SQUARE, RF.MULTIPLY):
        allowed = F16_32 + [np.dtype(x) for x in (np.int32, np.int64, np.uint32, np.uint64)]
    else:
        allowed = F16_32
    if bad_axis:
        ctx.build("reduce", lambda: dml.reduce(node.expr, function=f, axes=axes), False)
    red = tuple(axes) if axes else tuple(range(rank))
    n = int(np.prod([node.shape[a] for a in red]))
    x = node.ref
    kd = dict(axis=red, keepdims=True)
    tol = 0.0
    if f in (RF.ARGMAX, RF.ARGMIN):
        if node.tol > 0:
            raise Refused("arg of an inexact input")
        kept = [d for d in range(rank) if d not in red]
        moved = np.transpose(x, kept + list(red)).reshape([x.shape[d] for d in kept] + [n])
        out = (np.argmax if f == RF.ARGMAX else np.argmin)(moved, axis=-1)
        out = out.reshape([1 if d in red else x.shape[d] for d in range(rank)]).astype(np.uint32)
    elif not is_float(t):
        if f in (RF.MAX, RF.MIN):
            out = x.max(**kd) if f == RF.MAX else x.min(**kd)
        elif f in (RF.SUM, RF.L1, RF.SUM_SQUARE, RF.MULTIPLY):
            y = {RF.SUM: x, RF.L1: np.abs(x), RF.SUM_SQUARE: x * x, RF.MULTIPLY: x}[f]
            out = y.prod(dtype=t, **kd) if f == RF.MULTIPLY else y.sum(dtype=t, **kd)  # wraps as the type does
        else:
            out = x[tuple(slice(0, 1) for _ in range(rank))]  # refused for integers: any placeholder
            allowed = []
    else:
        m, tin = node.mag, node.tol
        if f in (RF.MAX, RF.MIN):
            out, tol = (x.max(**kd) if f == RF.MAX else x.min(**kd)), tin
        elif f in (RF.SUM, RF.L1):
            out, tol = (x if f == RF.SUM else np.abs(x)).sum(**kd), n * tin + rounding(t, n * m, n)
        elif f == RF.AVERAGE:
            out, tol = x.mean(**kd), tin + rounding(t, m, n)
        elif f == RF.SUM_SQUARE:
            out, tol = (x * x).sum(**kd), n * (2 * m + tin) * tin + rounding(t, n * m * m, n)
        elif f == RF.L2:
            out, tol = np.sqrt((x * x).sum(**kd)), math.sqrt(n) * tin + rounding(t, math.sqrt(n) * m, n)
        elif f == RF.LOG_SUM_EXP:
            out, tol = np.log(np.exp(x).sum(**kd)), tin + rounding(t, m + math.log(n), n)
        elif f == RF.LOG_SUM:
            if x.min() - tin < 0.25:
                raise Refused("log_sum of small values")
            s = x.sum(**kd)
            out = np.log(s)
            tol = (n * tin + rounding(t, n * m, n)) / s.min() + rounding(t, abs(out).max())
        else:  # MULTIPLY
            if n > 6 or m + tin > 2:
                raise Refused("product too large")
            out = x.prod(**kd)
            tol = n * (m + tin) ** (n - 1) * tin + rounding(t, (m + tin) ** n, n)
        if np.abs(out).max() > LIMIT[t]:
            raise Refused("reduction too large")
    e = ctx.build("reduce", lambda: dml.reduce(node.expr, function=f, axes=axes or None), accepts(node, allowed))
    return derived(node, e, out, tol, node)


AD = dml.AxisDirection


@operator("fi")
def cumulative(ctx, node):
    axis = ctx.int(0, len(node.shape) - 1)
    decreasing, exclusive = ctx.flag(), ctx.flag()
    product = ctx.flag("product")
    x = np.flip(node.ref, axis) if decreasing else node.ref
    n = node.shape[axis]
    if is_float(node.dtype):
        if product and (node.mag + node.tol > 1.5 or n > 6):
            raise Refused("product too large")
        acc = np.cumprod(x, axis=axis) if product else np.cumsum(x, axis=axis)
        m = node.mag + node.tol
        # the running products reach max(m, 1) ** n at most, the running sums n * m (as reduce's sum)
        reach = n * max(m, 1) ** n if product else n * m
        tol = (n * m ** (n - 1) if product else n) * node.tol + rounding(node.dtype, reach, n)
    else:
        acc = np.cumprod(x, axis=axis, dtype=node.dtype) if product else np.cumsum(x, axis=axis, dtype=node.dtype)
        tol = 0.0
    if exclusive:
        first = np.ones_like(np.take(acc, [0], axis=axis)) if product else np.zeros_like(np.take(acc, [0], axis=axis))
        acc = np.concatenate([first, np.take(acc, range(n - 1), axis=axis)], axis=axis)
    out = np.flip(acc, axis) if decreasing else acc
    name = "cumulative_product" if product else "cumulative_summation"
    kw = {"has_exclusive_product" if product else "has_exclusive_sum": exclusive}
    allowed = F16_32 + [np.dtype(x) for x in (np.int32, np.int64, np.uint32, np.uint64)]
    e = ctx.build(name, lambda: getattr(dml, name)(node.expr, axis=axis, axis_direction=AD.DECREASING if decreasing
                                                   else AD.INCREASING, **kw), accepts(node, allowed))
    return derived(node, e, out, tol, node)


def int_divide(a, b, floor):
    """Integer division and modulus as our kernels define them: x / 0 and x % 0 give 0; overflow wraps."""
    t = a.dtype
    bits = t.itemsize * 8
    q, r = [], []
    for x, y in zip(a.astype(object).ravel(), b.astype(object).ravel()):
        if y == 0:
            q.append(0)
            r.append(0)
            continue
        qt = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)  # truncated
        rt = x - qt * y
        if floor and rt != 0 and (rt < 0) != (y < 0):
            rt += y
        q.append(qt)
        r.append(rt)
    wrap = lambda v: np.array([(int(z) % 2**bits) for z in v], dtype=np.uint64).astype(t).reshape(a.shape)
    return wrap(q), wrap(r)


@operator("fi")
def binary(ctx, node):
    t = node.dtype
    if is_float(t):
        name = ctx.pick(["add", "subtract", "multiply", "divide", "max", "min", "mean", "difference_square",
                         "equals", "greater_than", "less_than_or_equal", "where"], "binary")
    else:
        name = ctx.pick(["add", "subtract", "multiply", "divide", "max", "min", "modulus_floor", "modulus_truncate",
                         "bit_and", "bit_or", "bit_xor", "bit_shift_left", "bit_shift_right", "logical_and",
                         "logical_xor", "equals", "greater_than", "less_than_or_equal", "where"], "binary")
    if name == "where":
        cond = ctx.source(node.shape, np.uint8, full=False, data=lambda s: ctx.rng.integers(0, 3, s).astype(np.uint8))
        other = ctx.like(node)
        e = ctx.build("where", lambda: dml.where(cond.expr, node.expr, other.expr))
        return derived(node, e, np.where(cond.ref != 0, node.ref, other.ref), max(node.tol, other.tol), cond, other)
    same = ctx.draw(st.integers(0, 5)) == 0
    if name == "divide" and is_float(t):
        other = ctx.like(node, data=lambda s: (ctx.rng.uniform(0.5, 3, s) * ctx.rng.choice([-1, 1], s)).astype(t))
    else:
        other = node if same else ctx.like(node)
    a, b = node.ref, other.ref
    ta, tb = node.tol, other.tol
    compare = name in ("equals", "greater_than", "less_than_or_equal")
    kwargs = {}
    if compare:
        if ta or tb:
            raise Refused("comparison of inexact values")
        out = {"equals": a == b, "greater_than": a > b, "less_than_or_equal": a <= b}[name].astype(np.uint8)
        allowed, tol = NUMERIC, 0.0
    elif is_float(t):
        ma, mb = node.mag + ta, other.mag + tb
        ref = {"add": lambda: (a + b, ta + tb), "subtract": lambda: (a - b, ta + tb),
               "multiply": lambda: (a * b, ma * tb + mb * ta + ta * tb), "max": lambda: (np.maximum(a, b), max(ta, tb)),
               "min": lambda: (np.minimum(a, b), max(ta, tb)), "mean": lambda: ((a + b) / 2, (ta + tb) / 2),
               "difference_square": lambda: ((a - b) ** 2, 2 * (ma + mb) * (ta + tb) + (ta + tb) ** 2),
               "divide": lambda: (a / b, ta / (np.abs(b).min() - tb) + ma * tb / (np.abs(b).min() - tb) ** 2)}
        out, tol = ref[name]()
        if name == "add" and ctx.flag("fused relu"):
            kwargs["fused_activation"] = dml.FusedActivation.relu()
            out = np.maximum(out, 0)
        if np.abs(out).max() > LIMIT[t]:
            raise Refused("too large")
        tol += rounding(t, np.abs(out).max())
        allowed = F16_32
    else:
        bits = t.itemsize * 8
        with np.errstate(over="ignore"):
            if name in ("divide", "modulus_floor", "modulus_truncate"):
                q, r = int_divide(a, b, name == "modulus_floor")
                out = q if name == "divide" else r
            elif name in ("bit_shift_left", "bit_shift_right"):
                big = b >= bits  # every bit shifts out
                s = np.where(big, 0, b).astype(t)
                out = np.where(big, 0, (a << s) if name == "bit_shift_left" else (a >> s)).astype(t)
            elif name in ("logical_and", "logical_xor"):
                out = (np.logical_and(a, b) if name == "logical_and" else np.logical_xor(a, b)).astype(t)
            else:
                out = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "max": np.maximum,
                       "min": np.minimum, "bit_and": np.bitwise_and, "bit_or": np.bitwise_or,
                       "bit_xor": np.bitwise_xor}[name](a, b).astype(t)
        allowed = {"bit_and": ALL, "bit_or": ALL, "bit_xor": ALL, "logical_and": [np.uint8, np.uint32],
                   "logical_xor": [np.uint8, np.uint32],
                   "bit_shift_left": [np.uint8, np.uint16, np.uint32, np.uint64]}.get(name, NUMERIC)
        allowed = [np.uint8, np.uint16, np.uint32, np.uint64] if name == "bit_shift_right" else allowed
        tol = 0.0
    e = ctx.build(name, lambda: getattr(dml, name)(node.expr, other.expr, **kwargs), accepts(node, allowed))
    return derived(node, e, out, tol, other)


@operator("fi")
def cast(ctx, node):
    target = np.dtype(ctx.pick(ALL, "target"))
    x = node.ref
    if is_float(node.dtype) and not is_float(target):
        if node.tol > 0:
            raise Refused("float to integer of an inexact value")
        info = np.iinfo(target)
        t = np.trunc(x)
        out = np.array([int(info.min) if v <= info.min else int(info.max) if v >= info.max else int(v)
                        for v in t.ravel()], dtype=object)
        out = np.array(out.tolist(), dtype=target).reshape(x.shape)
        tol = 0.0
    elif is_float(target):
        if not is_float(node.dtype) and np.abs(x.astype(np.float64)).max() > 2048:
            raise Refused("large integers to float")
        out = x.astype(np.float64)
        tol = node.tol + (rounding(target, node.mag) if is_float(node.dtype) else 0.0)
    else:
        out, tol = x.astype(target), 0.0  # integer to integer wraps
    e = ctx.build("cast", lambda: dml.cast(node.expr, dtype=target))
    return derived(node, e, out, tol, node)


# --- matrix, convolution, pooling, normalization -------------------------------------------------------------------

FUSED = {"none": (lambda y: y, 1.0), "relu": (lambda y: np.maximum(y, 0), 1.0),
         "sigmoid": (lambda y: 1 / (1 + np.exp(-y)), 0.25)}


def fused(ctx):
    """A fused activation (None for none), its reference and Lipschitz bound."""
    name = ctx.pick(FUSED, "fused")
    return (None if name == "none" else getattr(dml.FusedActivation, name)()), *FUSED[name]


def shaped(ctx, node, rank):
    """node with `rank` dimensions: itself, or a reshape of it (reinterpret of its packed form)."""
    if len(node.shape) == rank:
        return node
    return ctx.reshape(node, factorize(ctx.rng, int(np.prod(node.shape)), rank))


@operator("f")
def gemm(ctx, node):
    a = shaped(ctx, node, 4)
    ta, tb = ctx.flag("trans_a"), ctx.flag("trans_b")
    B, C = a.shape[:2]
    M, K = (a.shape[3], a.shape[2]) if ta else a.shape[2:]
    N = ctx.int(1, 5)
    A = np.swapaxes(a.ref, 2, 3) if ta else a.ref
    b = ctx.source([B, C, N, K] if tb else [B, C, K, N], node.dtype, lo=-1, hi=1)
    Bm = np.swapaxes(b.ref, 2, 3) if tb else b.ref
    alpha = ctx.pick([1.0, 0.5, -2.0])
    beta = ctx.pick([1.0, 0.0, -0.5])
    c = ctx.source([B, C, M, N], node.dtype) if ctx.flag("c") else None
    act, act_ref, lip = fused(ctx)
    y = alpha * (A @ Bm) + (beta * c.ref if c else 0)
    out = act_ref(y)
    bound = abs(alpha) * K * (a.mag + a.tol) * (b.mag + b.tol)
    if bound > LIMIT[node.dtype]:
        raise Refused("gemm too large")
    tol = lip * (abs(alpha) * K * ((a.mag + a.tol) * b.tol + (b.mag + b.tol) * a.tol) + (abs(beta) * c.tol if c else 0)
                 + rounding(node.dtype, bound + (abs(beta) * c.mag if c else 0), K))
    kw = dict(trans_a=dml.MatrixTransform.TRANSPOSE if ta else dml.MatrixTransform.NONE,
              trans_b=dml.MatrixTransform.TRANSPOSE if tb else dml.MatrixTransform.NONE, alpha=alpha, beta=beta)
    if act is not None:
        kw["fused_activation"] = act
    e = ctx.build("gemm", lambda: dml.gemm(a.expr, b.expr, c.expr if c else None, **kw),
                  accepts(node, [np.float32, np.float16]))
    return derived(a, e, out, tol, b, *([c] if c else []))


def windows(x, extent, strides, dilations):
    """[N, C, *spatial] -> [N, C, *out, *window]: each output's window, dilated and strided."""
    nd = len(extent)
    span = [(k - 1) * d + 1 for k, d in zip(extent, dilations)]
    w = np.lib.stride_tricks.sliding_window_view(x, span, axis=tuple(range(2, 2 + nd)))
    return w[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)
             + tuple(slice(None, None, d) for d in dilations)]


@operator("f")
def convolution(ctx, node):
    x = shaped(ctx, node, ctx.int(3, 5))
    rank = len(x.shape)
    nd = rank - 2
    Cin = x.shape[1]
    groups = ctx.pick([g for g in range(1, Cin + 1) if Cin % g == 0])
    M = groups * ctx.int(1, 2)
    k = [ctx.int(1, 3) for _ in range(nd)]
    strides = [ctx.int(1, 2) for _ in range(nd)]
    dil = [ctx.int(1, 2) for _ in range(nd)]
    start = [ctx.int(0, 1) for _ in range(nd)]
    end = [ctx.int(0, 1) for _ in range(nd)]
    padded = [s + a + b for s, a, b in zip(x.shape[2:], start, end)]
    fits = all((kk - 1) * d + 1 <= p for kk, d, p in zip(k, dil, padded))
    w = ctx.source([M, Cin // groups] + k, node.dtype, lo=-1, hi=1)
    bias = ctx.source([1, M] + [1] * nd, node.dtype) if ctx.flag("bias") else None
    flip = ctx.flag("mode CONVOLUTION")
    act, act_ref, lip = fused(ctx)
    kw = dict(strides=strides, dilations=dil, start_padding=start, end_padding=end, group_count=groups,
              mode=dml.ConvolutionMode.CONVOLUTION if flip else dml.ConvolutionMode.CROSS_CORRELATION)
    if act is not None:
        kw["fused_activation"] = act
    call = lambda: dml.convolution(x.expr, w.expr, bias.expr if bias else None, **kw)
    if not fits:
        ctx.build("convolution", call, False)
    K = Cin // groups * int(np.prod(k))
    bound = K * (x.mag + x.tol) * (w.mag + w.tol)
    if bound > LIMIT[node.dtype]:
        raise Refused("convolution too large")
    xp = np.pad(x.ref, [(0, 0), (0, 0)] + list(zip(start, end)))
    win = windows(xp, k, strides, dil)  # [N, C, *out, *k]
    wr = np.flip(w.ref, tuple(range(2, rank))) if flip else w.ref
    out_sp = win.shape[2:2 + nd]
    win = win.reshape(win.shape[:2] + (-1, int(np.prod(k))))
    y = np.concatenate([np.einsum("ncok,mck->nmo", win[:, g * (Cin // groups):(g + 1) * (Cin // groups)],
                                  wr[g * (M // groups):(g + 1) * (M // groups)].reshape(M // groups, Cin // groups, -1))
                        for g in range(groups)], axis=1).reshape((x.shape[0], M) + tuple(out_sp))
    if bias:
        y = y + bias.ref
    out = act_ref(y)
    tol = lip * (K * ((x.mag + x.tol) * w.tol + (w.mag + w.tol) * x.tol) + (bias.tol if bias else 0)
                 + rounding(node.dtype, bound + (bias.mag if bias else 0), K))
    e = ctx.build("convolution", call, accepts(node, [np.float32, np.float16]))
    return derived(x, e, out, tol, w, *([bias] if bias else []))


@operator("f", weight=2)
def pooling(ctx, node):
    x = shaped(ctx, node, ctx.int(4, 5))
    nd = len(x.shape) - 2
    k = [ctx.int(1, 3) for _ in range(nd)]
    strides = [ctx.int(1, 2) for _ in range(nd)]
    dil = [ctx.int(1, 2) for _ in range(nd)]
    start = [ctx.pick([0, 0, 1, 2]) for _ in range(nd)]
    end = [ctx.pick([0, 0, 1, 2]) for _ in range(nd)]
    kind = ctx.pick(["max", "average", "average with padding"], "pooling")
    padded = [s + a + b for s, a, b in zip(x.shape[2:], start, end)]
    fits = all((kk - 1) * d + 1 <= p for kk, d, p in zip(k, dil, padded))
    if kind == "max":
        call = lambda: dml.max_pooling(x.expr, window_size=k, strides=strides, start_padding=start, end_padding=end,
                                       dilations=dil).values
    else:
        call = lambda: dml.average_pooling(x.expr, window_size=k, strides=strides, start_padding=start,
                                           end_padding=end, dilations=dil, include_padding=kind != "average")
    if not fits:
        ctx.build("pooling", call, False)
    pad = [(0, 0), (0, 0)] + list(zip(start, end))
    real = windows(np.pad(np.ones(x.shape), pad), k, strides, dil)
    taps = real.reshape(real.shape[:2 + nd] + (-1,)).sum(-1)
    if kind != "average with padding" and taps.min() == 0:
        ctx.build("pooling", call, False)  # a window of padding alone
    win = windows(np.pad(x.ref, pad, constant_values=-np.inf if kind == "max" else 0), k, strides, dil)
    win = win.reshape(win.shape[:2 + nd] + (-1,))
    if kind == "max":
        out, tol = win.max(-1), x.tol
    else:
        count = win.shape[-1] if kind == "average with padding" else taps
        out, tol = win.sum(-1) / count, x.tol + rounding(node.dtype, x.mag, win.shape[-1])
    e = ctx.build("pooling", call, accepts(node, F16_32))
    return derived(x, e, out, tol, x)


@operator("f")
def mean_variance_normalization(ctx, node):
    rank = len(node.shape)
    axes = sorted(ctx.draw(st.sets(st.integers(0, rank - 1), min_size=1, max_size=rank), "axes"))
    normalize = ctx.flag("normalize_variance")
    eps = ctx.pick([0.05, 0.5, 1.0])
    params = []
    for use in (ctx.flag("scale"), ctx.flag("bias")):
        params.append(ctx.source([s if ctx.flag() else 1 for s in node.shape], node.dtype, lo=-1, hi=1)
                      if use else None)
    scale, bias = params
    x = node.ref
    ax = tuple(axes)
    centered = x - x.mean(axis=ax, keepdims=True)
    D = np.abs(centered).max() + 2 * node.tol
    if normalize:
        y = centered / np.sqrt((centered ** 2).mean(axis=ax, keepdims=True) + eps)
        lip = 2 / math.sqrt(eps) + D * D / eps ** 1.5
    else:
        y, lip = centered, 2.0
    sm = (scale.mag + scale.tol) if scale else 1.0
    out = y * (scale.ref if scale else 1) + (bias.ref if bias else 0)
    tol = sm * lip * node.tol + (np.abs(y).max() * scale.tol if scale else 0) + (bias.tol if bias else 0) \
        + rounding(node.dtype, np.abs(out).max() + sm * np.abs(y).max(), 8)
    e = ctx.build("mean_variance_normalization", lambda: dml.mean_variance_normalization(
        node.expr, scale.expr if scale else None, bias.expr if bias else None, axes=axes,
        normalize_variance=normalize, epsilon=eps), accepts(node, F16_32))
    return derived(node, e, out, tol, *[p for p in params if p])


# --- data movement and views ---------------------------------------------------------------------------------------

@operator("fi")
def slice_(ctx, node):
    offsets, sizes, strides, index = [], [], [], []
    for n in node.shape:
        o = ctx.int(0, n - 1)
        s = ctx.int(1, n - o)
        st_ = ctx.pick([1, 2, 3, -1, -2])
        offsets.append(o)
        sizes.append(s)
        strides.append(st_)
        index.append(slice(o, o + s, st_) if st_ > 0 else slice(o + s - 1, o - 1 if o else None, st_))
    bad = ctx.draw(st.integers(0, 9)) == 0
    if bad:  # a window past the end
        d = ctx.int(0, len(node.shape) - 1)
        sizes[d] = node.shape[d] - offsets[d] + 1
    call = lambda: dml.slice(node.expr, input_window_offsets=offsets, input_window_sizes=sizes,
                             input_window_strides=strides)
    e = ctx.build("slice", call, not bad)
    return derived(node, e, node.ref[tuple(index)], node.tol, node)


@operator("fi")
def join(ctx, node):
    axis = ctx.int(0, len(node.shape) - 1)
    parts = [node]
    for _ in range(ctx.int(1, 2)):
        shape = list(node.shape)
        shape[axis] = ctx.int(1, 3)
        parts.append(ctx.source(shape, node.dtype))
    order = ctx.draw(st.permutations(range(len(parts))))
    parts = [parts[i] for i in order]
    out = np.concatenate([p.ref for p in parts], axis=axis)
    if out.size > max(MAX_ELEMENTS, node.ref.size):
        raise Refused("too large")
    e = ctx.build("join", lambda: dml.join([p.expr for p in parts], axis=axis))
    return derived(node, e, out, max(p.tol for p in parts), *parts)


@operator("fi")
def split(ctx, node):
    axis = ctx.int(0, len(node.shape) - 1)
    n = node.shape[axis]
    cuts = sorted(ctx.draw(st.sets(st.integers(1, n - 1), max_size=3))) if n > 1 else []
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    wrong = ctx.draw(st.integers(0, 9)) == 0
    outs = ctx.build("split", lambda: dml.split(node.expr, axis=axis, output_axis_sizes=sizes + ([1] if wrong else [])),
                     not wrong)
    which = ctx.int(0, len(outs) - 1)
    ref = np.split(node.ref, np.cumsum(sizes)[:-1], axis=axis)[which]
    return derived(node, outs[which], ref, node.tol, node)


@operator("fi")
def padding(ctx, node):
    mode = ctx.pick(["CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC", "WRAP"], "mode")
    start = [ctx.int(0, 3) for _ in node.shape]
    end = [ctx.int(0, 3) for _ in node.shape]
    value = ctx.pick([0.0, -2.0, 5.0, 0.5])
    exact = is_float(node.dtype) or value == int(value)
    out_shape = [s + a + b for s, a, b in zip(node.shape, start, end)]
    if np.prod(out_shape) > max(MAX_ELEMENTS, 2 * node.ref.size):
        raise Refused("too large")
    unsigned = node.dtype.kind == "u" and value < 0
    np_mode = {"CONSTANT": "constant", "EDGE": "edge", "REFLECTION": "reflect", "SYMMETRIC": "symmetric",
               "WRAP": "wrap"}[mode]
    kw = {"constant_values": value} if mode == "CONSTANT" else {}
    ok = mode != "CONSTANT" or (exact and not unsigned)
    e = ctx.build("padding", lambda: dml.padding(node.expr, padding_mode=getattr(dml.PaddingMode, mode),
                                                 padding_value=value, start_padding=start, end_padding=end),
                  True if ok else False)
    out = np.pad(node.ref, list(zip(start, end)), mode=np_mode, **kw)
    return derived(node, e, out.astype(node.ref.dtype), node.tol, node)


@operator("fi")
def tile(ctx, node):
    repeats = [ctx.int(1, 3) for _ in node.shape]
    if node.ref.size * np.prod(repeats) > max(MAX_ELEMENTS, 2 * node.ref.size):
        raise Refused("too large")
    e = ctx.build("tile", lambda: dml.tile(node.expr, repeats=repeats))
    return derived(node, e, np.tile(node.ref, repeats), node.tol, node)


@operator("fi")
def depth_space(ctx, node):
    x = shaped(ctx, node, 4)
    N, C, H, W = x.shape
    dcr = ctx.flag("DEPTH_COLUMN_ROW")
    order = dml.DepthSpaceOrder.DEPTH_COLUMN_ROW if dcr else dml.DepthSpaceOrder.COLUMN_ROW_DEPTH
    b = ctx.int(1, 3)
    if ctx.flag("to depth"):
        ok = H % b == 0 and W % b == 0
        call = lambda: dml.space_to_depth(x.expr, block_size=b, order=order)
        if not ok:
            ctx.build("space_to_depth", call, False)
        y = x.ref.reshape(N, C, H // b, b, W // b, b)
        out = y.transpose(0, 3, 5, 1, 2, 4) if dcr else y.transpose(0, 1, 3, 5, 2, 4)
        out = out.reshape(N, C * b * b, H // b, W // b)
        e = ctx.build("space_to_depth", call)
    else:
        call = lambda: dml.depth_to_space(x.expr, block_size=b, order=order)
        if C % (b * b):
            ctx.build("depth_to_space", call, False)
        c = C // (b * b)
        y = x.ref.reshape(N, b, b, c, H, W) if dcr else x.ref.reshape(N, c, b, b, H, W)
        out = y.transpose(0, 3, 4, 1, 5, 2) if dcr else y.transpose(0, 1, 4, 2, 5, 3)
        out = out.reshape(N, c, H * b, W * b)
        e = ctx.build("depth_to_space", call)
    return derived(x, e, out, x.tol, x)


@operator("fi")
def view(ctx, node):
    """A reshape, a transpose (permuted strides), any strided view or a broadcast of the node: zero-copy views."""
    kind = ctx.pick(["reshape", "transpose", "strided", "broadcast"], "view")
    if kind == "reshape":
        return ctx.reshape(node, factorize(ctx.rng, node.ref.size, ctx.int(1, 8)))
    if kind == "strided":  # overlapping, zero or gapped strides; sometimes past the buffer (refused)
        p = ctx.packed(node)
        sizes = [ctx.int(1, 4) for _ in range(ctx.int(1, 4))]
        strides = [ctx.int(0, 3) for _ in sizes]
        extent = 1 + sum((a - 1) * b for a, b in zip(sizes, strides))
        call = lambda: dml.reinterpret(p.expr, sizes, strides)
        if extent > p.ref.size:
            ctx.build("reinterpret", call, False)
        ref = np.lib.stride_tricks.as_strided(p.ref.ravel(), sizes, [b * p.ref.itemsize for b in strides]).copy()
        return derived(p, ctx.build("reinterpret", call), ref, p.tol, p)
    if kind == "transpose":
        p = ctx.packed(node)
        perm = ctx.draw(st.permutations(range(len(node.shape))))
        strides = np.array([int(np.prod(node.shape[i + 1:])) for i in range(len(node.shape))])
        e = ctx.build("reinterpret", lambda: dml.reinterpret(p.expr, [node.shape[i] for i in perm],
                                                              [int(strides[i]) for i in perm]))
        return derived(p, e, np.transpose(p.ref, perm), p.tol, p)
    lead = ctx.int(0, 8 - len(node.shape))
    shape = [ctx.int(1, 2) for _ in range(lead)] + [s if s > 1 else ctx.int(1, 3) for s in node.shape]
    wrong = ctx.draw(st.integers(0, 9)) == 0 and any(s > 1 for s in node.shape)
    if wrong:  # a size that is neither 1 nor the target
        d = next(i for i, s in enumerate(node.shape) if s > 1)
        shape[lead + d] = node.shape[d] + 1
    if np.prod(shape) > max(MAX_ELEMENTS, 2 * node.ref.size):
        raise Refused("too large")
    e = ctx.build("broadcast", lambda: dml.broadcast(node.expr, shape), not wrong)
    return derived(node, e, np.broadcast_to(node.ref, shape), node.tol, node)


# --- indexing (adversarial indices: the sanitizer run checks that no out-of-range access happens) --------------------

INDEX_TYPES = [np.int32, np.uint32, np.int64, np.uint64]


@operator("fi", weight=3)
def gather(ctx, node):
    rank = len(node.shape)
    axis = ctx.int(0, rank - 1)
    n = node.shape[axis]
    it = ctx.pick(INDEX_TYPES, "index dtype")
    kind = ctx.pick(["gather", "gather_elements", "scatter_elements", "reverse_subsequences", "top_k"], "op")
    x = node.ref
    if kind == "top_k":
        if node.tol > 0:
            raise Refused("top_k of inexact values")
        k = ctx.int(1, n)
        largest = ctx.flag("DECREASING")
        itype = ctx.pick([np.uint32, np.uint64])
        key = -x.astype(np.float64) if largest else x.astype(np.float64)
        if not is_float(node.dtype):
            key = np.array([-int(v) if largest else int(v) for v in x.ravel()], dtype=object).reshape(x.shape)
        order = np.argsort(key, axis=axis, kind="stable")
        idx = np.take(order, range(k), axis=axis)
        res = ctx.build("top_k", lambda: dml.top_k(node.expr, axis=axis, k=k, axis_direction=AD.DECREASING
                                                   if largest else AD.INCREASING, output_dtype=itype),
                        accepts(node, NUMERIC))
        which = ctx.flag("indices")
        if which:
            return derived(node, res.indices, idx.astype(itype), 0.0, node)
        return derived(node, res.values, np.take_along_axis(x, idx, axis=axis), 0.0, node)
    if kind == "reverse_subsequences":
        lt = ctx.pick([np.uint32, np.uint64])
        shape = list(node.shape)
        shape[axis] = 1
        big = np.array([n, n + 1, int(np.iinfo(lt).max), 2**31], dtype=object)  # lengths past the axis
        lengths = ctx.source(shape, lt, data=lambda s: np.array(np.where(
            ctx.rng.random(s) < 0.3, big[ctx.rng.integers(0, len(big), s)],
            ctx.rng.integers(0, n + 1, s).astype(object)).tolist(), dtype=lt).reshape(s))
        out = x.copy()
        for pos in np.ndindex(*shape):
            m = min(int(lengths.ref[pos]), n)
            line = tuple(slice(None) if d == axis else pos[d] for d in range(rank))
            out[line] = np.concatenate([x[line][:m][::-1], x[line][m:]])
        e = ctx.build("reverse_subsequences", lambda: dml.reverse_subsequences(node.expr, lengths.expr, axis=axis))
        return derived(node, e, out, node.tol, lengths)
    m = ctx.int(1, 4)
    if kind == "gather":
        k = ctx.int(0, 1)
        shape = [1] * rank
        if k:
            shape[-1] = m
        idx = ctx.source(shape, it, data=lambda s: index_values(ctx.rng, s, n, it))
        j = resolve(idx.ref.reshape(-1) if k else idx.ref.reshape(()), n)
        taken = np.take(x, np.maximum(j, 0), axis=axis)
        mask = (j >= 0).reshape((1,) * axis + j.shape + (1,) * (rank - 1 - axis))
        out = np.where(mask, taken, 0).astype(x.dtype)
        e = ctx.build("gather", lambda: dml.gather(node.expr, idx.expr, axis=axis, index_dimensions=k))
        assert int(np.prod(e.shape)) == out.size
        return derived(node, e, out.reshape(e.shape), node.tol, idx)
    shape = list(node.shape)
    shape[axis] = m
    idx = ctx.source(shape, it, data=lambda s: index_values(ctx.rng, s, n, it))
    r = resolve(idx.ref, n)
    if kind == "gather_elements":
        out = np.where(r >= 0, np.take_along_axis(x, np.maximum(r, 0), axis=axis), 0).astype(x.dtype)
        e = ctx.build("gather_elements", lambda: dml.gather_elements(node.expr, idx.expr, axis=axis))
        return derived(node, e, out, node.tol, idx)
    upd = ctx.source(shape, node.dtype)
    out = x.copy()
    for pos in np.ndindex(*shape):  # C order: a later update to the same element wins
        if r[pos] >= 0:
            target = list(pos)
            target[axis] = r[pos]
            out[tuple(target)] = upd.ref[pos]
    e = ctx.build("scatter_elements", lambda: dml.scatter_elements(node.expr, idx.expr, upd.expr, axis=axis))
    return derived(node, e, out, max(node.tol, upd.tol), idx, upd)


# --- the graph property --------------------------------------------------------------------------------------------

def random_shape(ctx, max_rank=8, max_elements=64):
    rank = ctx.int(1, max_rank, "rank")
    longest = max(4, math.ceil(2 * max_elements ** (1 / rank))) if max_elements > 64 else 4
    shape = [ctx.int(1, longest) for _ in range(rank)]
    while np.prod(shape) > max_elements:
        shape[int(np.argmax(shape))] -= 1
    return shape


def bind_value(ctx, x, a):
    """One of the equivalent ways to bind array `a` to input x."""
    how = ctx.pick(["array", "flat", "non-contiguous", "buffer", "list"], "binding")
    if how == "flat":
        return a.ravel()
    if how == "non-contiguous":
        wide = np.repeat(a[..., None], 2, axis=-1)  # every other element of a larger array
        return wide[..., 0]
    if how == "buffer":
        return dml.Buffer(DEV, a)
    if how == "list" and a.dtype == np.float32:  # a Python sequence, converted like an array
        return a.tolist()
    return a


def check(node, got, what):
    assert isinstance(got, np.ndarray), what
    assert got.dtype == node.dtype, f"{what}: dtype {got.dtype}, expected {node.dtype}"
    assert got.shape == node.shape, f"{what}: shape {got.shape}, expected {node.shape}"
    if not is_float(node.dtype):
        np.testing.assert_array_equal(got, node.ref, err_msg=what)
        return
    g, r = got.astype(np.float64), node.ref
    bound = node.tol + rounding(node.dtype, np.abs(r))  # the last rounding to the tensor's type
    bad = ~((np.abs(g - r) <= bound) | (g == r) | (np.isnan(g) & np.isnan(r)))
    assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} elements differ beyond {node.tol:.3g}: got "
                           f"{g[bad][:5]}, expected {r[bad][:5]}")


@property_test(400)
def test_random_graph(data):
    ctx = Ctx(data)
    dtype = np.dtype(ctx.pick(FLOATS * 3 + [np.float32] * 3 + INTS, "dtype"))  # half float32 or float16
    large = ctx.draw(st.integers(0, 19)) == 0  # past the kernels' grain: several threads share the work
    node = ctx.source(random_shape(ctx, 8, 40000 if large else 64), dtype)
    event(f"input of {'> 64' if node.ref.size > 64 else '<= 64'} elements")
    chain = [node]
    for step in range(ctx.int(1, 4, "steps")):
        fn, _ = ctx.pick([o for o in OPERATORS if ("f" if is_float(node.dtype) else "i") in o[1]],
                         f"operator {step}")
        try:
            node = fn(ctx, node)
        except Refused:
            event(f"refused or skipped: {fn.__name__}")
            continue
        event(f"built: {fn.__name__}")
        note(f"step {step}: {fn.__name__} -> {node.dtype}{list(node.shape)} tol {node.tol:.3g}")
        chain.append(node)
    # The last value, perhaps an earlier one, perhaps the last one twice.
    outputs = [node] + [ctx.pick(chain) for _ in range(ctx.pick([0, 0, 1, 2]))]
    op = ctx.compile([o.expr for o in outputs])
    needed = frozenset().union(*[o.inputs for o in outputs])
    keys = {x: x if ctx.flag("by Expression") else x.name for x in needed}
    readback = ctx.flag("readback")
    got = op({keys[x]: bind_value(ctx, x, ctx.feeds[x]) for x in needed}, readback=readback)
    if not readback:
        assert all(isinstance(b, dml.Buffer) for b in got)
    # Another dispatch on other data reuses the operator's arena: what the first one returned must not change.
    op({keys[x]: values(ctx.rng, ctx.feeds[x].shape, ctx.feeds[x].dtype) for x in needed},
       readback=ctx.flag("readback again"))
    for i, (o, g) in enumerate(zip(outputs, got)):
        check(o, g if readback else g.numpy(), f"output {i}")


# --- bindings -----------------------------------------------------------------------------------------------------

def castable(src, dst):
    """The cast rule: bool to anything, within a kind, or where NumPy calls the cast safe."""
    src, dst = np.dtype(src), np.dtype(dst)
    return src == np.bool_ or src.kind == dst.kind or np.can_cast(src, dst, "safe")


@property_test(250)
def test_random_bindings(data):
    ctx = Ctx(data)
    shapes = [random_shape(ctx, 4, 24) for _ in range(ctx.int(1, 3))]
    types = [np.dtype(ctx.pick(ALL)) for _ in shapes]
    xs = [ctx.g.input(s, t, name=f"in{i}") for i, (s, t) in enumerate(zip(shapes, types))]
    op = ctx.g.compile([dml.identity(x) for x in xs])
    bindings, errors, expect = {}, [], []
    for i, (x, s, t) in enumerate(zip(xs, shapes, types)):
        a = values(ctx.rng, s, t)
        how = ctx.pick(["right", "flat", "dtype", "size", "shape", "buffer", "buffer dtype", "buffer size",
                        "other device", "missing", "twice", "object"], f"input {i}")
        key = x if ctx.flag("by Expression") else x.name
        who = f"input {i} 'in{i}'"
        value = a
        if how == "flat":
            value = a.ravel()
        elif how == "dtype":
            src = np.dtype(ctx.pick(ALL + [np.bool_, np.complex64]))
            value = a.astype(src)
            if src.kind == "c" or not castable(src, t):
                errors.append(who)
            else:
                expect.append((i, value.astype(t)))
        elif how == "size":
            value = np.resize(a.ravel(), a.size + ctx.pick([-1, 1, 5]) if a.size > 1 else a.size + 1)
            errors.append(who)
        elif how == "shape":  # same count, another shape: it binds only where axes of size 1 alone differ
            value = a.reshape(list(s) + [1]) if len(s) < 2 or s[-1] == s[-2] else np.swapaxes(a, -1, -2)
            if [d for d in value.shape if d != 1] == [d for d in s if d != 1]:
                expect.append((i, value))
            else:
                errors.append(who)
        elif how == "buffer":
            value = dml.Buffer(DEV, a.reshape(-1) if ctx.flag() else a)
        elif how == "buffer dtype":
            other = np.dtype(ctx.pick([u for u in ALL if np.dtype(u) != t]))
            value = dml.Buffer(DEV, a.astype(other))
            errors.append(who)
        elif how == "buffer size":
            value = dml.Buffer(DEV, np.resize(a.ravel(), a.size + 1))
            errors.append(who)
        elif how == "other device":
            value = dml.Buffer(OTHER, a)
            errors.append(who)
        elif how == "missing":
            errors.append(who)
            continue
        elif how == "twice":
            bindings[x.name if key is x else x] = a
            errors.append(who)
        elif how == "object":
            value = ctx.pick([object(), "text", None, 3 + 2j])
            errors.append(who)
        bindings[key] = value
        if how in ("right", "flat", "buffer"):
            expect.append((i, a))
    extra = ctx.draw(st.integers(0, 7)) == 0
    if extra:
        bindings["nobody"] = np.zeros(1)
    if errors or extra:
        with pytest.raises((ValueError, TypeError)) as info:
            op(bindings)
        text = str(info.value)
        assert any(w in text for w in errors) or ("nobody" in text and extra), text
        return
    got = op(bindings)
    for i, want in expect:
        np.testing.assert_array_equal(got[i], np.asarray(want).reshape(shapes[i]).astype(types[i]))


# --- index operators on their own, and top_k on adversarial data ----------------------------------------------------

@property_test(250)
def test_index_operators_adversarial(data):
    ctx = Ctx(data)
    dtype = np.dtype(ctx.pick(ALL, "dtype"))
    it = np.dtype(ctx.pick(INDEX_TYPES, "index dtype"))
    kind = ctx.pick(["gather_nd", "scatter_nd", "one_hot", "chain"], "op")
    if kind == "chain":  # gather, gather_elements, scatter_elements, reverse_subsequences, top_k
        node = ctx.source(random_shape(ctx), dtype)
        out = gather(ctx, node)
        got, = ctx.compile([out.expr])({x: ctx.feeds[x] for x in out.inputs})
        check(out, got, "output")
        return
    if kind == "one_hot":
        shape = random_shape(ctx, 4, 24)
        axis = ctx.int(0, len(shape) - 1)
        shape[axis] = 1
        length = ctx.int(1, 5)
        idx = index_values(ctx.rng, shape, length, it)
        vals = values(ctx.rng, [1] * (len(shape) - 1) + [2], dtype)
        i = ctx.input(shape, it, idx)
        v = ctx.input(vals.shape, dtype, vals)
        e = ctx.build("one_hot", lambda: dml.one_hot(i, v, output_length=length, axis=axis))
        r = resolve(idx, length)
        positions = np.arange(length).reshape([length if d == axis else 1 for d in range(len(shape))])
        want = np.where(positions == r, vals.ravel()[1], vals.ravel()[0])
        got, = ctx.compile([e])({i: idx, v: vals})
        np.testing.assert_array_equal(got, want.astype(dtype))
        return
    # gather_nd / scatter_nd over a [d0, d1, d2] input with index tuples of k coordinates
    shape = [ctx.int(1, 4) for _ in range(3)]
    k = ctx.int(1, 3)
    m = ctx.int(1, 5)
    idx = np.stack([index_values(ctx.rng, [m], shape[j], it) for j in range(k)], -1).reshape(1, m, k)
    x = values(ctx.rng, shape, dtype)
    xin = ctx.input(shape, dtype, x)
    iin = ctx.input(idx.shape, it, idx)
    coords = [[int(resolve(idx[0, g, j], shape[j])) for j in range(k)] for g in range(m)]
    block = shape[k:]
    if kind == "gather_nd":
        e = ctx.build("gather_nd", lambda: dml.gather_nd(xin, iin, input_dimension_count=3, indices_dimension_count=2,
                                                         batch_dimension_count=0))
        want = np.zeros([m] + block, dtype)
        for g, c in enumerate(coords):
            if min(c) >= 0:
                want[g] = x[tuple(c)]
        got, = ctx.compile([e])({xin: x, iin: idx})
    else:
        want_shape = dml.gather_nd(xin, iin, input_dimension_count=3, indices_dimension_count=2,
                                   batch_dimension_count=0).shape  # updates are shaped like gather_nd's output
        upd = values(ctx.rng, want_shape, dtype)
        uin = ctx.input(upd.shape, dtype, upd)
        e = ctx.build("scatter_nd", lambda: dml.scatter_nd(xin, iin, uin, input_dimension_count=3,
                                                           indices_dimension_count=2))
        want = x.copy()
        for g, c in enumerate(coords):
            if min(c) >= 0:
                want[tuple(c)] = upd.reshape([m] + block)[g]
        got, = ctx.compile([e])({xin: x, iin: idx, uin: upd})
    assert got.size == want.size
    np.testing.assert_array_equal(got.ravel(), want.ravel())


@property_test(150)
def test_top_k_adversarial(data):
    ctx = Ctx(data)
    dtype = np.dtype(ctx.pick(NUMERIC, "dtype"))
    shape = random_shape(ctx, 4, 48)
    axis = ctx.int(0, len(shape) - 1)
    n = shape[axis]
    x = values(ctx.rng, shape, dtype, full=True) if dtype.kind != "f" else ctx.rng.choice(
        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 65504.0, 1e-7], dtype), size=shape)
    k = ctx.int(0, n + 1)
    xin = ctx.input(shape, dtype, x)
    direction = ctx.pick([AD.INCREASING, AD.DECREASING])
    res = ctx.build("top_k", lambda: dml.top_k(xin, axis=axis, k=k, axis_direction=direction,
                                               output_dtype=np.uint64), 1 <= k <= n)
    v, i = ctx.compile(res)({xin: x})
    assert v.shape == i.shape and v.shape[axis] == k
    assert i.max() < n, "an index past the axis"
    picked = np.take_along_axis(x, i.astype(np.int64), axis=axis)
    np.testing.assert_array_equal(v, picked)  # the values are the input's at the indices (NaN included)
    srt = np.sort(i, axis=axis)
    assert (np.diff(srt.astype(np.int64), axis=axis) > 0).all(), "an index repeats"
    if dtype.kind == "f" and np.isnan(x).any():
        return
    key = np.sort(x.astype(np.float64) if dtype.kind == "f" else x, axis=axis)
    want = np.take(np.flip(key, axis) if direction == AD.DECREASING else key, range(k), axis=axis)
    np.testing.assert_array_equal(v, want)


# --- any data, any parameters: an answer of the promised type and shape, or a clean error ---------------------------

SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 7.5, -100.0, 65504.0, -65504.0, 3e38,
                     -3e38, 1e-45, 6e-8, 1e-30])
IM = dml.InterpolationMode
MT = dml.MultiheadAttentionMaskType


def special(ctx, shape, dtype):
    with np.errstate(over="ignore"):
        return ctx.rng.choice(SPECIALS, size=shape).astype(dtype)


def adversarial_ints(ctx, shape, dtype, n):
    info = np.iinfo(dtype)
    pool = np.array([0, 1, n - 1, n, n + 1, int(info.max), int(info.min), -1 if info.min < 0 else 2, 2**31 - 1
                     if info.max >= 2**31 else 3], dtype=object)
    return np.array(pool[ctx.rng.integers(0, len(pool), shape)].tolist(), dtype=dtype)


def wild_float(ctx):
    return float(ctx.pick([0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, 1e30, np.nan, np.inf, -np.inf, -7.25]))


ANY_UNARY = ["identity", "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "erf", "exp",
             "floor", "log", "recip", "sin", "sinh", "sqrt", "tan", "tanh", "negate", "sign", "round", "is_nan",
             "is_infinity", "activation_shrink", "activation_thresholded_relu", "activation_softmax",
             "activation_log_softmax", "activation_hardmax"] + list(ACTIVATIONS)


def any_operator(ctx, x, shape, dtype):
    """Builds one operator on x (4-D, special values) with drawn, partly adversarial, parameters."""
    N, C, H, W = shape
    kind = ctx.pick(["unary", "reduce", "cumulative", "cast", "pooling", "convolution", "gemm", "normalization",
                     "resample", "roi_align", "attention", "gru", "quantize", "clip", "padding", "top_k"], "kind")
    event(f"any: {kind}")
    if kind == "unary":
        name = ctx.pick(ANY_UNARY, "unary")
        ctx.built = (name, None)
        return ctx.build(name, lambda: getattr(dml, name)(x), None)
    if kind == "reduce":
        f = ctx.pick(list(RF))
        axes = sorted(ctx.draw(st.sets(st.integers(0, 3), min_size=1)))
        return ctx.build("reduce", lambda: dml.reduce(x, function=f, axes=axes), None)
    if kind == "cumulative":
        name = ctx.pick(["cumulative_summation", "cumulative_product"])
        kw = {"has_exclusive_sum" if name == "cumulative_summation" else "has_exclusive_product": ctx.flag()}
        return ctx.build(name, lambda: getattr(dml, name)(x, axis=ctx.int(0, 3), axis_direction=ctx.pick(list(AD)),
                                                          **kw), None)
    if kind == "cast":
        target = ctx.pick(ALL)
        ctx.built = ("cast", target)
        return ctx.build("cast", lambda: dml.cast(x, dtype=target), None)
    if kind == "pooling":
        k = [ctx.int(1, 3), ctx.int(1, 3)]
        kw = dict(window_size=k, strides=[ctx.int(1, 3)] * 2, start_padding=[ctx.int(0, 2)] * 2,
                  end_padding=[ctx.int(0, 2)] * 2, dilations=[ctx.int(1, 2)] * 2)
        if ctx.flag("max"):
            return list(ctx.build("max_pooling", lambda: dml.max_pooling(x, output_indices=True, **kw), None))
        return ctx.build("average_pooling", lambda: dml.average_pooling(x, include_padding=ctx.flag(), **kw), None)
    if kind == "convolution":
        wshape = [ctx.int(1, 3), C, ctx.int(1, 3), ctx.int(1, 3)]
        w = ctx.input(wshape, dtype, special(ctx, wshape, dtype))
        return ctx.build("convolution", lambda: dml.convolution(x, w, strides=[ctx.int(1, 2)] * 2,
                                                                start_padding=[ctx.int(0, 1)] * 2,
                                                                end_padding=[ctx.int(0, 1)] * 2), None)
    if kind == "gemm":
        return ctx.build("gemm", lambda: dml.gemm(x, dml.reinterpret(x, [N, C, W, H], [C * H * W, H * W, 1, W]),
                                                  alpha=wild_float(ctx)), None)
    if kind == "normalization":
        which = ctx.pick(["mvn", "lrn", "batch"])
        if which == "mvn":
            return ctx.build("mean_variance_normalization", lambda: dml.mean_variance_normalization(
                x, axes=[1, 2, 3], normalize_variance=True, epsilon=ctx.pick([0.0, 1e-5])), None)
        if which == "lrn":
            return ctx.build("local_response_normalization", lambda: dml.local_response_normalization(
                x, cross_channel=ctx.flag(), local_size=ctx.int(1, 4), alpha=1e-4, beta=0.75, bias=1.0), None)
        params = []
        for _ in range(4):  # mean, variance (negative ones too), scale, bias
            params.append(ctx.input([1, C, 1, 1], dtype, special(ctx, [1, C, 1, 1], dtype)))
        return ctx.build("batch_normalization", lambda: dml.batch_normalization(
            x, *params, spatial=True, epsilon=ctx.pick([0.0, 1e-5])), None)
    if kind == "resample":
        sizes = [N, C, ctx.int(1, 9), ctx.int(1, 9)]
        scales = ctx.pick([[], [1.0, 1.0, wild_float(ctx), wild_float(ctx)]])
        offsets = ctx.pick([[], [0.0, 0.0, wild_float(ctx), wild_float(ctx)]])
        if ctx.flag("upsample"):
            return ctx.build("upsample_2d", lambda: dml.upsample_2d(x, scale_size=[ctx.int(0, 3), ctx.int(1, 3)],
                                                                    interpolation_mode=ctx.pick(list(IM))), None)
        return ctx.build("resample", lambda: dml.resample(x, output_sizes=sizes, mode=ctx.pick(list(IM)),
                                                          scales=scales, input_pixel_offsets=offsets,
                                                          output_pixel_offsets=offsets[::-1]), None)
    if kind == "roi_align":
        rois = ctx.int(1, 4)
        roi = ctx.input([rois, 4], dtype, special(ctx, [rois, 4], dtype))
        it = ctx.pick([np.uint32, np.int32, np.int64, np.uint64])
        bi = ctx.input([rois], it, adversarial_ints(ctx, [rois], it, N))
        return ctx.build("roi_align", lambda: dml.roi_align(
            x, roi, bi, reduction_function=ctx.pick([RF.AVERAGE, RF.MAX]), interpolation_mode=ctx.pick(list(IM)),
            spatial_scale_x=wild_float(ctx), spatial_scale_y=1.0, input_pixel_offset=0.5, output_pixel_offset=-0.5,
            out_of_bounds_input_value=0.0, minimum_samples_per_output=ctx.int(0, 2),
            # A larger cap on an infinite region makes billions of samples per output: see docs/reliability.md.
            maximum_samples_per_output=ctx.pick([1, 4, 64]), align_regions_to_corners=ctx.flag(),
            output_height=ctx.int(1, 3), output_width=ctx.int(1, 3)), None)
    if kind == "attention":
        q = dml.reinterpret(x, [N, C, H * W])  # [B, S, heads * head size]
        heads = ctx.pick([1, H])
        mt = ctx.pick([MT.KEY_SEQUENCE_LENGTH, MT.KEY_SEQUENCE_END_START, MT.KEY_QUERY_SEQUENCE_LENGTH_START_END,
                       MT.BOOLEAN], "mask type")
        mshape = {MT.KEY_SEQUENCE_LENGTH: [1, N], MT.KEY_SEQUENCE_END_START: [2, N],
                  MT.KEY_QUERY_SEQUENCE_LENGTH_START_END: [3 * N + 2], MT.BOOLEAN: [N, heads, C, C]}[mt]
        mask = ctx.input(mshape, np.int32, adversarial_ints(ctx, mshape, np.int32, C))
        return ctx.build("multihead_attention", lambda: dml.multihead_attention(
            q, q, q, mask=mask, head_count=heads, mask_type=mt).output, None)
    if kind == "gru":
        seq, batch, hidden = C, H, ctx.int(1, 3)  # x [1, seq, batch, input size W]
        wt = ctx.input([1, 1, 3 * hidden, W], dtype, special(ctx, [1, 1, 3 * hidden, W], dtype))
        rt = ctx.input([1, 1, 3 * hidden, hidden], dtype, special(ctx, [1, 1, 3 * hidden, hidden], dtype))
        lengths = ctx.input([1, 1, 1, batch], np.uint32, adversarial_ints(ctx, [1, 1, 1, batch], np.uint32, seq))
        xs = dml.reinterpret(x, [1, seq, batch, W], [0, H * W, W, 1])
        return list(ctx.build("gru", lambda: dml.gru(xs, wt, rt, None, None, lengths), None))
    if kind == "quantize":
        scale = ctx.input([1, C, 1, 1], dtype, special(ctx, [1, C, 1, 1], dtype))
        full = dml.broadcast(scale, shape)
        if ctx.flag("dequantize"):
            q8 = ctx.input(shape, np.int8, adversarial_ints(ctx, shape, np.int8, 3))
            del ctx.feeds[x]  # x is not read: binding it would be an error
            return ctx.build("dequantize_linear", lambda: dml.dequantize_linear(q8, full), None)
        return ctx.build("quantize_linear", lambda: dml.quantize_linear(x, full, output_dtype=ctx.pick(
            [np.int8, np.uint8, np.int32])), None)
    if kind == "clip":
        return ctx.build("clip", lambda: dml.clip(x, min=wild_float(ctx), max=wild_float(ctx)), None)
    if kind == "padding":
        return ctx.build("padding", lambda: dml.padding(x, padding_mode=ctx.pick(list(dml.PaddingMode)),
                                                        padding_value=wild_float(ctx),
                                                        start_padding=[ctx.int(0, 5) for _ in range(4)],
                                                        end_padding=[ctx.int(0, 5) for _ in range(4)]), None)
    return list(ctx.build("top_k", lambda: dml.top_k(x, axis=ctx.int(0, 3), k=ctx.int(1, 2),
                                                     axis_direction=ctx.pick(list(AD))), None))


def expected(kind_and_args, a):
    """DirectML's defined answer for the operators that have one on any data, else None."""
    name, target = kind_and_args
    with np.errstate(all="ignore"):
        if name == "is_nan":
            return np.isnan(a).astype(np.uint8)
        if name == "is_infinity":
            return np.isinf(a).astype(np.uint8)
        if name in ("abs", "negate", "identity"):
            return {"abs": np.abs, "negate": np.negative, "identity": np.asarray}[name](a)
        if name == "cast" and np.dtype(target).kind == "f":
            return a.astype(np.float64).astype(target)
        if name == "cast":  # float to integer: toward zero, saturated, NaN gives 0
            info = np.iinfo(target)
            t = np.nan_to_num(np.trunc(a.astype(np.float64)), nan=0.0)
            out = [int(info.min) if v <= info.min else int(info.max) if v >= info.max else int(v) for v in t.ravel()]
            return np.array(out, dtype=target).reshape(a.shape)
    return None


@property_test(400)
def test_any_values_and_parameters(data):
    """NaN, infinities, extremes and denormals in every input, parameters from the edge of their range and past
    it, adversarial integer inputs (roi batch indices, attention masks, sequence lengths): each operator refuses
    cleanly or returns outputs of its promised type and shape. Where DirectML defines the answer, it is checked."""
    ctx = Ctx(data)
    dtype = np.dtype(ctx.pick([np.float32, np.float32, np.float16, np.float64], "dtype"))
    shape = [ctx.int(1, 3), ctx.int(1, 4), ctx.int(1, 5), ctx.int(1, 5)]
    a = special(ctx, shape, dtype)
    x = ctx.input(shape, dtype, a)
    ctx.built = (None, None)
    outs = any_operator(ctx, x, shape, dtype)
    outs = outs if isinstance(outs, list) else [outs]
    outs = [o for o in outs if o is not None]
    got = ctx.compile(outs)(ctx.feeds)
    for o, g in zip(outs, got):
        assert g.dtype == o.dtype and g.shape == o.shape
    want = expected(ctx.built, a)
    if want is not None:
        np.testing.assert_array_equal(got[0], want, err_msg=str(ctx.built))
