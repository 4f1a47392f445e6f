"""The sample networks again, in NumPy only: an independent reference for tests/test_samples_models.py.

Each network is written from its architecture and the same .npy weights as the sample, with layers built
here from NumPy (convolution by im2col and a matrix product), so the samples' graphs of DirectML operators
are checked against code that shares nothing with directml but the weights. Everything is NCHW float32.
"""

import numpy as np


# ---- layers ----

def _pairs(v):
    return (v, v) if np.isscalar(v) else tuple(v)


def _windows(x, k, stride, dilation):
    """[N, C, Ho, Wo, kh, kw] view of every (dilated) window of x at the stride."""
    (kh, kw), (sh, sw), (dh, dw) = k, stride, dilation
    view = np.lib.stride_tricks.sliding_window_view(x, ((kh - 1) * dh + 1, (kw - 1) * dw + 1), axis=(2, 3))
    return view[:, :, ::sh, ::sw, ::dh, ::dw]


def conv2d(x, w, b=None, stride=1, pad=0, dilation=1, groups=1):
    """Cross-correlation of x [N, C, H, W] with w [M, C / groups, kh, kw]; pad is p or (top, left, bottom, right)."""
    top, left, bottom, right = (pad,) * 4 if np.isscalar(pad) else pad
    x = np.pad(x, [(0, 0), (0, 0), (top, bottom), (left, right)])
    m, cg, kh, kw = w.shape
    cols = _windows(x, (kh, kw), _pairs(stride), _pairs(dilation))  # [N, C, Ho, Wo, kh, kw]
    n, c, ho, wo = cols.shape[:4]
    cols = cols.reshape(n, groups, cg, ho, wo, kh, kw)
    taps = w.reshape(groups, m // groups, cg, kh, kw)
    if groups == 1:  # im2col: one matrix product [M, C*kh*kw] @ [C*kh*kw, N*Ho*Wo]
        patches = cols[:, 0].transpose(1, 4, 5, 0, 2, 3).reshape(cg * kh * kw, n * ho * wo)
        y = (w.reshape(m, -1) @ patches).reshape(m, n, ho, wo).transpose(1, 0, 2, 3)
    else:
        y = np.einsum("ngchwij,gocij->ngohw", cols, taps, optimize=True).reshape(n, m, ho, wo)
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def conv_transpose2d(x, w, b=None, stride=2, pad=1, output_padding=1):
    """Transposed convolution of x [N, C, H, W] with w [C, M, k, k]: every input pixel adds w times itself into
    the output at pixel * stride + tap, then pad is cropped from the start and pad - output_padding from the end."""
    n, c, h, wd = x.shape
    m, k = w.shape[1], w.shape[2]
    full = np.zeros((n, m, (h - 1) * stride + k, (wd - 1) * stride + k), np.float32)
    for i in range(k):
        for j in range(k):
            full[:, :, i:i + (h - 1) * stride + 1:stride, j:j + (wd - 1) * stride + 1:stride] += \
                np.einsum("nchw,cm->nmhw", x, w[:, :, i, j])
    end = pad - output_padding
    y = full[:, :, pad:full.shape[2] - end, pad:full.shape[3] - end]
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def max_pool2d(x, k, stride, ceil_mode=False):
    """Max over k x k windows; ceil_mode keeps a last window that starts inside the input but runs past it."""
    h, w = x.shape[2:]
    size = [((d - k + (stride - 1 if ceil_mode else 0)) // stride) + 1 for d in (h, w)]
    grow = [(s - 1) * stride + k - d for s, d in zip(size, (h, w))]
    x = np.pad(x, [(0, 0), (0, 0), (0, max(grow[0], 0)), (0, max(grow[1], 0))], constant_values=-np.inf)
    return _windows(x, (k, k), (stride, stride), (1, 1)).max(axis=(4, 5))


def global_avg_pool(x):
    return x.mean(axis=(2, 3), keepdims=True)


def batch_norm(x, mean, var, gamma, beta, eps=1e-5):
    s = lambda v: v.reshape(1, -1, 1, 1)  # noqa: E731
    return (x - s(mean)) / np.sqrt(s(var) + eps) * s(gamma) + s(beta)


def instance_norm(x, scale, bias, eps=1e-5):
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale.reshape(1, -1, 1, 1) + bias.reshape(1, -1, 1, 1)


def relu(x):
    return np.maximum(x, 0)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def pixel_shuffle(x, r):
    """[N, C*r*r, H, W] -> [N, C, H*r, W*r], channel c*r*r + i*r + j going to pixel (h*r + i, w*r + j)."""
    n, c, h, w = x.shape
    return x.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // (r * r), h * r, w * r)


def reflect_pad(x, p):
    return np.pad(x, [(0, 0), (0, 0), (p, p), (p, p)], mode="reflect")


# ---- networks (weights: dict of .npy file stem -> array) ----

def mnist(wt, image):
    """image [1, 1, 28, 28] -> class scores [1, 10] (before softmax)."""
    x = relu(conv2d(image, wt["Parameter5"], wt["Parameter6"], pad=2))
    x = max_pool2d(x, 2, 2)
    x = relu(conv2d(x, wt["Parameter87"], wt["Parameter88"], pad=2))
    x = max_pool2d(x, 3, 3)
    return x.reshape(1, 256) @ wt["Parameter193"].reshape(256, 10) + wt["Parameter194"]


def squeezenet(wt, image):
    """SqueezeNet 1.1: image [1, 3, 224, 224] (normalized) -> class scores [1, 1000]."""
    def conv(x, i, pad=0, stride=1):
        return relu(conv2d(x, wt[f"squeezenet0_conv{i}_weight"], wt[f"squeezenet0_conv{i}_bias"], stride, pad))

    def fire(x, i):
        s = conv(x, i)
        return np.concatenate([conv(s, i + 1), conv(s, i + 2, pad=1)], axis=1)

    x = max_pool2d(conv(image, 0, stride=2), 3, 2, ceil_mode=True)
    x = fire(fire(x, 1), 4)
    x = max_pool2d(x, 3, 2, ceil_mode=True)
    x = fire(fire(x, 7), 10)
    x = max_pool2d(x, 3, 2, ceil_mode=True)
    for i in (13, 16, 19, 22):
        x = fire(x, i)
    return global_avg_pool(conv(x, 25)).reshape(1, 1000)


MOBILENET_STRIDES = [1, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1]


def mobilenet_v2(wt, image, classifier=None):
    """MobileNetV2 1.0: image [1, 3, 224, 224] -> pooled features [1, 1280, 1, 1], or class scores [1, 1000]
    when classifier [1000, 1280] is given."""
    def conv_bn(x, prefix, conv, bn, stride=1, groups=1, relu6=True):
        w = wt[f"mobilenetv20_features_{prefix}conv{conv}_weight"]
        k = w.shape[2]
        x = conv2d(x, w, stride=stride, pad=k // 2, groups=groups)
        p = f"mobilenetv20_features_{prefix}batchnorm{bn}_"
        x = batch_norm(x, wt[p + "running_mean"], wt[p + "running_var"], wt[p + "gamma"], wt[p + "beta"])
        return np.clip(x, 0, 6) if relu6 else x

    x = conv_bn(image, "", 0, 0, stride=2)
    for i, stride in enumerate(MOBILENET_STRIDES):
        p = f"linearbottleneck{i}_"
        y = conv_bn(x, p, 0, 0)
        y = conv_bn(y, p, 1, 1, stride=stride, groups=y.shape[1])
        y = conv_bn(y, p, 2, 2, relu6=False)
        x = x + y if stride == 1 and x.shape == y.shape else y
    x = global_avg_pool(conv_bn(x, "", 1, 1))
    return x if classifier is None else x.reshape(1, 1280) @ classifier.reshape(1000, 1280).T


def super_resolution(wt, y):
    """y [1, 1, H, W] in [0, 1] -> [1, 1, 3H, 3W] (not clipped)."""
    x = relu(conv2d(y, wt["conv1.weight"], wt["conv1.bias"], pad=2))
    x = relu(conv2d(x, wt["conv2.weight"], wt["conv2.bias"], pad=1))
    x = relu(conv2d(x, wt["conv3.weight"], wt["conv3.bias"], pad=1))
    return pixel_shuffle(conv2d(x, wt["conv4.weight"], wt["conv4.bias"], pad=1), 3)


def fast_style(wt, bgr):
    """Johnson's fast style network (instance norm): bgr [1, 3, H, W] in [0, 255] -> [1, 3, H, W] in [0, 255]."""
    def norm(x, i, act=True):
        s = "" if i == 0 else str(i)
        x = instance_norm(x, wt[f"InstanceNormalization_scale{s}"], wt[f"InstanceNormalization_B{s}"])
        return relu(x) if act else x

    def conv(x, i, stride=1, pad=0):
        s = "" if i == 0 else str(i)
        return conv2d(x, wt[f"convolution{s}_W"], wt[f"convolution{s}_B"], stride, pad)

    mean = wt["scale_B"].reshape(1, 3, 1, 1)
    x = reflect_pad(bgr - mean, 40)
    x = norm(conv(x, 0, pad=4), 0)
    x = norm(conv(x, 1, stride=2, pad=1), 1)
    x = norm(conv(x, 2, stride=2, pad=1), 2)
    for r in range(5):  # residual blocks of unpadded convolutions; the shortcut is cropped to match
        c = 3 + 2 * r
        y = norm(conv(norm(conv(x, c), c), c + 1), c + 1, act=False)
        x = x[:, :, 2:-2, 2:-2] + y
    x = norm(conv_transpose2d(x, wt["convolution13_W"], wt["convolution13_B"]), 13)
    x = norm(conv_transpose2d(x, wt["convolution14_W"], wt["convolution14_B"]), 14)
    x = np.tanh(conv(x, 15, pad=4)) * 150
    return np.clip(x * wt["Mul_B"].reshape(1, 3, 1, 1) + mean, 0, 255)
