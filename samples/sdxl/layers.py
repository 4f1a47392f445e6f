"""The layers SDXL's three networks share, as DirectML operators on one graph, from one set of weights.

Layouts: images are [N, C, H, W]; token sequences are [1, 1, N * S, C], a GEMM's matrix, so a linear layer is
one GEMM (weight transposed in place) and attention reads a view [N, S, C] of the same buffer. Where a linear
layer meets an image (a transformer's proj_in / proj_out, the VAE's attention), the transpose between the two
layouts rides the GEMM's transpose flags instead of a copy.
"""

from __future__ import annotations

import numpy as np

import directml as dml

T = dml.MatrixTransform.TRANSPOSE


def scaled(array: np.ndarray | None, factor: float) -> np.ndarray | None:
    """array * factor in float32 (the VAE's scaled activations), or the array itself for 1: a float16 weight times a
    float32 scalar is a float32 array in NumPy 2, which the graph would convert back for nothing."""
    return array if factor == 1 or array is None else array * np.float32(factor)


class Layers:
    """Builds layers on `graph` from `weights` (diffusers' names -> arrays) in `dtype`."""

    def __init__(self, graph: dml.Graph, weights, dtype: str):
        self.graph, self.weights, self.dtype = graph, weights, dtype

    def array(self, name: str) -> np.ndarray | None:
        return np.asarray(self.weights[name]) if name in self.weights else None

    def constant(self, array: np.ndarray, sizes, dtype: str | None = None) -> dml.Expression:
        # In the tensor's type already (NumPy converts a float32 weight for a float16 graph), then lent to the
        # graph: a weight read from its file is not copied again (a full SDXL's UNet holds 5 GB of them).
        data = np.ascontiguousarray(array, dtype=dtype or self.dtype).reshape(-1)
        return self.graph.constant(data, sizes=[int(s) for s in sizes], copy=None)

    def row(self, array: np.ndarray, dtype: str | None = None) -> dml.Expression:
        """A vector as [1, 1, 1, n]."""
        return self.constant(array, [1, 1, 1, array.size], dtype)

    def linear(self, x: dml.Expression, name: str | None = None, weight: np.ndarray | None = None,
               bias: np.ndarray | None = None, image_in: bool = False, image_out=None) -> dml.Expression:
        """The linear layer `name` (`.weight` [N, K], `.bias` if there is one; or the arrays given) over tokens
        [1, 1, M, K], or over the channels of an image [B, K, H, W] (image_in). Gives tokens [1, 1, M, N], or
        an image [B, N, H, W] for image_out = the output's [B, ., H, W]."""
        if name is not None:
            weight, bias = self.array(f"{name}.weight"), self.array(f"{name}.bias")
        weight = weight.reshape(weight.shape[0], -1)  # a 1x1 convolution's [N, K, 1, 1] too
        n, k = weight.shape
        if image_out is not None:  # [B, 1, N, HW] = W @ tokens^T per batch entry
            b, _, h, w = image_out
            out = [b, 1, n, h * w]
            y = dml.gemm(dml.broadcast(self.constant(weight, [1, 1, n, k]), [b, 1, n, k]),
                         dml.reinterpret(x, [b, 1, h * w, k]),
                         None if bias is None else dml.broadcast(self.constant(bias, [1, 1, n, 1]), out),
                         trans_b=T)
            return dml.reinterpret(y, [b, n, h, w])
        if image_in:  # [B, 1, HW, N] = image^T @ W^T per batch entry
            b, _, h, w = x.shape
            out = [b, 1, h * w, n]
            y = dml.gemm(dml.reinterpret(x, [b, 1, k, h * w]),
                         dml.broadcast(self.constant(weight, [1, 1, n, k]), [b, 1, n, k]),
                         None if bias is None else dml.broadcast(self.row(bias), out),
                         trans_a=T, trans_b=T)
            return dml.reinterpret(y, [1, 1, b * h * w, n])
        rows = x.shape[2]
        return dml.gemm(x, self.constant(weight, [1, 1, n, k]),
                        None if bias is None else dml.broadcast(self.row(bias), [1, 1, rows, n]),
                        trans_b=T)

    def conv(self, x: dml.Expression, name: str, stride: int = 1, padding: tuple[int, int] | None = None,
             weight_scale: float = 1.0, bias_scale: float = 1.0) -> dml.Expression:
        """A 2-D convolution with `name`.weight [Cout, Cin, k, k] and `name`.bias, padding (before, after) each
        spatial axis (default k // 2 on both sides), the weight and the bias multiplied by the scales given (see
        vae.py's activation scale)."""
        w = self.array(f"{name}.weight")
        start, end = padding or (w.shape[2] // 2,) * 2
        bias = self.constant(scaled(self.array(f"{name}.bias"), bias_scale), [1, w.shape[0], 1, 1])
        return dml.convolution(x, self.constant(scaled(w, weight_scale), w.shape), bias, strides=[stride] * 2,
                               start_padding=[start] * 2, end_padding=[end] * 2)

    def group_norm(self, x: dml.Expression, name: str, eps: float, silu: bool, groups: int = 32) -> dml.Expression:
        """GroupNorm over [N, C, H, W], then SiLU if asked (compile fuses it into the normalization)."""
        n, c, h, w = x.shape
        grouped = dml.reinterpret(x, [n, groups, c // groups, h * w])
        shape = [1, groups, c // groups, 1]
        scale = dml.broadcast(self.constant(self.array(f"{name}.weight"), shape), grouped.shape)
        bias = dml.broadcast(self.constant(self.array(f"{name}.bias"), shape), grouped.shape)
        y = dml.mean_variance_normalization(grouped, scale, bias, axes=[2, 3], normalize_variance=True, epsilon=eps)
        if silu:
            y = dml.activation_swish(y)
        return dml.reinterpret(y, [n, c, h, w])

    def layer_norm(self, x: dml.Expression, name: str, eps: float = 1e-5) -> dml.Expression:
        """LayerNorm over the last axis of tokens [1, 1, M, C]."""
        scale = dml.broadcast(self.row(self.array(f"{name}.weight")), x.shape)
        bias = dml.broadcast(self.row(self.array(f"{name}.bias")), x.shape)
        return dml.mean_variance_normalization(x, scale, bias, axes=[3], normalize_variance=True, epsilon=eps)

    def attention(self, x: dml.Expression, names, batch: int, heads: int, context: dml.Expression | None = None,
                  mask: dml.Expression | None = None, image: bool = False, output_scale: float = 1.0) -> dml.Expression:
        """Multi-head attention of tokens x [1, 1, batch * S, C] (or of an image's pixels, `image`) over
        themselves or over `context` tokens [1, 1, batch * S_kv, C_kv]. `names`: the query, key, value and output
        projections. Q, K and V come from one GEMM whose weight rows are ordered [head, q/k/v, head_size], the
        layout DirectML's stacked inputs take. An image gives an image back. The output projection's weight and
        bias are multiplied by output_scale."""
        projections = [(self.array(f"{n}.weight"), self.array(f"{n}.bias")) for n in names[:3]]
        c = projections[0][0].shape[0]
        size = c // heads

        def stacked(pairs):  # the projections' rows (and biases) interleaved per head
            w = np.stack([w.reshape(heads, size, -1) for w, _ in pairs], 1).reshape(len(pairs) * c, -1)
            if all(b is None for _, b in pairs):
                return dict(weight=w)
            b = np.stack([(np.zeros(c, w.dtype) if b is None else b).reshape(heads, size) for _, b in pairs], 1)
            return dict(weight=w, bias=b.reshape(-1))

        s = (x.shape[2] * x.shape[3] if image else x.shape[2]) // batch
        if context is None:
            qkv = self.linear(x, **stacked(projections), image_in=image)
            args = dict(stacked_query_key_value=dml.reinterpret(qkv, [batch, s, heads, 3, size]))
        else:
            s_kv = context.shape[2] // batch
            kv = self.linear(context, **stacked(projections[1:]))
            query = self.linear(x, **stacked(projections[:1]), image_in=image)
            args = dict(query=dml.reinterpret(query, [batch, s, c]),
                        stacked_key_value=dml.reinterpret(kv, [batch, s_kv, heads, 2, size]))
        if mask is not None:
            args.update(mask=mask, mask_type=dml.MultiheadAttentionMaskType.BOOLEAN)
        out, _, _ = dml.multihead_attention(**args, head_count=heads)
        out = dml.reinterpret(out, [1, 1, batch * s, c])
        return self.linear(out, weight=scaled(self.array(f"{names[3]}.weight"), output_scale),
                           bias=scaled(self.array(f"{names[3]}.bias"), output_scale),
                           image_out=x.shape if image else None)


def upsample_nearest(x: dml.Expression, size=None) -> dml.Expression:
    """Nearest-neighbour 2x of [N, C, H, W]: output pixel o reads input floor(o / 2) (no half-pixel offsets),
    cropped to `size` (H', W') where given: a UNet's odd-sized skip, as diffusers' forward_upsample_size does."""
    n, c, h, w = x.shape
    return dml.resample(x, output_sizes=[n, c, *(size or (2 * h, 2 * w))], mode=dml.InterpolationMode.NEAREST_NEIGHBOR,
                        rounding_direction=dml.AxisDirection.DECREASING, scales=[1, 1, 2, 2],
                        input_pixel_offsets=[0] * 4, output_pixel_offsets=[0] * 4)


def causal_mask(graph: dml.Graph, batch: int, heads: int, length: int) -> dml.Expression:
    """A Boolean attention mask [batch, heads, length, length]: each token sees itself and those before it."""
    keep = np.tril(np.ones((length, length), np.int32)).reshape(-1)
    return dml.broadcast(graph.constant(keep, "int32", sizes=[1, 1, length, length]), [batch, heads, length, length])


def timestep_embedding(t, dim: int, flip_sin_to_cos: bool = True, shift: float = 0.0) -> np.ndarray:
    """diffusers' sinusoidal embedding of the values t: [len(t), dim], computed in float32 as it is there."""
    half = dim // 2
    freqs = np.exp(-np.log(10000.0) * np.arange(half, dtype=np.float32) / np.float32(half - shift)).astype(np.float32)
    args = np.asarray(t, np.float32).reshape(-1, 1) * freqs[None]
    sin, cos = np.sin(args), np.cos(args)
    return np.concatenate([cos, sin] if flip_sin_to_cos else [sin, cos], axis=1).astype(np.float32)
