// Convolution geometry the CPU and CUDA executors share, settled once on the host at compile from the node's
// inferred descriptions: spatial dimensions padded to three (leading 1s), so one code path serves 1-D to 3-D, and
// the element strides of the input and filter views. Trivially copyable, so CUDA kernels take it by value.
#pragma once
#include <cstdint>

#include "../core/ops/convolution.h"
#include "host_device.h"

namespace dml {

struct ConvGeometry {
    int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1, group_in = 0, group_out = 0;
    int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
    int64_t x_stride[5], w_stride[5];  // element strides: dimensions 0 and 1, then the three spatial ones
    bool flip = false;    // DML_CONVOLUTION_MODE_CONVOLUTION: the filter is used flipped spatially
    bool forward = true;  // otherwise backward: the adjoint of the forward convolution (a transposed convolution)

    ConvGeometry() = default;
    ConvGeometry(const ConvolutionWindow& d, bool flip_, bool forward_, const TensorDesc& x, const TensorDesc& w,
                 const TensorDesc& y)
        : flip(flip_), forward(forward_) {
        const size_t nd = x.rank() - 2, lead = 3 - nd;
        batch = x.sizes[0], in_channels = x.sizes[1], out_channels = y.sizes[1], groups = d.group_count;
        group_in = in_channels / groups, group_out = out_channels / groups;
        const Strides xs = x.effective_strides(), ws = w.effective_strides();
        for (int i = 0; i < 2; ++i) x_stride[i] = xs[i], w_stride[i] = ws[i];
        for (size_t i = 0; i < 3; ++i) {
            const bool real = i >= lead;
            const size_t j = i - lead;
            in[i] = real ? x.sizes[2 + j] : 1;
            out[i] = real ? y.sizes[2 + j] : 1;
            kernel[i] = real ? w.sizes[2 + j] : 1;
            stride[i] = real ? d.strides[j] : 1;
            dilation[i] = real ? d.dilations[j] : 1;
            pad[i] = real ? d.start_padding[j] : 0;
            x_stride[2 + i] = real ? xs[2 + j] : 0;
            w_stride[2 + i] = real ? ws[2 + j] : 0;
        }
    }
    ConvGeometry(const ConvolutionDesc& d, const TensorDesc& x, const TensorDesc& w, const TensorDesc& y)
        : ConvGeometry(d, d.mode == ConvolutionMode::Convolution, d.direction == ConvolutionDirection::Forward, x, w,
                       y) {}

    DML_HOST_DEVICE int64_t in_spatial() const { return in[0] * in[1] * in[2]; }
    DML_HOST_DEVICE int64_t out_spatial() const { return out[0] * out[1] * out[2]; }
    DML_HOST_DEVICE int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
    // The filter tap read for tap `k` of dimension `d` (flipped in convolution mode).
    DML_HOST_DEVICE int64_t tap(int d, int64_t k) const { return flip ? kernel[d] - 1 - k : k; }
    // A 1x1 window that maps the image onto itself: the convolution is one GEMM over the stored image.
    DML_HOST_DEVICE bool pointwise() const {
        for (int i = 0; i < 3; ++i)
            if (kernel[i] != 1 || stride[i] != 1 || pad[i] != 0 || in[i] != out[i]) return false;
        return true;
    }
    // One filter per channel (a forward convolution with as many groups as channels, no channel multiplier).
    DML_HOST_DEVICE bool depthwise() const { return forward && group_in == 1 && group_out == 1; }
};

}  // namespace dml
