// The taps of the resampling family, which both executors build on the host at compile. RESAMPLE2 (and RESAMPLE3,
// its antialiased form) is separable:
// each output coordinate of each dimension reads a few input coordinates with weights ("taps"), and an output
// element sums the products over every dimension's taps. RESAMPLE_GRAD1 runs the transposed taps (each forward
// input gathers the forward outputs it fed, with the same weights), so no two threads accumulate into one element.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "../core/ops/resampling.h"

namespace dml {

// The taps of one dimension: for each coordinate of the side being computed, the (position, weight) pairs it reads.
using Taps = std::vector<std::vector<std::pair<uint32_t, float>>>;

// Antialiased LINEAR's taps about input coordinate x of a dimension scaled down by `scale` < 1: the triangle filter
// stretched by 1 / scale, w(i) = 1 - |i - x| * scale where positive, normalized to sum to 1; an i past the edges
// reads the edge, as every coordinate does (ONNX Runtime's antialiased Resize weighs the edges so too).
inline std::vector<std::pair<uint32_t, float>> stretched_taps(double x, float scale, int64_t last) {
    const double reach = 1.0 / scale;
    std::vector<std::pair<int64_t, double>> w;  // (input clamped to the edges, its summed weight)
    double total = 0.0;
    for (int64_t i = int64_t(std::floor(x - reach)); i <= int64_t(std::ceil(x + reach)); ++i) {
        const double v = 1.0 - std::abs(double(i) - x) * scale;
        if (v <= 0.0) continue;
        const int64_t at = std::clamp<int64_t>(i, 0, last);
        if (!w.empty() && w.back().first == at) w.back().second += v;
        else w.push_back({at, v});
        total += v;
    }
    std::vector<std::pair<uint32_t, float>> taps;
    for (auto [i, v] : w) taps.push_back({uint32_t(i), float(v / total)});
    return taps;
}

// RESAMPLE2's taps of dimension `d` for `n_out` outputs read from `n_in` inputs. The input coordinate of output o
// is (o - output_offset) / scale - input_offset, clamped to the edges, in float as DirectML computes it: where the
// exact coordinate is an integer (0.75 / 0.6 - 0.25), float rounding decides which side nearest neighbour takes, and
// DirectML's side. Nearest neighbour rounds it down (DECREASING: floor) or up (INCREASING: ceil), as
// DML_RESAMPLE2_OPERATOR_DESC says and DirectML does. Zero weights are left out, so a neighbour's inf or NaN never
// leaks into an output it does not weigh.
inline Taps forward_taps(const ResampleParams& p, size_t d, uint32_t n_in, uint32_t n_out) {
    Taps t(n_out);
    const int64_t last = int64_t(n_in) - 1;
    auto at = [&](int64_t i) { return uint32_t(std::clamp<int64_t>(i, 0, last)); };
    for (uint32_t o = 0; o < n_out; ++o) {
        double x = (float(o) - p.output_offsets[d]) / p.scales[d] - p.input_offsets[d];
        x = std::clamp(x, -1.0, double(n_in));  // beyond the edges every coordinate reads the edge
        if (p.mode == InterpolationMode::NearestNeighbor) {
            t[o].push_back({at(int64_t(p.rounding == AxisDirection::Decreasing ? std::floor(x) : std::ceil(x))), 1.0f});
            continue;
        }
        if (p.antialiased && p.scales[d] < 1.0f) {
            t[o] = stretched_taps(x, p.scales[d], last);
            continue;
        }
        const double x0 = std::floor(x);
        const float w = float(x - x0);
        const uint32_t i0 = at(int64_t(x0)), i1 = at(int64_t(x0) + 1);
        if (i0 == i1) {
            t[o].push_back({i0, 1.0f});
            continue;
        }
        if (w != 1.0f) t[o].push_back({i0, 1.0f - w});
        if (w != 0.0f) t[o].push_back({i1, w});
    }
    return t;
}

// The transposed taps: for each of `n_in` forward inputs, the forward outputs that read it and their weights.
inline Taps transposed_taps(const Taps& forward, uint32_t n_in) {
    Taps t(n_in);
    for (size_t o = 0; o < forward.size(); ++o)
        for (auto [i, w] : forward[o]) t[i].push_back({uint32_t(o), w});
    return t;
}

// Each dimension's taps for resampling input sizes `x` into output sizes `y` with RESAMPLE2's parameters, or their
// transposed taps for the gradient (whose forward resample ran from the gradient's output sizes to its input sizes).
inline std::vector<Taps> resample_taps(const ResampleParams& p, bool gradient, const Sizes& x, const Sizes& y) {
    const Sizes &forward_in = gradient ? y : x, &forward_out = gradient ? x : y;
    std::vector<Taps> taps;
    for (size_t d = 0; d < y.size(); ++d) {
        Taps t = forward_taps(p, d, forward_in[d], forward_out[d]);
        taps.push_back(gradient ? transposed_taps(t, forward_in[d]) : std::move(t));
    }
    return taps;
}

// UPSAMPLE_2D is RESAMPLE2 with integer scales on the last two dimensions. It maps pixel centres like RESAMPLE2's
// defaults; with integer scales nearest neighbour is floor(output / scale), which RESAMPLE2 gives with zero offsets
// rounding down.
inline ResampleParams upsample_params(const Upsample2dDesc& d, size_t rank) {
    const bool nearest = d.mode == InterpolationMode::NearestNeighbor;
    ResampleParams p{d.mode, AxisDirection::Decreasing, std::vector<float>(rank, 1.0f),
                     std::vector<float>(rank, nearest ? 0.0f : 0.5f), std::vector<float>(rank, nearest ? 0.0f : -0.5f)};
    p.scales[rank - 2] = float(d.scale_height);
    p.scales[rank - 1] = float(d.scale_width);
    return p;
}

}  // namespace dml
