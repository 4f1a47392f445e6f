// CPU kernels of the pooling family: average and max pooling (with indices), ROI align and its gradient.
#include "../../core/ops/pooling.h"

#include <algorithm>
#include <cmath>

#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

// ---- sliding-window pooling -----------------------------------------------------------------------------------

// One spatial dimension of a window: for each output position, the input coordinates its taps reach and how many
// of its taps fall inside the padded input (include_padding's divisor; taps past the padding of a ceiling-mode
// window are not counted).
struct AxisTaps {
    std::vector<std::vector<int64_t>> taps;
    std::vector<int64_t> padded_count;
};

AxisTaps axis_taps(int64_t in, int64_t out, int64_t stride, int64_t size, int64_t dilation, int64_t start,
                   int64_t end) {
    AxisTaps a{std::vector<std::vector<int64_t>>(out), std::vector<int64_t>(out, 0)};
    for (int64_t o = 0; o < out; ++o)
        for (int64_t j = 0; j < size; ++j) {
            const int64_t at = o * stride + j * dilation - start;
            if (at >= 0 && at < in) a.taps[o].push_back(at);
            if (at >= -start && at < in + end) ++a.padded_count[o];
        }
    return a;
}

// Calls f(out_index, tap, taps_inside, taps_in_padded_input) for every output element; tap(visit) calls
// visit(input_offset, packed_input_index) for each tap inside the input, depth-major as DirectML scans a window.
// A 4-D input is pooled as a 5-D one with a depth of 1.
template <class F>
void for_each_window(const KernelArgs& args, const PoolingWindow& w, F&& f) {
    const TensorDesc &x = *args.inputs[0].desc, &y = *args.outputs[0].desc;
    const size_t nd = w.window_size.size(), pad = 3 - nd;
    Strides st = x.effective_strides();
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, in_stride[3] = {0, 0, 0};
    std::vector<AxisTaps> axes;
    for (size_t i = 0; i < 3; ++i) {
        if (i < pad) {
            axes.push_back({{{0}}, {1}});
            continue;
        }
        const size_t s = i - pad;
        in[i] = x.sizes[2 + s], out[i] = y.sizes[2 + s], in_stride[i] = st[2 + s];
        axes.push_back(axis_taps(in[i], out[i], w.strides[s], w.window_size[s], w.dilations[s], w.start_padding[s],
                                 w.end_padding[s]));
    }
    const int64_t channels = x.sizes[1], spatial = in[0] * in[1] * in[2];
    const uint64_t rows = uint64_t(x.sizes[0]) * channels * out[0] * out[1];
    args.pool.parallel_for(rows, std::max<uint64_t>(1, 256 / out[2]), [&](size_t b, size_t e) {
        for (size_t r = b; r < e; ++r) {
            const int64_t oy = r % out[1], oz = (r / out[1]) % out[0], nc = r / (out[1] * out[0]);
            const int64_t n = nc / channels, c = nc % channels;
            const int64_t base = n * int64_t(st[0]) + c * int64_t(st[1]);
            for (int64_t ox = 0; ox < out[2]; ++ox) {
                const auto &tz = axes[0].taps[oz], &ty = axes[1].taps[oy], &tx = axes[2].taps[ox];
                const int64_t counted = axes[0].padded_count[oz] * axes[1].padded_count[oy] * axes[2].padded_count[ox];
                auto tap = [&](auto&& visit) {
                    for (int64_t z : tz)
                        for (int64_t yy : ty)
                            for (int64_t xx : tx)
                                visit(base + z * in_stride[0] + yy * in_stride[1] + xx * in_stride[2],
                                      nc * spatial + (z * in[1] + yy) * in[2] + xx);
                };
                f(int64_t(r) * out[2] + ox, tap, int64_t(tz.size() * ty.size() * tx.size()), counted);
            }
        }
    });
}

template <class T>
void run_average_pooling_typed(const KernelArgs& args) {
    const auto& d = args.desc<AveragePoolingDesc>();
    const T* in = args.inputs[0].as<T>();
    T* out = args.outputs[0].as<T>();
    for_each_window(args, d.window, [&](int64_t o, auto&& tap, int64_t inside, int64_t counted) {
        double sum = 0;
        tap([&](int64_t at, int64_t) { sum += double(compute_t<T>(in[at])); });
        // The builder guarantees a non-zero divisor.
        out[o] = T(compute_t<T>(sum / double(d.include_padding ? counted : inside)));
    });
}

template <class T>
void run_max_pooling_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<MaxPoolingDesc>();
    const T* in = args.inputs[0].as<T>();
    T* out = args.outputs[0].as<T>();
    const TensorArg* indices = d.output_indices ? &args.outputs[1] : nullptr;
    for_each_window(args, d.window, [&](int64_t o, auto&& tap, int64_t, int64_t) {
        // The first maximum in scan order wins a tie; padding never does (it is -infinity). The builder guarantees
        // at least one input tap.
        bool first = true;
        int64_t best_index = 0, best_at = 0;
        tap([&](int64_t at, int64_t index) {
            if (first || replaces_extreme(C(in[at]), C(in[best_at]), true))
                best_index = index, best_at = at, first = false;
        });
        out[o] = in[best_at];
        if (indices) {
            if (indices->desc->data_type == DataType::UInt64) indices->as<uint64_t>()[o] = uint64_t(best_index);
            else indices->as<uint32_t>()[o] = uint32_t(best_index);
        }
    });
}

// ---- ROI align ------------------------------------------------------------------------------------------------

// The sample grid of one region along one axis: the number of samples per output element and each sample's input
// coordinate (pixel centers at integers), an affine function of the region's two corners.
struct RoiAxis {
    int64_t samples;
    double begin, size, scale, shift, denominator, input_offset;

    RoiAxis(const RoiAlignParams& p, double c1, double c2, double scale_, int64_t out_size)
        : begin(c1 * scale_), size((c2 - c1) * scale_), scale(scale_), input_offset(p.input_pixel_offset) {
        // DirectML: clamp(size / output size) samples per output element, rounded up (an empty or inverted region,
        // or a NaN corner, takes the minimum; so does an infinite one, whose samples all lie out of bounds and
        // which would otherwise ask for up to 2^64 of them).
        double want = std::ceil(size / double(out_size));
        if (!(want >= double(p.minimum_samples_per_output)) || !std::isfinite(want)) want = p.minimum_samples_per_output;
        samples = int64_t(std::min(want, double(p.maximum_samples_per_output)));
        const double total = double(samples) * double(out_size);
        // Spread evenly with the output pixel offset, or stretched from corner to corner (no offset applies).
        shift = p.align_regions_to_corners ? 0.0 : -p.output_pixel_offset;
        denominator = p.align_regions_to_corners ? total - 1 : total;
    }
    // Where sample i lies in the region, from 0 (first corner) to 1 (second corner).
    double fraction(int64_t i) const { return denominator > 0 ? (double(i) + shift) / denominator : 0.0; }
    // Multiplying before dividing keeps exact cases exact (a sample meant for a pixel center lands on it).
    double coordinate(int64_t i) const {
        return (denominator > 0 ? begin + (double(i) + shift) * size / denominator : begin) - input_offset;
    }
    double d_first(int64_t i) const { return scale * (1 - fraction(i)); }  // d coordinate / d first corner
    double d_second(int64_t i) const { return scale * fraction(i); }       // d coordinate / d second corner
};

// Where a sample reads the input along one axis: two taps and the weight of the second. A coordinate outside
// [-1, size] is out of bounds (it reads OutOfBoundsInputValue); inside, it is clamped to the edge pixels. Nearest
// neighbor rounds halves down, as DirectML's resampling does.
struct AxisSample {
    bool inside;
    int64_t lo, hi;
    double weight;     // of `hi`
    bool moves;        // whether the value depends on the coordinate here (not clamped, linear)
};

AxisSample axis_sample(double c, int64_t size, InterpolationMode mode) {
    if (!(c >= -1.0 && c <= double(size))) return {false, 0, 0, 0, false};  // NaN is out of bounds too
    if (mode == InterpolationMode::NearestNeighbor) {
        int64_t i = std::clamp<int64_t>(int64_t(std::ceil(c - 0.5)), 0, size - 1);
        return {true, i, i, 0.0, false};
    }
    if (c <= 0) return {true, 0, 0, 0.0, false};
    int64_t lo = int64_t(std::floor(c));
    if (lo >= size - 1) return {true, size - 1, size - 1, 0.0, false};
    return {true, lo, lo + 1, c - double(lo), true};
}

// Reads what ROI align needs of its operands: the region corners and batch index of each ROI.
struct Regions {
    const TensorArg &roi, &batch;
    int64_t roi_step, coord_step, batch_step;

    Regions(const TensorArg& roi_, const TensorArg& batch_)
        : roi(roi_), batch(batch_), roi_step(int64_t(roi_.desc->effective_strides().end()[-2])),
          coord_step(int64_t(roi_.desc->effective_strides().back())),
          batch_step(int64_t(batch_.desc->effective_strides().back())) {}

    template <class T> double corner(int64_t r, int j) const {
        return double(compute_t<T>(roi.as<T>()[r * roi_step + j * coord_step]));
    }
    uint64_t batch_index(int64_t r) const {
        return batch.desc->data_type == DataType::UInt64 ? batch.as<uint64_t>()[r * batch_step]
                                                          : batch.as<uint32_t>()[r * batch_step];
    }
};

// One channel plane of the input, read through its strides.
template <class T>
struct Plane {
    const T* data;
    int64_t sy, sx;
    double at(int64_t y, int64_t x) const { return double(compute_t<T>(data[y * sy + x * sx])); }
    double sample(const AxisSample& y, const AxisSample& x) const {
        return (1 - y.weight) * ((1 - x.weight) * at(y.lo, x.lo) + x.weight * at(y.lo, x.hi)) +
               y.weight * ((1 - x.weight) * at(y.hi, x.lo) + x.weight * at(y.hi, x.hi));
    }
};

// The samples of one output element of one region, in row-major order.
struct OutputSamples {
    const RoiAxis &ay, &ax;
    int64_t oy, ox, height, width;
    InterpolationMode mode;
    template <class F> void each(F&& f) const {
        for (int64_t sy = 0; sy < ay.samples; ++sy) {
            const int64_t iy = oy * ay.samples + sy;
            AxisSample y = axis_sample(ay.coordinate(iy), height, mode);
            for (int64_t sx = 0; sx < ax.samples; ++sx) {
                const int64_t ix = ox * ax.samples + sx;
                f(y, axis_sample(ax.coordinate(ix), width, mode), iy, ix);
            }
        }
    }
    double count() const { return double(ay.samples) * double(ax.samples); }
};

template <class T>
void run_roi_align_typed(const KernelArgs& args) {
    const auto& d = args.desc<RoiAlignDesc>();
    const RoiAlignParams& p = d.params;
    const TensorDesc &x = *args.inputs[0].desc, &y = *args.outputs[0].desc;
    const Strides st = x.effective_strides();
    const int64_t batches = x.sizes[0], channels = x.sizes[1], height = x.sizes[2], width = x.sizes[3];
    const int64_t rois = y.sizes[0], oh = y.sizes[2], ow = y.sizes[3];
    Regions regions(args.inputs[1], args.inputs[2]);
    T* out = args.outputs[0].as<T>();
    const double oob = d.out_of_bounds_input_value;
    args.pool.parallel_for(uint64_t(rois) * oh, 1, [&](size_t b, size_t e) {
        for (size_t row = b; row < e; ++row) {
            const int64_t r = row / oh, oy = row % oh;
            const RoiAxis ax(p, regions.corner<T>(r, 0), regions.corner<T>(r, 2), p.spatial_scale_x, ow);
            const RoiAxis ay(p, regions.corner<T>(r, 1), regions.corner<T>(r, 3), p.spatial_scale_y, oh);
            const uint64_t n = regions.batch_index(r);
            for (int64_t c = 0; c < channels; ++c) {
                // A batch index out of range is undefined in DirectML: we read no input and write the
                // out-of-bounds value.
                const bool valid = n < uint64_t(batches);
                const Plane<T> plane{args.inputs[0].as<T>() + (valid ? int64_t(n) * st[0] + c * st[1] : 0),
                                     int64_t(st[2]), int64_t(st[3])};
                for (int64_t ox = 0; ox < ow; ++ox) {
                    OutputSamples s{ay, ax, oy, ox, height, width, p.interpolation};
                    bool first = true;
                    double acc = 0;
                    s.each([&](const AxisSample& sy, const AxisSample& sx, int64_t, int64_t) {
                        const double v = valid && sy.inside && sx.inside ? plane.sample(sy, sx) : oob;
                        if (p.reduction == ReduceFunction::Average) acc += v;
                        else if (first || replaces_extreme(v, acc, true)) acc = v;
                        first = false;
                    });
                    if (p.reduction == ReduceFunction::Average) acc /= s.count();
                    out[((r * channels + c) * oh + oy) * ow + ox] = T(compute_t<T>(acc));
                }
            }
        }
    });
}

// The gradient of ROI align: each output element's gradient flows to the samples it reduced (all of them, weighted
// 1/count, for AVERAGE; the first largest in-bounds one for MAX), then through the interpolation to the input pixels
// (output gradient) and to the sample coordinates, hence the region corners (ROI gradient).
template <class T>
void run_roi_align_grad_typed(const KernelArgs& args) {
    const auto& d = args.desc<RoiAlignGradDesc>();
    const RoiAlignParams& p = d.params;
    const TensorArg &input = args.inputs[0], &dy = args.inputs[1];
    const TensorArg* dx = d.compute_output_gradient ? &args.outputs[0] : nullptr;
    const TensorArg* droi = d.compute_output_roi_gradient ? &args.outputs.back() : nullptr;
    const TensorDesc& image = dx ? *dx->desc : *input.desc;
    const int64_t batches = image.sizes[0], channels = image.sizes[1], height = image.sizes[2], width = image.sizes[3];
    const int64_t rois = dy.desc->sizes[0], oh = dy.desc->sizes[2], ow = dy.desc->sizes[3];
    const Strides gs = dy.desc->effective_strides();
    const Strides is = input ? input.desc->effective_strides() : Strides(4, 0);
    Regions regions(args.inputs[2], args.inputs[3]);
    const bool max = p.reduction == ReduceFunction::Max;

    // Visits, for region r and channel c, every sample that receives gradient: f(plane, sy, sx, iy, ix, gradient).
    auto for_each_contribution = [&](int64_t r, int64_t c, const RoiAxis& ay, const RoiAxis& ax, auto&& f) {
        const uint64_t n = regions.batch_index(r);
        if (n >= uint64_t(batches)) return;  // undefined in DirectML: we touch nothing
        const Plane<T> plane{input ? input.as<T>() + int64_t(n) * is[0] + c * is[1] : nullptr, int64_t(is[2]),
                             int64_t(is[3])};
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
                const double g = double(compute_t<T>(dy.as<T>()[r * gs[0] + c * gs[1] + oy * gs[2] + ox * gs[3]]));
                OutputSamples s{ay, ax, oy, ox, height, width, p.interpolation};
                if (!max) {
                    const double w = g / s.count();
                    s.each([&](const AxisSample& sy, const AxisSample& sx, int64_t iy, int64_t ix) {
                        if (sy.inside && sx.inside) f(plane, sy, sx, iy, ix, w);
                    });
                    continue;
                }
                // Out-of-bounds samples have no input to differentiate and take no part in the maximum.
                bool found = false;
                double best = 0;
                AxisSample by{}, bx{};
                int64_t biy = 0, bix = 0;
                s.each([&](const AxisSample& sy, const AxisSample& sx, int64_t iy, int64_t ix) {
                    if (!sy.inside || !sx.inside) return;
                    const double v = plane.sample(sy, sx);
                    if (!found || replaces_extreme(v, best, true))
                        found = true, best = v, by = sy, bx = sx, biy = iy, bix = ix;
                });
                if (found) f(plane, by, bx, biy, bix, g);
            }
    };

    if (dx) {
        // Channels own disjoint planes of the output gradient, so they run in parallel; sums are kept in double.
        std::vector<double> acc(dx->desc->element_count(), 0.0);
        args.pool.parallel_for(uint64_t(channels), 1, [&](size_t b, size_t e) {
            for (size_t c = b; c < e; ++c)
                for (int64_t r = 0; r < rois; ++r) {
                    const RoiAxis ax(p, regions.corner<T>(r, 0), regions.corner<T>(r, 2), p.spatial_scale_x, ow);
                    const RoiAxis ay(p, regions.corner<T>(r, 1), regions.corner<T>(r, 3), p.spatial_scale_y, oh);
                    const uint64_t n = regions.batch_index(r);
                    if (n >= uint64_t(batches)) continue;  // undefined in DirectML: we touch nothing
                    double* plane = acc.data() + (int64_t(n) * channels + int64_t(c)) * height * width;
                    for_each_contribution(r, c, ay, ax, [&](const Plane<T>&, const AxisSample& sy,
                                                            const AxisSample& sx, int64_t, int64_t, double w) {
                        plane[sy.lo * width + sx.lo] += w * (1 - sy.weight) * (1 - sx.weight);
                        plane[sy.lo * width + sx.hi] += w * (1 - sy.weight) * sx.weight;
                        plane[sy.hi * width + sx.lo] += w * sy.weight * (1 - sx.weight);
                        plane[sy.hi * width + sx.hi] += w * sy.weight * sx.weight;
                    });
                }
        });
        std::transform(acc.begin(), acc.end(), dx->as<T>(), [](double v) { return T(compute_t<T>(v)); });
    }
    if (droi) {
        // Regions own their four gradient values (packed [.., rois, 4]), so they run in parallel. The image
        // gradient at a sample is the bilinear one whatever the interpolation mode (as DirectML's pseudo-code has
        // it); a clamped axis contributes nothing.
        T* out = droi->as<T>();
        args.pool.parallel_for(uint64_t(rois), 1, [&](size_t b, size_t e) {
            for (size_t r = b; r < e; ++r) {
                const RoiAxis ax(p, regions.corner<T>(r, 0), regions.corner<T>(r, 2), p.spatial_scale_x, ow);
                const RoiAxis ay(p, regions.corner<T>(r, 1), regions.corner<T>(r, 3), p.spatial_scale_y, oh);
                double grad[4] = {0, 0, 0, 0};  // x1, y1, x2, y2
                for (int64_t c = 0; c < channels; ++c)
                    for_each_contribution(r, c, ay, ax, [&](const Plane<T>& plane, const AxisSample&,
                                                            const AxisSample&, int64_t iy, int64_t ix, double w) {
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
                    });
                for (int j = 0; j < 4; ++j) out[int64_t(r) * 4 + j] = T(compute_t<T>(grad[j]));
            }
        });
    }
}

template <template <class> class K>
void float_kernel(const KernelArgs& args) {
    const DataType t = args.outputs[0].desc->data_type;
    if (t == DataType::Float16) K<half>::run(args);
    else K<float>::run(args);
}

template <class T> struct AveragePooling { static void run(const KernelArgs& a) { run_average_pooling_typed<T>(a); } };
template <class T> struct RoiAlign { static void run(const KernelArgs& a) { run_roi_align_typed<T>(a); } };
template <class T> struct RoiAlignGrad { static void run(const KernelArgs& a) { run_roi_align_grad_typed<T>(a); } };

void run_max_pooling(const KernelArgs& args) {
    visit_data_type(args.inputs[0].desc->data_type, [&]<class T>() { run_max_pooling_typed<T>(args); });
}

}  // namespace

void register_pooling_kernels(KernelTable& t) {
    add_kernel<AveragePoolingDesc>(t, {float_kernel<AveragePooling>});
    add_kernel<MaxPoolingDesc>(t, {run_max_pooling});
    add_kernel<RoiAlignDesc>(t, {float_kernel<RoiAlign>});
    add_kernel<RoiAlignGradDesc>(t, {float_kernel<RoiAlignGrad>});
}

}  // namespace dml::cpu
