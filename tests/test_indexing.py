"""Indexing operators (gather, gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot) against NumPy
references, over every data dtype and index dtype, negative indices, adversarial indices (which must read 0 or
write nothing), strided and broadcast operands, and the builders' error paths."""

import numpy as np
import pytest

import directml as dml

# docs/operators.md, "On the directml executor"
OUT_OF_RANGE = "an index out of range reads or writes another element, where ours read 0 and write nothing"

DATA_DTYPES = [np.float32, np.float16, np.float64, np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32,
               np.uint64, np.int64]
INDEX_DTYPES = [np.int32, np.uint32, np.int64, np.uint64]
rng = np.random.default_rng(4321)


def data(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 10).astype(dtype)
    return rng.integers(1 if dtype.kind == "u" else -100, 100, size=shape).astype(dtype)


def indices(shape, n, dtype):
    """Valid indices into a dimension of n; signed types use the negative form about half the time."""
    i = rng.integers(0, n, size=shape)
    if np.dtype(dtype).kind == "i":
        i = np.where(rng.random(shape) < 0.5, i - n, i)
    return i.astype(dtype)


def adversarial(dtype, n):
    """Indices out of range however they are read: huge, negative beyond the dimension, the type's extremes."""
    info = np.iinfo(dtype)
    values = [n, n + 1, info.max, info.max - 1, 2 ** 31 - 1 if info.max >= 2 ** 31 else info.max]
    if info.min < 0:
        values += [-n - 1, info.min, info.min + 1, -(2 ** 31)]
    return np.array(values, dtype)


def run(device, build, *arrays):
    g = dml.Graph(device)
    xs = [g.input(list(np.shape(a)), np.asarray(a).dtype) for a in arrays]
    out = build(*xs)
    return g.compile([out])(dict(zip(xs, arrays)))[0]


def resolve(i, n):
    """DirectML's reading of an index into a dimension of n: negatives count from the end; -1 if out of range."""
    i = np.asarray(i).astype(object)  # exact, whatever the type
    i = np.where(i < 0, i + n, i)
    return np.where((i >= 0) & (i < n), i, -1).astype(np.int64)


# --- gather ---------------------------------------------------------------------------------------------------

def np_gather(x, idx, axis, index_dimensions):
    k = index_dimensions
    j = idx.reshape(idx.shape[len(idx.shape) - k:]) if k else idx.reshape(())
    r = resolve(j, x.shape[axis])
    out = np.take(x, np.maximum(r, 0), axis=axis)
    mask = np.expand_dims(r >= 0, tuple(range(axis))) if r.ndim else np.array(r >= 0)
    mask = mask.reshape(mask.shape + (1,) * (x.ndim - 1 - axis))
    return np.where(mask, out, 0).astype(x.dtype)


@pytest.mark.parametrize("dtype", DATA_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_gather(device, dtype, index_dtype):
    x = data((1, 3, 5, 2), dtype)
    idx = indices((1, 1, 2, 3), 5, index_dtype)
    y = run(device, lambda a, i: dml.gather(a, i, axis=2, index_dimensions=2), x, idx)
    want = np_gather(x, idx, 2, 2)  # [1, 3, 2, 3, 2] right-aligned: the leading 1 goes
    assert y.shape == (3, 2, 3, 2) and y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y, want.reshape(y.shape))


@pytest.mark.parametrize("x_shape, axis, k, idx_shape, want_shape", [
    ((4, 3, 2), 0, 1, (1, 1, 4), (4, 3, 2)),  # as many output dimensions as input ones
    ((2, 3, 2), 1, 0, (1, 1, 1), (1, 2, 2)),  # one scalar index: the axis goes, a leading 1 pads
    ((1, 1, 5), 2, 2, (1, 2, 3), (1, 2, 3)),  # [1, 1] + [2, 3]: one leading 1 of the input is cropped
    ((5,), 0, 1, (3,), (3,)),                 # 1-D
])
def test_gather_index_dimensions(device, x_shape, axis, k, idx_shape, want_shape):
    x = data(x_shape, np.int32)
    idx = indices(idx_shape, x.shape[axis], np.int64)
    y = run(device, lambda a, i: dml.gather(a, i, axis=axis, index_dimensions=k), x, idx)
    assert y.shape == want_shape
    np.testing.assert_array_equal(y, np_gather(x, idx, axis, k).reshape(want_shape))


def test_gather_doc_examples(device):
    x = np.array([11, 12, 13, 14], np.float32)
    np.testing.assert_array_equal(run(device, lambda a, i: dml.gather(a, i, axis=0, index_dimensions=1), x,
                                      np.array([3, 1, 3, 0, 2], np.uint32)), [14, 12, 14, 11, 13])
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 3, 2)
    y = run(device, lambda a, i: dml.gather(a, i, axis=1, index_dimensions=2), x, np.array([[[0, 1], [1, 2]]], np.uint32))
    np.testing.assert_array_equal(y, [[[1, 2], [3, 4]], [[3, 4], [5, 6]]])


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_gather_adversarial_indices_read_zero(device, directml_differs, index_dtype):
    directml_differs(OUT_OF_RANGE)
    x = data((3, 4), np.float32) + 1000  # no element is 0
    bad = adversarial(index_dtype, 4)
    idx = np.concatenate([bad, np.array([1], index_dtype)]).reshape(1, -1)
    y = run(device, lambda a, i: dml.gather(a, i, axis=1, index_dimensions=1), x, idx)
    np.testing.assert_array_equal(y[:, :-1], 0)
    np.testing.assert_array_equal(y[:, -1], x[:, 1])


def test_gather_strided_input_and_broadcast_indices(device):
    g = dml.Graph(device)
    base = g.input([24], np.float16)
    v = dml.reinterpret(base, [4, 3], [1, 4])  # a transposed 3x4 matrix
    one = g.input([1, 1], np.int32)
    y = dml.gather(v, dml.broadcast(one, [1, 5]), axis=0, index_dimensions=1)
    b = data((24,), np.float16)
    out, = g.compile([y])({base: b, one: np.array([[-2]], np.int32)})
    np.testing.assert_array_equal(out, np.repeat(b[:12].reshape(3, 4).T[2][None], 5, axis=0))


def test_gather_non_contiguous_numpy_indices(device):
    x = data((6, 2), np.int16)
    big = np.array([[5, 9, 0, 9, 3, 9]], np.int64)
    y = run(device, lambda a, i: dml.gather(a, i, axis=0, index_dimensions=1), x, big[:, ::2])
    np.testing.assert_array_equal(y, x[[5, 0, 3]])


def test_gather_errors(device):
    g = dml.Graph(device)
    x = g.input([3, 4])
    i = g.input([1, 2], np.uint32)
    with pytest.raises(ValueError, match="^[^:]+: indices has type FLOAT32; allowed: INT32, UINT32, INT64, UINT64"):
        dml.gather(x, g.input([1, 2]), axis=0, index_dimensions=1)
    with pytest.raises(ValueError, match="^[^:]+: axis 2 is out of range for a 2-D tensor"):
        dml.gather(x, i, axis=2, index_dimensions=1)
    with pytest.raises(ValueError, match="^[^:]+: indices \\[2\\] must have the input's rank 2"):
        dml.gather(x, g.input([2], np.uint32), axis=0, index_dimensions=1)
    with pytest.raises(ValueError, match="^[^:]+: index_dimensions 3 exceeds the rank 2"):
        dml.gather(x, i, axis=0, index_dimensions=3)
    with pytest.raises(ValueError, match="^[^:]+: indices \\[2, 2\\] must be 1 outside its last 1 dimensions"):
        dml.gather(x, g.input([2, 2], np.uint32), axis=0, index_dimensions=1)
    with pytest.raises(ValueError, match="^[^:]+: with index_dimensions 0, indices must hold one index"):
        dml.gather(x, i, axis=0, index_dimensions=0)
    # [1] + [2, 1, 2] + [2]: after cropping the input's leading 1, 4 dimensions remain for a 3-D input.
    with pytest.raises(ValueError, match="^[^:]+: the output \\[2, 1, 2, 2\\] does not fit in 3 dimensions"):
        dml.gather(g.input([1, 3, 2]), g.input([2, 1, 2], np.int64), axis=1, index_dimensions=3)


# --- gather_elements ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DATA_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_gather_elements(device, dtype, index_dtype):
    x = data((3, 4, 2), dtype)
    idx = indices((3, 6, 2), 4, index_dtype)
    y = run(device, lambda a, i: dml.gather_elements(a, i, axis=1), x, idx)
    np.testing.assert_array_equal(y, np.take_along_axis(x, resolve(idx, 4), axis=1))


def test_gather_elements_doc_example_and_adversarial(device):
    x = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    y = run(device, lambda a, i: dml.gather_elements(a, i, axis=0), x, np.array([[1, 2, 0], [2, 0, 0]], np.uint32))
    np.testing.assert_array_equal(y, [[4, 8, 3], [7, 2, 3]])
    if device.kind == "directml":
        return  # the adversarial half: DirectML's docs give out-of-range indices no result (OUT_OF_RANGE)
    for t in INDEX_DTYPES:
        bad = adversarial(t, 3)
        idx = np.stack([bad, np.full_like(bad, 1)])  # a valid row after the bad one
        y = run(device, lambda a, i: dml.gather_elements(a, i, axis=1), x[:2] + 100, idx)
        np.testing.assert_array_equal(y[0], 0)
        np.testing.assert_array_equal(y[1], 105)


def test_gather_elements_strided_and_broadcast(device):
    g = dml.Graph(device)
    base = g.input([30], np.int64)
    v = dml.reinterpret(base, [3, 4], [10, 2])
    col = g.input([3, 1], np.int32)
    y = dml.gather_elements(v, dml.broadcast(col, [3, 2]), axis=1)
    b = data((30,), np.int64)
    c = np.array([[0], [-1], [2]], np.int32)
    out, = g.compile([y])({base: b, col: c})
    ref = np.lib.stride_tricks.as_strided(b, (3, 4), (80, 16))
    np.testing.assert_array_equal(out, np.take_along_axis(ref, resolve(np.repeat(c, 2, axis=1), 4), axis=1))


def test_gather_elements_errors(device):
    g = dml.Graph(device)
    x = g.input([3, 4])
    with pytest.raises(ValueError, match="^[^:]+: indices \\[2, 4\\] must match the input .* outside axis 1"):
        dml.gather_elements(x, g.input([2, 4], np.int32), axis=1)
    with pytest.raises(ValueError, match="^[^:]+: axis 2 is out of range"):
        dml.gather_elements(x, g.input([3, 4], np.int32), axis=2)
    with pytest.raises(ValueError, match="^[^:]+: indices has type INT16"):
        dml.gather_elements(x, g.input([3, 4], np.int16), axis=0)


# --- gather_nd ------------------------------------------------------------------------------------------------

def np_gather_nd(x, idx, p, q, b):
    """Reference on the meaningful dimensions; returns the output block list shape's values (flat order)."""
    xi = x.reshape(x.shape[x.ndim - p:])
    ii = idx.reshape(idx.shape[idx.ndim - q:])
    k = ii.shape[-1]
    grid = ii.shape[:-1]
    trailing = xi.shape[b + k:]
    out = np.zeros(grid + trailing, x.dtype)
    for g in np.ndindex(grid):
        coords = [int(resolve(ii[g][j], xi.shape[b + j])) for j in range(k)]
        if min(coords) < 0:
            continue
        out[g] = xi[tuple(g[:b]) + tuple(coords)]
    return out


@pytest.mark.parametrize("dtype", DATA_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_gather_nd_with_batch(device, dtype, index_dtype):
    x = data((2, 3, 4, 5), dtype)  # batch 2, then tuples address [3, 4], trailing 5
    idx = np.stack([indices((2, 3), 3, index_dtype), indices((2, 3), 4, index_dtype)], axis=-1)
    idx = idx.reshape(1, 2, 3, 2)
    y = run(device, lambda a, i: dml.gather_nd(a, i, input_dimension_count=4, indices_dimension_count=3,
                                       batch_dimension_count=1), x, idx)
    want = np_gather_nd(x, idx, 4, 3, 1)  # [2, 3, 5]
    assert y.shape == (1, 2, 3, 5)
    np.testing.assert_array_equal(y.reshape(want.shape), want)


@pytest.mark.parametrize("p, q, b, x_shape, idx_shape, want_shape", [
    (2, 2, 0, (2, 2), (2, 1), (2, 2)),              # the docs' example 1
    (3, 3, 1, (1, 3, 2, 2), (1, 3, 2, 2), (1, 1, 3, 2)),  # the docs' example 2
    (3, 2, 0, (1, 4, 3, 2), (1, 1, 5, 3), (1, 1, 1, 5)),  # full tuples: one element per tuple
    (4, 4, 0, (3, 1, 4, 2), (1, 1, 1, 1), (1, 1, 4, 2)),  # tuple of 1 on a leading dimension
])
def test_gather_nd_shapes(device, p, q, b, x_shape, idx_shape, want_shape):
    x = data(x_shape, np.float32)
    xi = x.reshape(x_shape[len(x_shape) - p:])
    k = idx_shape[-1]
    idx = np.stack([indices(idx_shape[:-1], xi.shape[b + j], np.int32) for j in range(k)], axis=-1)
    y = run(device, lambda a, i: dml.gather_nd(a, i, input_dimension_count=p, indices_dimension_count=q,
                                       batch_dimension_count=b), x, idx)
    assert y.shape == want_shape
    np.testing.assert_array_equal(y.ravel(), np_gather_nd(x, idx, p, q, b).ravel())


def test_gather_nd_doc_example_2(device):
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2)
    idx = np.array([[[0, 0], [1, 1]], [[1, 1], [0, 0]], [[0, 1], [1, 0]]], np.uint32).reshape(1, 3, 2, 2)
    y = run(device, lambda a, i: dml.gather_nd(a, i, input_dimension_count=3, indices_dimension_count=3,
                                       batch_dimension_count=1), x, idx)
    np.testing.assert_array_equal(y, np.array([[0, 3], [7, 4], [9, 10]], np.float32).reshape(1, 1, 3, 2))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_gather_nd_adversarial_tuples_read_zero(device, directml_differs, index_dtype):
    directml_differs(OUT_OF_RANGE)
    x = data((3, 4, 2), np.int32) + 1000
    bad = adversarial(index_dtype, 4)  # out of range for both addressed dimensions
    good = np.zeros_like(bad)
    # Each bad value once in each tuple position, the other coordinate valid; then one valid tuple.
    tuples = np.concatenate([np.stack([bad, good], -1), np.stack([good, bad], -1),
                             np.array([[2, 1]], index_dtype)]).reshape(1, -1, 2)
    y = run(device, lambda a, i: dml.gather_nd(a, i, input_dimension_count=3, indices_dimension_count=2,
                                       batch_dimension_count=0), x, tuples)
    np.testing.assert_array_equal(y[0, :-1], 0)
    np.testing.assert_array_equal(y[0, -1], x[2, 1])


def test_gather_nd_broadcast_indices_and_strided_input(device):
    g = dml.Graph(device)
    base = g.input([2, 3, 4], np.uint8)
    v = dml.reinterpret(base, [4, 3, 2], [1, 4, 12])  # axes reversed
    t = g.input([1, 1, 2], np.int64)
    y = dml.gather_nd(v, dml.broadcast(t, [1, 5, 2]), input_dimension_count=3, indices_dimension_count=2,
                      batch_dimension_count=0)
    b = data((2, 3, 4), np.uint8)
    out, = g.compile([y])({base: b, t: np.array([[[3, -1]]], np.int64)})
    np.testing.assert_array_equal(out, np.repeat(b.transpose(2, 1, 0)[3, 2][None, None], 5, axis=1))


def test_gather_nd_errors(device):
    g = dml.Graph(device)
    x = g.input([2, 3, 4])
    i = g.input([2, 5, 2], np.int32)
    with pytest.raises(ValueError, match="^[^:]+: input_dimension_count 4 must lie in \\[1, 3\\]"):
        dml.gather_nd(x, i, input_dimension_count=4, indices_dimension_count=3, batch_dimension_count=0)
    with pytest.raises(ValueError, match="^[^:]+: indices_dimension_count 0 must lie in \\[1, 3\\]"):
        dml.gather_nd(x, i, input_dimension_count=3, indices_dimension_count=0, batch_dimension_count=0)
    with pytest.raises(ValueError, match="^[^:]+: batch_dimension_count 3 must be below"):
        dml.gather_nd(x, i, input_dimension_count=3, indices_dimension_count=3, batch_dimension_count=3)
    with pytest.raises(ValueError, match="^[^:]+: index tuples of 4 coordinates"):
        dml.gather_nd(x, g.input([1, 1, 4], np.int32), input_dimension_count=3, indices_dimension_count=3,
                      batch_dimension_count=0)
    with pytest.raises(ValueError, match="^[^:]+: index tuples of 3 coordinates .* must address 1 to 2"):
        dml.gather_nd(x, g.input([2, 1, 3], np.int32), input_dimension_count=3, indices_dimension_count=3,
                      batch_dimension_count=1)
    with pytest.raises(ValueError, match="^[^:]+: the batch dimensions of input"):
        dml.gather_nd(x, g.input([3, 5, 2], np.int32), input_dimension_count=3, indices_dimension_count=3,
                      batch_dimension_count=1)
    with pytest.raises(ValueError, match="^[^:]+: input \\[2, 3, 4\\] must be 1 outside its last 2"):
        dml.gather_nd(x, i, input_dimension_count=2, indices_dimension_count=3, batch_dimension_count=0)
    with pytest.raises(ValueError, match="^[^:]+: the output \\[2, 5, 3, 4\\] does not fit in 3 dimensions"):
        dml.gather_nd(x, g.input([2, 5, 1], np.int32), input_dimension_count=3, indices_dimension_count=3,
                      batch_dimension_count=0)


# --- scatter_elements -----------------------------------------------------------------------------------------

def np_scatter_elements(x, idx, upd, axis):
    out = x.copy()
    r = resolve(idx, x.shape[axis])
    for pos in np.ndindex(idx.shape):  # C order: along the axis, a later update wins
        if r[pos] < 0:
            continue
        target = list(pos)
        target[axis] = r[pos]
        out[tuple(target)] = upd[pos]
    return out


@pytest.mark.parametrize("dtype", DATA_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_scatter_elements(device, dtype, index_dtype):
    x = data((3, 5, 2), dtype)
    idx = indices((3, 7, 2), 5, index_dtype)  # 7 updates per line into 5 slots: duplicates are certain
    upd = data((3, 7, 2), dtype)
    y = run(device, lambda a, i, u: dml.scatter_elements(a, i, u, axis=1), x, idx, upd)
    np.testing.assert_array_equal(y, np_scatter_elements(x, idx, upd, 1))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_scatter_elements_adversarial_indices_write_nothing(device, index_dtype):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    bad = adversarial(index_dtype, 4)
    idx = np.stack([bad, bad, np.full_like(bad, 3)])
    upd = np.full(idx.shape, -7, np.float32)
    y = run(device, lambda a, i, u: dml.scatter_elements(a, i, u, axis=1), x, idx, upd)
    want = x.copy()
    want[2, 3] = -7
    np.testing.assert_array_equal(y, want)


def test_scatter_elements_doc_style_example_and_broadcast_updates(device):
    g = dml.Graph(device)
    x = g.input([5])
    i = g.input([4], np.int32)
    u = g.input([1])
    y = dml.scatter_elements(x, i, dml.broadcast(u, [4]), axis=0)
    out, = g.compile([y])({x: np.arange(5, dtype=np.float32), i: np.array([3, 1, -1, 0], np.int32),
                           u: np.array([9], np.float32)})
    np.testing.assert_array_equal(out, [9, 9, 2, 9, 9])


def test_scatter_elements_strided_input(device):
    g = dml.Graph(device)
    base = g.input([16], np.int16)
    v = dml.reinterpret(base, [2, 4], [1, 4])
    i = g.input([2, 1], np.uint64)
    u = g.input([2, 1], np.int16)
    y = dml.scatter_elements(v, i, u, axis=1)
    b = data((16,), np.int16)
    out, = g.compile([y])({base: b, i: np.array([[2], [0]], np.uint64), u: np.array([[500], [600]], np.int16)})
    want = np.lib.stride_tricks.as_strided(b, (2, 4), (2, 8)).copy()
    want[0, 2], want[1, 0] = 500, 600
    np.testing.assert_array_equal(out, want)


def test_scatter_elements_errors(device):
    g = dml.Graph(device)
    x = g.input([3, 4])
    i = g.input([3, 2], np.int32)
    with pytest.raises(ValueError, match="^[^:]+: updates \\[3, 3\\] must have the sizes of indices"):
        dml.scatter_elements(x, i, g.input([3, 3]), axis=1)
    with pytest.raises(ValueError, match="^[^:]+: updates has type FLOAT16 but the input is FLOAT32"):
        dml.scatter_elements(x, i, g.input([3, 2], np.float16), axis=1)
    with pytest.raises(ValueError, match="^[^:]+: indices \\[3, 2\\] must match the input .* outside axis 0"):
        dml.scatter_elements(x, i, g.input([3, 2]), axis=0)
    with pytest.raises(ValueError, match="^[^:]+: axis 7 is out of range"):
        dml.scatter_elements(x, i, g.input([3, 2]), axis=7)


# --- scatter_nd -----------------------------------------------------------------------------------------------

def np_scatter_nd_writes(x, idx, upd, p, q):
    """The input viewed as its last p dimensions, and {block coordinates: [updates written there, in order]}."""
    xo = x.reshape(x.shape[x.ndim - p:])
    ii = idx.reshape(idx.shape[idx.ndim - q:])
    k = ii.shape[-1]
    u = upd.reshape(ii.shape[:-1] + xo.shape[k:])
    writes = {}
    for g in np.ndindex(ii.shape[:-1]):
        coords = tuple(int(resolve(ii[g][j], xo.shape[j])) for j in range(k))
        if min(coords) >= 0:
            writes.setdefault(coords, []).append(u[g])
    return xo.shape, writes


def np_scatter_nd(x, idx, upd, p, q):
    """Ours: of tuples naming one block, the later one wins."""
    out = x.copy()
    shape, writes = np_scatter_nd_writes(x, idx, upd, p, q)
    xo = out.reshape(shape)  # a view: writes land in out
    for coords, us in writes.items():
        xo[coords] = us[-1]
    return out


def check_scatter_nd(device, y, x, idx, upd, p, q):
    """DirectML gives no guarantee which of two writes to one element wins (DML_SCATTER_ND_OPERATOR_DESC): there a
    block named more than once holds one of its updates; on ours the later one."""
    want = np_scatter_nd(x, idx, upd, p, q)
    if device.kind == "directml":
        shape, writes = np_scatter_nd_writes(x, idx, upd, p, q)
        got, want_view = y.reshape(shape), want.reshape(shape)
        for coords, us in writes.items():
            if len(us) > 1 and any(np.array_equal(got[coords], u) for u in us):
                want_view[coords] = got[coords]
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("dtype", DATA_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_scatter_nd(device, dtype, index_dtype):
    x = data((1, 4, 3, 2), dtype)
    idx = np.stack([indices((5,), 4, index_dtype), indices((5,), 3, index_dtype)], -1).reshape(1, 1, 5, 2)
    upd = data((1, 1, 5, 2), dtype)  # 5 tuples into 12 blocks of 2: duplicates likely; the later one wins
    y = run(device, lambda a, i, u: dml.scatter_nd(a, i, u, input_dimension_count=3, indices_dimension_count=2), x, idx, upd)
    check_scatter_nd(device, y, x, idx, upd, 3, 2)


def test_scatter_nd_doc_example_and_duplicates(device):
    # The docs' 1-D example: indices have the input's rank, so the input is viewed as [1, 8].
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 8)
    scatter = lambda a, i, u: dml.scatter_nd(a, i, u, input_dimension_count=1, indices_dimension_count=2)
    out = run(device, scatter, x, np.array([[4], [3], [1], [7]], np.uint32), np.array([[9, 10, 11, 12]], np.float32))
    np.testing.assert_array_equal(out, [[1, 11, 3, 10, 9, 6, 7, 12]])
    dup_idx, dup_upd = np.array([[2], [-6], [2]], np.int64), np.array([[5, 6, 7]], np.float32)
    dup = run(device, scatter, x, dup_idx, dup_upd)
    check_scatter_nd(device, dup, x, dup_idx, dup_upd, 1, 2)
    if device.kind != "directml":
        np.testing.assert_array_equal(dup, [[1, 2, 7, 4, 5, 6, 7, 8]])


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_scatter_nd_adversarial_tuples_write_nothing(device, directml_differs, index_dtype):
    directml_differs(OUT_OF_RANGE)
    x = np.arange(24, dtype=np.int32).reshape(1, 4, 3, 2)
    bad = adversarial(index_dtype, 4)  # out of range for both addressed dimensions
    good = np.ones_like(bad)
    tuples = np.concatenate([np.stack([bad, good], -1), np.stack([good, bad], -1),
                             np.array([[3, 2]], index_dtype)]).reshape(1, 1, -1, 2)
    upd = np.full((1, 1, tuples.shape[2], 2), -1, np.int32)
    y = run(device, lambda a, i, u: dml.scatter_nd(a, i, u, input_dimension_count=3, indices_dimension_count=2), x, tuples, upd)
    want = x.copy()
    want[0, 3, 2] = -1
    np.testing.assert_array_equal(y, want)


def test_scatter_nd_strided_input_and_broadcast_updates(device):
    g = dml.Graph(device)
    base = g.input([12], np.float16)
    v = dml.reinterpret(base, [3, 4], [1, 3])
    i = g.input([2, 1], np.int32)
    u = g.input([1, 1], np.float16)
    y = dml.scatter_nd(v, i, dml.broadcast(u, [2, 4]), input_dimension_count=2, indices_dimension_count=2)
    b = data((12,), np.float16)
    out, = g.compile([y])({base: b, i: np.array([[2], [-3]], np.int32), u: np.array([[0.5]], np.float16)})
    want = b.reshape(4, 3).T.copy()
    want[[2, 0]] = 0.5
    np.testing.assert_array_equal(out, want)


def test_scatter_nd_errors(device):
    g = dml.Graph(device)
    x = g.input([4, 3, 2])
    i = g.input([1, 5, 2], np.int32)
    with pytest.raises(ValueError, match="^[^:]+: updates \\[1, 5, 3\\] must have sizes \\[1, 5, 2\\]"):
        dml.scatter_nd(x, i, g.input([1, 5, 3]), input_dimension_count=3, indices_dimension_count=2)
    with pytest.raises(ValueError, match="^[^:]+: updates has type INT32 but the input is FLOAT32"):
        dml.scatter_nd(x, i, g.input([1, 5, 2], np.int32), input_dimension_count=3, indices_dimension_count=2)
    with pytest.raises(ValueError, match="^[^:]+: indices \\[1, 5, 2\\] must be 1 outside its last 1"):
        dml.scatter_nd(x, i, g.input([1, 5, 2]), input_dimension_count=3, indices_dimension_count=1)
    with pytest.raises(ValueError, match="^[^:]+: index tuples of 4 coordinates"):
        dml.scatter_nd(x, g.input([1, 1, 4], np.int32), g.input([1, 1, 1]), input_dimension_count=3,
                       indices_dimension_count=1)


# --- one_hot --------------------------------------------------------------------------------------------------

def np_one_hot(idx, off, on, length, axis):
    r = resolve(idx, length)  # size 1 on axis
    positions = np.arange(length).reshape([length if d == axis else 1 for d in range(idx.ndim)])
    return np.where(positions == r, on, off)


@pytest.mark.parametrize("dtype", DATA_DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_one_hot(device, dtype, index_dtype):
    idx = indices((3, 1, 4), 5, index_dtype)
    values = data((1, 1, 2), dtype)
    y = run(device, lambda i, v: dml.one_hot(i, v, output_length=5, axis=1), idx, values)
    assert y.shape == (3, 5, 4) and y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y, np_one_hot(idx, values[0, 0, 0], values[0, 0, 1], 5, 1))


def test_one_hot_doc_examples(device):
    i = np.array([0, 3, 2], np.uint32).reshape(1, 1, 3, 1)
    one_hot = lambda a, v: dml.one_hot(a, v, output_length=4, axis=3)
    y = run(device, one_hot, i, np.array([0, 1], np.float32).reshape(1, 1, 1, 2))
    np.testing.assert_array_equal(y[0, 0], [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]])
    # The on value is the second element along the fastest-changing dimension of size > 1; the rest is unused.
    y = run(device, one_hot, i, np.array([4, 2, 9], np.float32).reshape(1, 1, 3, 1))
    np.testing.assert_array_equal(y[0, 0], [[2, 4, 4, 4], [4, 4, 4, 2], [4, 4, 2, 4]])
    y = run(device, one_hot, np.array([-3, 100, 3], np.int32).reshape(1, 1, 3, 1), np.array([0, 1], np.float32).reshape(1, 1, 1, 2))
    np.testing.assert_array_equal(y[0, 0], [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_one_hot_adversarial_indices_are_all_off(device, index_dtype):
    bad = adversarial(index_dtype, 6).reshape(-1, 1)
    y = run(device, lambda a, v: dml.one_hot(a, v, output_length=6, axis=1), bad, np.array([[3, 8]], np.int16))
    np.testing.assert_array_equal(y, 3)


def test_one_hot_strided_values_and_broadcast_indices(device):
    g = dml.Graph(device)
    i = g.input([1, 1], np.int64)
    base = g.input([2, 3], np.uint8)
    v = dml.reinterpret(base, [1, 2], [1, 3])  # off = base[0, 0], on = base[1, 0]
    y = dml.one_hot(dml.broadcast(i, [3, 1]), v, output_length=4, axis=1)
    out, = g.compile([y])({i: np.array([[-1]], np.int64), base: np.array([[7, 1, 1], [200, 1, 1]], np.uint8)})
    np.testing.assert_array_equal(out, np.tile([7, 7, 7, 200], (3, 1)))


def test_one_hot_errors(device):
    g = dml.Graph(device)
    i = g.input([3, 1], np.int32)
    v = g.input([1, 2])
    with pytest.raises(ValueError, match="^[^:]+: indices \\[3, 1\\] must have size 1 on axis 0"):
        dml.one_hot(i, v, output_length=4, axis=0)
    with pytest.raises(ValueError, match="^[^:]+: axis 2 is out of range"):
        dml.one_hot(i, v, output_length=4, axis=2)
    with pytest.raises(ValueError, match="^[^:]+: values must hold at least two elements"):
        dml.one_hot(i, g.input([1, 1]), output_length=4, axis=1)
    with pytest.raises(ValueError, match="^[^:]+: values \\[2\\] must have the indices' rank 2"):
        dml.one_hot(i, g.input([2]), output_length=4, axis=1)
    with pytest.raises(ValueError, match="^[^:]+: output_length must be positive"):
        dml.one_hot(i, v, output_length=0, axis=1)
    with pytest.raises(ValueError, match="^[^:]+: indices has type FLOAT32"):
        dml.one_hot(g.input([3, 1]), v, output_length=4, axis=1)
