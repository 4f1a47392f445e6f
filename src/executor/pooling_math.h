// Pooling index math the CPU and CUDA executors share: the sliding window's taps, and ROI align's sample grid,
// interpolation and gradients. The window is settled on the host at compile; the rest also runs per element in
// CUDA kernels (DML_HOST_DEVICE), in the CPU's double arithmetic. An image plane `P` is anything with
// `double at(int64_t y, int64_t x) const`.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "../core/ops/pooling.h"
#include "host_device.h"

namespace dml {

// ---- sliding-window pooling -----------------------------------------------------------------------------------

// One spatial dimension of a pooling window. A dimension the input lacks (a 4-D input pools as a 5-D one with a
// depth of 1) keeps the defaults: one input, one output, one tap.
struct PoolAxis {
    int64_t in = 1, out = 1, stride = 1, size = 1, dilation = 1, start = 0, end = 0;
    int64_t in_stride = 0;  // the input's, in elements

    // The input coordinate that tap j of output position o reaches (inside the input where 0 <= it < in).
    DML_HOST_DEVICE int64_t at(int64_t o, int64_t j) const { return o * stride + j * dilation - start; }
    DML_HOST_DEVICE bool inside(int64_t i) const { return i >= 0 && i < in; }
    // The taps of output position o inside the padded input: include_padding's divisor (taps past the end padding
    // of a ceiling-mode window are not counted).
    DML_HOST_DEVICE int64_t padded_taps(int64_t o) const {
        int64_t count = 0;
        for (int64_t j = 0; j < size; ++j) {
            const int64_t i = at(o, j);
            count += i >= -start && i < in + end;
        }
        return count;
    }
};

// The three spatial dimensions of a pooling window, depth first.
struct PoolAxes {
    PoolAxis axis[3];

    // Input position (z, y, x) of a channel plane: its offset through the input's strides, and its packed index
    // (what MAX_POOLING2's indices count, from the plane's first element).
    DML_HOST_DEVICE int64_t offset(int64_t z, int64_t y, int64_t x) const {
        return z * axis[0].in_stride + y * axis[1].in_stride + x * axis[2].in_stride;
    }
    DML_HOST_DEVICE int64_t index(int64_t z, int64_t y, int64_t x) const {
        return (z * axis[1].in + y) * axis[2].in + x;
    }
    DML_HOST_DEVICE int64_t plane_size() const { return axis[0].in * axis[1].in * axis[2].in; }
};

// The window of a pooling operator from input x to output y.
inline PoolAxes pool_axes(const PoolingWindow& w, const TensorDesc& x, const TensorDesc& y) {
    PoolAxes a;
    const size_t nd = w.window_size.size(), pad = 3 - nd;
    const Strides st = x.effective_strides();
    for (size_t s = 0; s < nd; ++s)
        a.axis[pad + s] = {x.sizes[2 + s],   y.sizes[2 + s],     w.strides[s],     w.window_size[s],
                           w.dilations[s],   w.start_padding[s], w.end_padding[s], st[2 + s]};
    return a;
}

// ---- ROI align ------------------------------------------------------------------------------------------------

// Whether v replaces `best` as a running maximum (replaces_extreme's rule, here for the device too): only a
// strictly larger value does, a number replaces NaN and NaN replaces nothing.
template <class C>
DML_HOST_DEVICE bool replaces_maximum(C v, C best) {
    if constexpr (std::is_floating_point_v<C>)
        if (std::isnan(best)) return !std::isnan(v);
    return v > best;
}

// The sample grid of one region along one axis: the number of samples per output element and each sample's input
// coordinate (pixel centers at integers), an affine function of the region's two corners.
struct RoiAxis {
    int64_t samples;
    double begin, size, scale, shift, denominator, input_offset;

    DML_HOST_DEVICE RoiAxis(const RoiAlignParams& p, double c1, double c2, double scale_, int64_t out_size)
        : begin(c1 * scale_), size((c2 - c1) * scale_), scale(scale_), input_offset(p.input_pixel_offset) {
        // DirectML: clamp(size / output size) samples per output element, rounded up (an empty or inverted region,
        // or a NaN corner, takes the minimum; so does an infinite one, whose samples all lie out of bounds and
        // which would otherwise ask for up to 2^64 of them).
        double want = std::ceil(size / double(out_size));
        const double least = p.minimum_samples_per_output, most = p.maximum_samples_per_output;
        if (!(want >= least) || !std::isfinite(want)) want = least;
        samples = int64_t(most < want ? most : want);
        const double total = double(samples) * double(out_size);
        // Spread evenly with the output pixel offset, or stretched from corner to corner (no offset applies).
        shift = p.align_regions_to_corners ? 0.0 : -p.output_pixel_offset;
        denominator = p.align_regions_to_corners ? total - 1 : total;
    }
    // Where sample i lies in the region, from 0 (first corner) to 1 (second corner).
    DML_HOST_DEVICE double fraction(int64_t i) const {
        return denominator > 0 ? (double(i) + shift) / denominator : 0.0;
    }
    // Multiplying before dividing keeps exact cases exact (a sample meant for a pixel center lands on it).
    DML_HOST_DEVICE double coordinate(int64_t i) const {
        return (denominator > 0 ? begin + (double(i) + shift) * size / denominator : begin) - input_offset;
    }
    DML_HOST_DEVICE double d_first(int64_t i) const { return scale * (1 - fraction(i)); }  // d coordinate / d corner 1
    DML_HOST_DEVICE double d_second(int64_t i) const { return scale * fraction(i); }       // d coordinate / d corner 2
};

// Where a sample reads the input along one axis: two taps and the weight of the second. A coordinate outside
// [-1, size] is out of bounds (it reads OutOfBoundsInputValue); inside, it is clamped to the edge pixels. Nearest
// neighbor rounds halves down, as DirectML's resampling does.
struct AxisSample {
    bool inside;
    int64_t lo, hi;
    double weight;  // of `hi`
    bool moves;     // whether the value depends on the coordinate here (not clamped, linear)
};

DML_HOST_DEVICE inline AxisSample axis_sample(double c, int64_t size, InterpolationMode mode) {
    if (!(c >= -1.0 && c <= double(size))) return {false, 0, 0, 0.0, false};  // NaN is out of bounds too
    if (mode == InterpolationMode::NearestNeighbor) {
        int64_t i = int64_t(std::ceil(c - 0.5));
        i = i < 0 ? 0 : i;
        i = size - 1 < i ? size - 1 : i;
        return {true, i, i, 0.0, false};
    }
    if (c <= 0) return {true, 0, 0, 0.0, false};
    const int64_t lo = int64_t(std::floor(c));
    if (lo >= size - 1) return {true, size - 1, size - 1, 0.0, false};
    return {true, lo, lo + 1, c - double(lo), true};
}

// The input interpolated at a sample.
template <class P>
DML_HOST_DEVICE double bilinear(const P& plane, const AxisSample& y, const AxisSample& x) {
    return (1 - y.weight) * ((1 - x.weight) * plane.at(y.lo, x.lo) + x.weight * plane.at(y.lo, x.hi)) +
           y.weight * ((1 - x.weight) * plane.at(y.hi, x.lo) + x.weight * plane.at(y.hi, x.hi));
}

// f(y sample, x sample, iy, ix) for the samples of output element (oy, ox) of a region, row-major.
template <class F>
DML_HOST_DEVICE void for_each_sample(const RoiAxis& ay, const RoiAxis& ax, int64_t oy, int64_t ox, int64_t height,
                                     int64_t width, InterpolationMode mode, F&& f) {
    for (int64_t sy = 0; sy < ay.samples; ++sy) {
        const int64_t iy = oy * ay.samples + sy;
        const AxisSample y = axis_sample(ay.coordinate(iy), height, mode);
        for (int64_t sx = 0; sx < ax.samples; ++sx) {
            const int64_t ix = ox * ax.samples + sx;
            f(y, axis_sample(ax.coordinate(ix), width, mode), iy, ix);
        }
    }
}

// ROI align's output element (oy, ox) of a region: the average or the maximum of its samples, those out of bounds
// (all of them where the region's batch index is not `valid`) reading `oob`.
template <class P>
DML_HOST_DEVICE double roi_align_value(const RoiAlignParams& p, const RoiAxis& ay, const RoiAxis& ax, int64_t oy,
                                       int64_t ox, int64_t height, int64_t width, const P& plane, bool valid,
                                       double oob) {
    const bool average = p.reduction == ReduceFunction::Average;
    bool first = true;
    double acc = 0;
    for_each_sample(ay, ax, oy, ox, height, width, p.interpolation,
                    [&](const AxisSample& sy, const AxisSample& sx, int64_t, int64_t) {
                        const double v = valid && sy.inside && sx.inside ? bilinear(plane, sy, sx) : oob;
                        if (average) acc += v;
                        else if (first || replaces_maximum(v, acc)) acc = v;
                        first = false;
                    });
    if (average) acc /= double(ay.samples) * double(ax.samples);
    return acc;
}

// Where output element (oy, ox)'s gradient g flows back to: f(y sample, x sample, iy, ix, gradient) for each sample
// it reduced, all of the in-bounds ones weighted 1 / count for AVERAGE, the first largest in-bounds one for MAX
// (out-of-bounds samples have no input to differentiate and take no part in the maximum).
template <class P, class F>
DML_HOST_DEVICE void roi_sample_gradients(const RoiAlignParams& p, const RoiAxis& ay, const RoiAxis& ax, int64_t oy,
                                          int64_t ox, int64_t height, int64_t width, const P& plane, double g,
                                          F&& f) {
    if (p.reduction != ReduceFunction::Max) {
        const double w = g / (double(ay.samples) * double(ax.samples));
        for_each_sample(ay, ax, oy, ox, height, width, p.interpolation,
                        [&](const AxisSample& sy, const AxisSample& sx, int64_t iy, int64_t ix) {
                            if (sy.inside && sx.inside) f(sy, sx, iy, ix, w);
                        });
        return;
    }
    bool found = false;
    double best = 0;
    AxisSample by{}, bx{};
    int64_t biy = 0, bix = 0;
    for_each_sample(ay, ax, oy, ox, height, width, p.interpolation,
                    [&](const AxisSample& sy, const AxisSample& sx, int64_t iy, int64_t ix) {
                        if (!sy.inside || !sx.inside) return;
                        const double v = bilinear(plane, sy, sx);
                        if (!found || replaces_maximum(v, best))
                            found = true, best = v, by = sy, bx = sx, biy = iy, bix = ix;
                    });
    if (found) f(by, bx, biy, bix, g);
}

// The output gradient: a sample's gradient w spread over the four pixels it interpolates, add(offset in a plane of
// `width` columns, share).
template <class Add>
DML_HOST_DEVICE void scatter_bilinear(const AxisSample& sy, const AxisSample& sx, int64_t width, double w, Add&& add) {
    add(sy.lo * width + sx.lo, w * (1 - sy.weight) * (1 - sx.weight));
    add(sy.lo * width + sx.hi, w * (1 - sy.weight) * sx.weight);
    add(sy.hi * width + sx.lo, w * sy.weight * (1 - sx.weight));
    add(sy.hi * width + sx.hi, w * sy.weight * sx.weight);
}

// The ROI gradient: adds to grad (x1, y1, x2, y2) what sample (iy, ix) with gradient w gives the region's corners.
// The image gradient at a sample is the bilinear one whatever the interpolation mode (as DirectML's pseudo-code has
// it); a clamped axis contributes nothing.
template <class P>
DML_HOST_DEVICE void add_corner_gradient(const RoiAxis& ay, const RoiAxis& ax, int64_t iy, int64_t ix, int64_t height,
                                         int64_t width, const P& plane, double w, double (&grad)[4]) {
    const AxisSample ly = axis_sample(ay.coordinate(iy), height, InterpolationMode::Linear);
    const AxisSample lx = axis_sample(ax.coordinate(ix), width, InterpolationMode::Linear);
    const double tl = plane.at(ly.lo, lx.lo), tr = plane.at(ly.lo, lx.hi);
    const double bl = plane.at(ly.hi, lx.lo), br = plane.at(ly.hi, lx.hi);
    const double gx = lx.moves ? (1 - ly.weight) * (tr - tl) + ly.weight * (br - bl) : 0.0;
    const double gy = ly.moves ? (1 - lx.weight) * (bl - tl) + lx.weight * (br - tr) : 0.0;
    grad[0] += w * gx * ax.d_first(ix);
    grad[2] += w * gx * ax.d_second(ix);
    grad[1] += w * gy * ay.d_first(iy);
    grad[3] += w * gy * ay.d_second(iy);
}

}  // namespace dml
