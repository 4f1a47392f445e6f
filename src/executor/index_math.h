// Index math the CPU and CUDA executors share: where the data movement operators read each element. The views
// are settled on the host at compile; padding_source also runs per element in CUDA kernels (DML_HOST_DEVICE).
#pragma once
#include <cstdint>
#include <vector>

#include "../core/ops/data_movement.h"
#include "host_device.h"

namespace dml {

// Where SLICE1's window starts in a tensor of `strides`, and the step of each window dimension there: a negative
// window stride starts at the window's far end and walks back.
struct SliceWindow {
    int64_t base = 0;
    std::vector<int64_t> steps;
};

inline SliceWindow slice_window(const SliceDesc& d, const std::vector<int64_t>& strides) {
    SliceWindow w;
    for (size_t i = 0; i < strides.size(); ++i) {
        int64_t start = d.strides[i] > 0 ? d.offsets[i] : int64_t(d.offsets[i]) + d.sizes[i] - 1;
        w.base += start * strides[i];
        w.steps.push_back(strides[i] * d.strides[i]);
    }
    return w;
}

// PADDING1's source coordinate for output coordinate `o` of a dimension of `n` input elements, or -1 where the
// constant goes. REFLECTION and SYMMETRIC fold periodically, so paddings wider than the input are defined too.
DML_HOST_DEVICE inline int64_t padding_source(PaddingMode mode, int64_t o, int64_t start, int64_t n) {
    const int64_t p = o - start;
    if (p >= 0 && p < n) return p;
    auto mod = [](int64_t a, int64_t m) { return ((a % m) + m) % m; };
    switch (mode) {
        case PaddingMode::Constant: return -1;
        case PaddingMode::Edge: return p < 0 ? 0 : n - 1;
        case PaddingMode::Reflection: {
            if (n == 1) return 0;
            const int64_t period = 2 * (n - 1), m = mod(p, period);
            return m < n ? m : period - m;
        }
        case PaddingMode::Symmetric: {
            const int64_t m = mod(p, 2 * n);
            return m < n ? m : 2 * n - 1 - m;
        }
        case PaddingMode::Wrap: return mod(p, n);
    }
    return -1;
}

// Both directions of DEPTH_TO_SPACE / SPACE_TO_DEPTH are one six-dimensional strided copy: the space tensor walked
// as [N, C, H', blockY, W', blockX] (its rows are (H', blockY) and its columns (W', blockX) flattened) and the depth
// tensor as [N, depth, H', W'] whose depth is (blockY, blockX, C) for DEPTH_COLUMN_ROW and (C, blockY, blockX) for
// COLUMN_ROW_DEPTH. `s` is the space tensor's sizes, `sp` and `dp` the two tensors' element strides.
struct DepthSpaceView {
    Sizes shape;
    std::vector<int64_t> space, depth;  // strides over `shape`
};

inline DepthSpaceView depth_space_view(const DepthSpaceDesc& d, const Sizes& s, const std::vector<int64_t>& sp,
                                       const std::vector<int64_t>& dp) {
    const int64_t b = d.block_size;
    const uint32_t c = s[1], h = uint32_t(s[2] / b), w = uint32_t(s[3] / b);
    const int64_t dc = dp[1];  // one step of the depth dimension
    return {{s[0], c, h, uint32_t(b), w, uint32_t(b)},
            {sp[0], sp[1], sp[2] * b, sp[2], sp[3] * b, sp[3]},
            d.order == DepthSpaceOrder::DepthColumnRow
                ? std::vector<int64_t>{dp[0], dc, dp[2], dc * b * c, dp[3], dc * c}
                : std::vector<int64_t>{dp[0], dc * b * b, dp[2], dc * b, dp[3], dc}};
}

}  // namespace dml
