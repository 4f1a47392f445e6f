// Pooling on CUDA: average and max pooling (MAX_POOLING2 with indices), ROI align and its gradient, with the CPU
// kernels' semantics (cpu/kernels/pooling.cpp): one thread per output element, sums and sample coordinates in
// double, the first maximum in scan order wins a tie and NaN never beats a number. ROI align's output gradient
// accumulates in a double workspace by atomics (sums of doubles: the order shows only far below the output's
// precision); its ROI gradient is reduced by one block per region, in a fixed order.
#include "../../core/ops/pooling.h"

#include "group.cuh"

namespace dml::cuda {

namespace {

// Whether v replaces `best` as the maximum (replaces_extreme): a number replaces NaN, NaN replaces nothing.
template <class C>
__device__ __forceinline__ bool beats(C v, C best) {
    if constexpr (std::is_floating_point_v<C>)
        if (isnan(best)) return !isnan(v);
    return v > best;
}

// ---- sliding-window pooling -----------------------------------------------------------------------------------

// The window over three spatial dimensions: a 4-D input pools as a 5-D one with a depth of 1.
struct PoolGeometry {
    int64_t in[3], out[3], stride[3], window[3], dilation[3], start[3], end[3], in_stride[3];
    int64_t channels, n_stride, c_stride;
};

PoolGeometry pool_geometry(const PoolingWindow& w, const TensorDesc& x, const TensorDesc& y) {
    PoolGeometry g{};
    const size_t nd = w.window_size.size(), pad = 3 - nd;
    const Strides st = x.effective_strides();
    for (size_t i = 0; i < 3; ++i) {
        if (i < pad) {
            g.in[i] = g.out[i] = g.stride[i] = g.window[i] = g.dilation[i] = 1;
            continue;
        }
        const size_t s = i - pad;
        g.in[i] = x.sizes[2 + s], g.out[i] = y.sizes[2 + s], g.in_stride[i] = st[2 + s];
        g.stride[i] = w.strides[s], g.window[i] = w.window_size[s], g.dilation[i] = w.dilations[s];
        g.start[i] = w.start_padding[s], g.end[i] = w.end_padding[s];
    }
    g.channels = x.sizes[1], g.n_stride = st[0], g.c_stride = st[1];
    return g;
}

// Calls visit(input offset, packed input index) for each tap of output element `o` (packed) inside the input,
// depth-major as DirectML scans a window; `inside` counts them, `padded` counts the taps inside the padded input
// (include_padding's divisor: taps past the end padding of a ceiling-mode window are not counted).
template <class F>
__device__ void for_each_tap(const PoolGeometry& g, uint64_t o, F&& visit, int64_t& inside, int64_t& padded) {
    int64_t pos[3];
    for (int d = 2; d >= 0; --d) {
        pos[d] = int64_t(o % uint64_t(g.out[d]));
        o /= uint64_t(g.out[d]);
    }
    const int64_t nc = int64_t(o), n = nc / g.channels, c = nc % g.channels;
    const int64_t base = n * g.n_stride + c * g.c_stride, first = nc * g.in[0] * g.in[1] * g.in[2];
    padded = 1;
    for (int d = 0; d < 3; ++d) {
        int64_t count = 0;
        for (int64_t j = 0; j < g.window[d]; ++j) {
            const int64_t at = pos[d] * g.stride[d] + j * g.dilation[d] - g.start[d];
            count += at >= -g.start[d] && at < g.in[d] + g.end[d];
        }
        padded *= count;
    }
    inside = 0;
    auto at = [&](int d, int64_t j) { return pos[d] * g.stride[d] + j * g.dilation[d] - g.start[d]; };
    for (int64_t jz = 0; jz < g.window[0]; ++jz) {
        const int64_t z = at(0, jz);
        if (z < 0 || z >= g.in[0]) continue;
        for (int64_t jy = 0; jy < g.window[1]; ++jy) {
            const int64_t y = at(1, jy);
            if (y < 0 || y >= g.in[1]) continue;
            for (int64_t jx = 0; jx < g.window[2]; ++jx) {
                const int64_t x = at(2, jx);
                if (x < 0 || x >= g.in[2]) continue;
                ++inside;
                visit(base + z * g.in_stride[0] + y * g.in_stride[1] + x * g.in_stride[2],
                      first + (z * g.in[1] + y) * g.in[2] + x);
            }
        }
    }
}

// The builder guarantees a non-zero divisor.
template <class T>
struct AveragePoolOp {
    T* y;
    const T* x;
    PoolGeometry g;
    bool include_padding;

    __device__ void operator()(uint64_t o, const int64_t (&)[1]) const {
        double sum = 0;
        int64_t inside, padded;
        for_each_tap(g, o, [&](int64_t at, int64_t) { sum += double(load(x + at)); }, inside, padded);
        store(y + o, compute_of<T>(sum / double(include_padding ? padded : inside)));
    }
};

// The value is copied as it is; the builder guarantees every window at least one input tap.
template <class T>
struct MaxPoolOp {
    T* y;
    const T* x;
    void* indices;  // null when not asked for
    bool wide_indices;
    PoolGeometry g;

    __device__ void operator()(uint64_t o, const int64_t (&)[1]) const {
        using C = compute_of<T>;
        bool first = true;
        C best{};
        int64_t best_at = 0, best_index = 0, inside, padded;
        for_each_tap(
            g, o,
            [&](int64_t at, int64_t index) {
                const C v = load(x + at);
                if (first || beats(v, best)) best = v, best_at = at, best_index = index, first = false;
            },
            inside, padded);
        y[o] = x[best_at];
        if (!indices) return;
        if (wide_indices) static_cast<uint64_t*>(indices)[o] = uint64_t(best_index);
        else static_cast<uint32_t*>(indices)[o] = uint32_t(best_index);
    }
};

class PoolingKernel : public CudaKernel {
public:
    PoolingKernel(const Node& node, const CudaDevice& device)
        : node_(node),
          average_(dynamic_cast<const AveragePoolingDesc*>(node.desc.get())),
          type_(node.inputs[0]->desc.data_type),
          sm_count_(device.sm_count()),
          ix_(make_indexer<1>(node.outputs[0].sizes, {signed_strides(node.outputs[0])})) {
        const PoolingWindow& w = average_ ? average_->window : static_cast<const MaxPoolingDesc&>(*node.desc).window;
        g_ = pool_geometry(w, node.inputs[0]->desc, node.outputs[0]);
    }

    void enqueue(const LaunchArgs& a) const override {
        if (average_) {
            visit_float_type(type_, [&]<class T>() {
                AveragePoolOp<T> op{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]), g_,
                                    average_->include_padding};
                for_each<1>(ix_, op, sm_count_, a.stream, "average pooling");
            });
            return;
        }
        const bool indices = static_cast<const MaxPoolingDesc&>(*node_.desc).output_indices;
        visit_type(type_, [&]<class T>() {
            MaxPoolOp<T> op{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]),
                            indices ? a.outputs[1] : nullptr,
                            indices && node_.outputs[1].data_type == DataType::UInt64, g_};
            for_each<1>(ix_, op, sm_count_, a.stream, "max pooling");
        });
    }

private:
    const Node& node_;
    const AveragePoolingDesc* average_;  // null for max pooling
    DataType type_;
    int sm_count_;
    Indexer<1> ix_;
    PoolGeometry g_;
};

// ---- ROI align ------------------------------------------------------------------------------------------------

// The sample grid of one region along one axis (cpu/kernels/pooling.cpp's RoiAxis, in the same double
// arithmetic): samples per output element and each sample's input coordinate, pixel centers at integers.
struct RoiAxis {
    int64_t samples;
    double begin, size, scale, shift, denominator, input_offset;

    __device__ RoiAxis(const RoiAlignParams& p, double c1, double c2, double scale_, int64_t out_size)
        : begin(c1 * scale_), size((c2 - c1) * scale_), scale(scale_), input_offset(p.input_pixel_offset) {
        // clamp(size / output size) samples, rounded up; an empty, inverted, NaN or infinite region takes the minimum.
        double want = ceil(size / double(out_size));
        if (!(want >= double(p.minimum_samples_per_output)) || !isfinite(want)) want = p.minimum_samples_per_output;
        samples = int64_t(fmin(want, double(p.maximum_samples_per_output)));
        const double total = double(samples) * double(out_size);
        shift = p.align_regions_to_corners ? 0.0 : -double(p.output_pixel_offset);
        denominator = p.align_regions_to_corners ? total - 1 : total;
    }
    __device__ double fraction(int64_t i) const { return denominator > 0 ? (double(i) + shift) / denominator : 0.0; }
    __device__ double coordinate(int64_t i) const {
        return (denominator > 0 ? begin + (double(i) + shift) * size / denominator : begin) - input_offset;
    }
    __device__ double d_first(int64_t i) const { return scale * (1 - fraction(i)); }
    __device__ double d_second(int64_t i) const { return scale * fraction(i); }
};

// Where a sample reads along one axis: out of bounds outside [-1, size], else two taps (clamped to the edges) and
// the weight of the second; nearest neighbor rounds halves down.
struct AxisSample {
    bool inside;
    int64_t lo, hi;
    double weight;
    bool moves;  // the value depends on the coordinate here (linear, not clamped)
};

__device__ AxisSample axis_sample(double c, int64_t size, InterpolationMode mode) {
    if (!(c >= -1.0 && c <= double(size))) return {false, 0, 0, 0.0, false};
    if (mode == InterpolationMode::NearestNeighbor) {
        const int64_t i = min(max(int64_t(ceil(c - 0.5)), int64_t(0)), size - 1);
        return {true, i, i, 0.0, false};
    }
    if (c <= 0) return {true, 0, 0, 0.0, false};
    const int64_t lo = int64_t(floor(c));
    if (lo >= size - 1) return {true, size - 1, size - 1, 0.0, false};
    return {true, lo, lo + 1, c - double(lo), true};
}

// The region operands: corners [.., rois, 4] of the input's type and a batch index per region.
template <class T>
struct Regions {
    const T* roi;
    const void* batch;
    int64_t roi_step, coord_step, batch_step;
    bool wide_batch;  // UINT64 batch indices

    __device__ double corner(int64_t r, int j) const { return double(load(roi + r * roi_step + j * coord_step)); }
    __device__ uint64_t batch_index(int64_t r) const {
        return wide_batch ? static_cast<const uint64_t*>(batch)[r * batch_step]
                          : static_cast<const uint32_t*>(batch)[r * batch_step];
    }
    __device__ RoiAxis axis_x(const RoiAlignParams& p, int64_t r, int64_t out) const {
        return RoiAxis(p, corner(r, 0), corner(r, 2), p.spatial_scale_x, out);
    }
    __device__ RoiAxis axis_y(const RoiAlignParams& p, int64_t r, int64_t out) const {
        return RoiAxis(p, corner(r, 1), corner(r, 3), p.spatial_scale_y, out);
    }
};

template <class T>
Regions<T> regions(const TensorDesc& roi, const TensorDesc& batch, const void* roi_data, const void* batch_data) {
    const Strides rs = roi.effective_strides(), bs = batch.effective_strides();
    return {static_cast<const T*>(roi_data), batch_data, int64_t(rs.end()[-2]), int64_t(rs.back()),
            int64_t(bs.back()), batch.data_type == DataType::UInt64};
}

// One channel plane of an image, read through its strides.
template <class T>
struct Plane {
    const T* data;
    int64_t sy, sx;
    __device__ double at(int64_t y, int64_t x) const { return double(load(data + y * sy + x * sx)); }
    __device__ double sample(const AxisSample& y, const AxisSample& x) const {
        return (1 - y.weight) * ((1 - x.weight) * at(y.lo, x.lo) + x.weight * at(y.lo, x.hi)) +
               y.weight * ((1 - x.weight) * at(y.hi, x.lo) + x.weight * at(y.hi, x.hi));
    }
};

// f(y sample, x sample, iy, ix) for the samples of output element (oy, ox) of a region, row-major.
template <class F>
__device__ void for_each_sample(const RoiAxis& ay, const RoiAxis& ax, int64_t oy, int64_t ox, int64_t height,
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

// The image dimensions and the input's strides (zero when the image is absent).
struct Image {
    int64_t batches, channels, height, width, stride[4];
};

Image image_of(const TensorDesc& sizes_from, const TensorDesc* strided) {
    Image m{sizes_from.sizes[0], sizes_from.sizes[1], sizes_from.sizes[2], sizes_from.sizes[3], {0, 0, 0, 0}};
    if (strided) {
        const Strides s = strided->effective_strides();
        for (int i = 0; i < 4; ++i) m.stride[i] = s[i];
    }
    return m;
}

// A batch index out of range is undefined in DirectML: no input is read and the output is the out-of-bounds value.
template <class T>
struct RoiAlignOp {
    T* y;
    const T* x;
    Regions<T> regions;
    RoiAlignParams p;
    Image image;
    int64_t out_h, out_w;
    double oob;

    __device__ void operator()(uint64_t i, const int64_t (&)[1]) const {
        const int64_t ox = int64_t(i % uint64_t(out_w)), oy = int64_t(i / uint64_t(out_w) % uint64_t(out_h));
        const int64_t c = int64_t(i / uint64_t(out_w * out_h) % uint64_t(image.channels));
        const int64_t r = int64_t(i / uint64_t(out_w * out_h * image.channels));
        const RoiAxis ax = regions.axis_x(p, r, out_w), ay = regions.axis_y(p, r, out_h);
        const uint64_t n = regions.batch_index(r);
        const bool valid = n < uint64_t(image.batches);
        const Plane<T> plane{x + (valid ? int64_t(n) * image.stride[0] + c * image.stride[1] : 0), image.stride[2],
                             image.stride[3]};
        const bool average = p.reduction == ReduceFunction::Average;
        bool first = true;
        double acc = 0;
        for_each_sample(ay, ax, oy, ox, image.height, image.width, p.interpolation,
                        [&](const AxisSample& sy, const AxisSample& sx, int64_t, int64_t) {
                            const double v = valid && sy.inside && sx.inside ? plane.sample(sy, sx) : oob;
                            if (average) acc += v;
                            else if (first || beats(v, acc)) acc = v;
                            first = false;
                        });
        if (average) acc /= double(ay.samples) * double(ax.samples);
        store(y + i, compute_of<T>(acc));
    }
};

class RoiAlignKernel : public CudaKernel {
public:
    RoiAlignKernel(const Node& node, const CudaDevice& device)
        : node_(node),
          desc_(static_cast<const RoiAlignDesc&>(*node.desc)),
          sm_count_(device.sm_count()),
          ix_(make_indexer<1>(node.outputs[0].sizes, {signed_strides(node.outputs[0])})),
          image_(image_of(node.inputs[0]->desc, &node.inputs[0]->desc)) {}

    void enqueue(const LaunchArgs& a) const override {
        visit_float_type(node_.outputs[0].data_type, [&]<class T>() {
            const TensorDesc& y = node_.outputs[0];
            RoiAlignOp<T> op{static_cast<T*>(a.outputs[0]),
                             static_cast<const T*>(a.inputs[0]),
                             regions<T>(node_.inputs[1]->desc, node_.inputs[2]->desc, a.inputs[1], a.inputs[2]),
                             desc_.params,
                             image_,
                             y.sizes[2],
                             y.sizes[3],
                             desc_.out_of_bounds_input_value};
            for_each<1>(ix_, op, sm_count_, a.stream, "roi align");
        });
    }

private:
    const Node& node_;
    const RoiAlignDesc& desc_;
    int sm_count_;
    Indexer<1> ix_;
    Image image_;
};

// The gradient of ROI align: each output element's gradient flows to the samples it reduced (all of them, weighted
// 1 / count, for AVERAGE; the first largest in-bounds one for MAX), then through the interpolation to the input
// pixels (output gradient) and to the sample coordinates, hence the region corners (ROI gradient).
template <class T>
struct RoiGrad {
    const T* input;  // the forward input; null when absent (AVERAGE output gradient only)
    const T* dy;
    Regions<T> regions;
    RoiAlignParams p;
    Image image;
    int64_t out_h, out_w, dy_stride[4];

    // f(plane, y sample, x sample, iy, ix, gradient) for each sample of element (r, c, oy, ox) that receives
    // gradient; nothing for a region whose batch index is out of range.
    template <class F>
    __device__ void contributions(int64_t r, int64_t c, int64_t oy, int64_t ox, const RoiAxis& ay, const RoiAxis& ax,
                                  F&& f) const {
        const uint64_t n = regions.batch_index(r);
        if (n >= uint64_t(image.batches)) return;
        const Plane<T> plane{input ? input + int64_t(n) * image.stride[0] + c * image.stride[1] : nullptr,
                             image.stride[2], image.stride[3]};
        const double g =
            double(load(dy + r * dy_stride[0] + c * dy_stride[1] + oy * dy_stride[2] + ox * dy_stride[3]));
        if (p.reduction != ReduceFunction::Max) {
            const double w = g / (double(ay.samples) * double(ax.samples));
            for_each_sample(ay, ax, oy, ox, image.height, image.width, p.interpolation,
                            [&](const AxisSample& sy, const AxisSample& sx, int64_t iy, int64_t ix) {
                                if (sy.inside && sx.inside) f(plane, sy, sx, iy, ix, w);
                            });
            return;
        }
        // Out-of-bounds samples have no input to differentiate and take no part in the maximum.
        bool found = false;
        double best = 0;
        AxisSample by{}, bx{};
        int64_t biy = 0, bix = 0;
        for_each_sample(ay, ax, oy, ox, image.height, image.width, p.interpolation,
                        [&](const AxisSample& sy, const AxisSample& sx, int64_t iy, int64_t ix) {
                            if (!sy.inside || !sx.inside) return;
                            const double v = plane.sample(sy, sx);
                            if (!found || beats(v, best)) found = true, best = v, by = sy, bx = sx, biy = iy, bix = ix;
                        });
        if (found) f(plane, by, bx, biy, bix, g);
    }

    // Splits flat index i over [rois, channels, out_h, out_w].
    __device__ void element(uint64_t i, int64_t& r, int64_t& c, int64_t& oy, int64_t& ox) const {
        ox = int64_t(i % uint64_t(out_w)), oy = int64_t(i / uint64_t(out_w) % uint64_t(out_h));
        c = int64_t(i / uint64_t(out_w * out_h) % uint64_t(image.channels));
        r = int64_t(i / uint64_t(out_w * out_h * image.channels));
    }
};

// One thread per element of dy adds its contributions to the double image `acc` ([batches, channels, h, w]).
template <class T>
struct RoiScatterOp {
    RoiGrad<T> grad;
    double* acc;

    __device__ void operator()(uint64_t i, const int64_t (&)[1]) const {
        int64_t r, c, oy, ox;
        grad.element(i, r, c, oy, ox);
        const RoiAxis ax = grad.regions.axis_x(grad.p, r, grad.out_w), ay = grad.regions.axis_y(grad.p, r, grad.out_h);
        const uint64_t n = grad.regions.batch_index(r);
        if (n >= uint64_t(grad.image.batches)) return;  // undefined in DirectML: we touch nothing
        const int64_t w = grad.image.width;
        double* plane = acc + (int64_t(n) * grad.image.channels + c) * grad.image.height * w;
        grad.contributions(r, c, oy, ox, ay, ax,
                           [&](const Plane<T>&, const AxisSample& sy, const AxisSample& sx, int64_t, int64_t, double g) {
                               atomicAdd(plane + sy.lo * w + sx.lo, g * (1 - sy.weight) * (1 - sx.weight));
                               atomicAdd(plane + sy.lo * w + sx.hi, g * (1 - sy.weight) * sx.weight);
                               atomicAdd(plane + sy.hi * w + sx.lo, g * sy.weight * (1 - sx.weight));
                               atomicAdd(plane + sy.hi * w + sx.hi, g * sy.weight * sx.weight);
                           });
    }
};

template <class T>
struct ConvertOp {
    T* y;
    const double* x;
    __device__ void operator()(uint64_t i, const int64_t (&)[1]) const { store(y + i, compute_of<T>(x[i])); }
};

struct Quad {
    double v[4];  // x1, y1, x2, y2
};
__device__ __forceinline__ Quad shuffle_xor(Quad q, int m) {
    Quad r;
#pragma unroll
    for (int j = 0; j < 4; ++j) r.v[j] = __shfl_xor_sync(0xffffffffu, q.v[j], m);
    return r;
}

constexpr int kRoiTeam = 256;

// One block per region sums its four corner gradients over its channels and output elements. The image gradient
// at a sample is the bilinear one whatever the interpolation mode (as DirectML's pseudo-code has it); a clamped
// axis contributes nothing.
template <class T>
__global__ void __launch_bounds__(kRoiTeam) roi_gradient_kernel(RoiGrad<T> grad, int64_t rois, T* out) {
    const uint64_t per_region = uint64_t(grad.image.channels * grad.out_h * grad.out_w);
    for (int64_t r = blockIdx.x; r < rois; r += gridDim.x) {
        const RoiAxis ax = grad.regions.axis_x(grad.p, r, grad.out_w), ay = grad.regions.axis_y(grad.p, r, grad.out_h);
        Quad sum{{0, 0, 0, 0}};
        for (uint64_t e = threadIdx.x; e < per_region; e += kRoiTeam) {
            int64_t rr, c, oy, ox;
            grad.element(uint64_t(r) * per_region + e, rr, c, oy, ox);
            grad.contributions(r, c, oy, ox, ay, ax,
                               [&](const Plane<T>& plane, const AxisSample&, const AxisSample&, int64_t iy,
                                   int64_t ix, double w) {
                                   const int64_t h = grad.image.height, wd = grad.image.width;
                                   const AxisSample ly = axis_sample(ay.coordinate(iy), h, InterpolationMode::Linear);
                                   const AxisSample lx = axis_sample(ax.coordinate(ix), wd, InterpolationMode::Linear);
                                   const double tl = plane.at(ly.lo, lx.lo), tr = plane.at(ly.lo, lx.hi);
                                   const double bl = plane.at(ly.hi, lx.lo), br = plane.at(ly.hi, lx.hi);
                                   const double gx =
                                       lx.moves ? (1 - ly.weight) * (tr - tl) + ly.weight * (br - bl) : 0.0;
                                   const double gy =
                                       ly.moves ? (1 - lx.weight) * (bl - tl) + lx.weight * (br - tr) : 0.0;
                                   sum.v[0] += w * gx * ax.d_first(ix);
                                   sum.v[2] += w * gx * ax.d_second(ix);
                                   sum.v[1] += w * gy * ay.d_first(iy);
                                   sum.v[3] += w * gy * ay.d_second(iy);
                               });
        }
        sum = team_reduce<kRoiTeam>(sum, [](Quad p, Quad q) {
            for (int j = 0; j < 4; ++j) p.v[j] += q.v[j];
            return p;
        });
        if (threadIdx.x < 4) store(out + r * 4 + threadIdx.x, compute_of<T>(sum.v[threadIdx.x]));
    }
}

// Inputs: input (optional), input_gradient, roi, batch_indices. Outputs: the output gradient and/or the ROI
// gradient, in that order.
class RoiAlignGradKernel : public CudaKernel {
public:
    RoiAlignGradKernel(const Node& node, const CudaDevice& device)
        : node_(node),
          desc_(static_cast<const RoiAlignGradDesc&>(*node.desc)),
          sm_count_(device.sm_count()),
          dy_ix_(make_indexer<1>(node.inputs[1]->desc.sizes, {signed_strides(TensorDesc(node.inputs[1]->desc.data_type,
                                                                                        node.inputs[1]->desc.sizes))})) {
        const TensorDesc* input = node.inputs[0] ? &node.inputs[0]->desc : nullptr;
        image_ = image_of(desc_.compute_output_gradient ? node.outputs[0] : *input, input);
        if (desc_.compute_output_gradient)
            dx_ix_ = make_indexer<1>(node.outputs[0].sizes, {signed_strides(node.outputs[0])});
    }

    uint64_t workspace_size() const override {
        return desc_.compute_output_gradient ? dx_ix_.count * sizeof(double) : 0;
    }

    void enqueue(const LaunchArgs& a) const override {
        const TensorDesc& dy = node_.inputs[1]->desc;
        visit_float_type(dy.data_type, [&]<class T>() {
            RoiGrad<T> grad{static_cast<const T*>(a.inputs[0]),
                            static_cast<const T*>(a.inputs[1]),
                            regions<T>(node_.inputs[2]->desc, node_.inputs[3]->desc, a.inputs[2], a.inputs[3]),
                            desc_.params,
                            image_,
                            dy.sizes[2],
                            dy.sizes[3],
                            {}};
            const Strides gs = dy.effective_strides();
            for (int i = 0; i < 4; ++i) grad.dy_stride[i] = gs[i];
            if (desc_.compute_output_gradient) {
                auto* acc = static_cast<double*>(a.workspace);
                check(cudaMemsetAsync(acc, 0, workspace_size(), a.stream), "cudaMemsetAsync");
                for_each<1>(dy_ix_, RoiScatterOp<T>{grad, acc}, sm_count_, a.stream, "roi align gradient");
                for_each<1>(dx_ix_, ConvertOp<T>{static_cast<T*>(a.outputs[0]), acc}, sm_count_, a.stream,
                            "roi align gradient");
            }
            if (desc_.compute_output_roi_gradient) {
                const int64_t rois = dy.sizes[0];
                const unsigned blocks = unsigned(std::min<int64_t>(std::max<int64_t>(rois, 1), int64_t(sm_count_) * 8));
                roi_gradient_kernel<T><<<blocks, kRoiTeam, 0, a.stream>>>(grad, rois,
                                                                            static_cast<T*>(a.outputs.back()));
                check_launch("roi align roi gradient");
            }
        });
    }

private:
    const Node& node_;
    const RoiAlignGradDesc& desc_;
    int sm_count_;
    Indexer<1> dy_ix_, dx_ix_;
    Image image_;
};

template <class K>
std::unique_ptr<CudaKernel> make(const Node& n, CudaDevice& d) {
    return std::make_unique<K>(n, d);
}

}  // namespace

void register_pooling_kernels(KernelTable& t) {
    add_kernel<AveragePoolingDesc>(t, make<PoolingKernel>);
    add_kernel<MaxPoolingDesc>(t, make<PoolingKernel>);
    add_kernel<RoiAlignDesc>(t, make<RoiAlignKernel>);
    add_kernel<RoiAlignGradDesc>(t, make<RoiAlignGradKernel>);
}

}  // namespace dml::cuda
