// Pooling on CUDA: average and max pooling (MAX_POOLING2 with indices), ROI align and its gradient, with the CPU
// kernels' semantics (cpu/kernels/pooling.cpp): one thread per output element, sums and sample coordinates in
// double, the first maximum in scan order wins a tie and NaN never beats a number. ROI align's output gradient
// accumulates in a double workspace by atomics (sums of doubles: the order shows only far below the output's
// precision); its ROI gradient is reduced by one block per region, in a fixed order.
#include "../../core/ops/pooling.h"

#include "../../executor/pooling_math.h"
#include "factory.h"
#include "group.cuh"

namespace dml::cuda {

namespace {

// ---- sliding-window pooling -----------------------------------------------------------------------------------

// The window (pool_axes: a 4-D input pools as a 5-D one with a depth of 1) and the image's leading strides.
struct PoolGeometry {
    PoolAxes axes;
    int64_t channels, n_stride, c_stride;
};

PoolGeometry pool_geometry(const PoolingWindow& w, const TensorDesc& x, const TensorDesc& y) {
    const Strides st = x.effective_strides();
    return {pool_axes(w, x, y), x.sizes[1], st[0], st[1]};
}

// Calls visit(input offset, packed input index) for each tap of output element `o` (packed) inside the input,
// depth-major as DirectML scans a window; `inside` counts them, `padded` counts the taps inside the padded input.
template <class F>
__device__ void for_each_tap(const PoolGeometry& g, uint64_t o, F&& visit, int64_t& inside, int64_t& padded) {
    const PoolAxis* a = g.axes.axis;
    int64_t pos[3];
    for (int d = 2; d >= 0; --d) {
        pos[d] = int64_t(o % uint64_t(a[d].out));
        o /= uint64_t(a[d].out);
    }
    const int64_t nc = int64_t(o), n = nc / g.channels, c = nc % g.channels;
    const int64_t base = n * g.n_stride + c * g.c_stride, first = nc * g.axes.plane_size();
    padded = a[0].padded_taps(pos[0]) * a[1].padded_taps(pos[1]) * a[2].padded_taps(pos[2]);
    inside = 0;
    for (int64_t jz = 0; jz < a[0].size; ++jz) {
        const int64_t z = a[0].at(pos[0], jz);
        if (!a[0].inside(z)) continue;
        for (int64_t jy = 0; jy < a[1].size; ++jy) {
            const int64_t y = a[1].at(pos[1], jy);
            if (!a[1].inside(y)) continue;
            for (int64_t jx = 0; jx < a[2].size; ++jx) {
                const int64_t x = a[2].at(pos[2], jx);
                if (!a[2].inside(x)) continue;
                ++inside;
                visit(base + g.axes.offset(z, y, x), first + g.axes.index(z, y, x));
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
                if (first || replaces_maximum(v, best)) best = v, best_at = at, best_index = index, first = false;
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
};

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

// Splits flat index i of an output or its gradient over [rois, channels, out_h, out_w].
__device__ void roi_element(uint64_t i, int64_t channels, int64_t out_h, int64_t out_w, int64_t& r, int64_t& c,
                            int64_t& oy, int64_t& ox) {
    ox = int64_t(i % uint64_t(out_w)), oy = int64_t(i / uint64_t(out_w) % uint64_t(out_h));
    c = int64_t(i / uint64_t(out_w * out_h) % uint64_t(channels));
    r = int64_t(i / uint64_t(out_w * out_h * channels));
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
        int64_t r, c, oy, ox;
        roi_element(i, image.channels, out_h, out_w, r, c, oy, ox);
        const RoiAxis ax = regions.axis_x(p, r, out_w), ay = regions.axis_y(p, r, out_h);
        const uint64_t n = regions.batch_index(r);
        const bool valid = n < uint64_t(image.batches);
        const Plane<T> plane{x + (valid ? int64_t(n) * image.stride[0] + c * image.stride[1] : 0), image.stride[2],
                             image.stride[3]};
        const double v = roi_align_value(p, ay, ax, oy, ox, image.height, image.width, plane, valid, oob);
        store(y + i, compute_of<T>(v));
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
        roi_sample_gradients(p, ay, ax, oy, ox, image.height, image.width, plane, g,
                             [&](const AxisSample& sy, const AxisSample& sx, int64_t iy, int64_t ix, double w) {
                                 f(plane, sy, sx, iy, ix, w);
                             });
    }

    __device__ void element(uint64_t i, int64_t& r, int64_t& c, int64_t& oy, int64_t& ox) const {
        roi_element(i, image.channels, out_h, out_w, r, c, oy, ox);
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
                               scatter_bilinear(sy, sx, w, g, [&](int64_t at, double v) { atomicAdd(plane + at, v); });
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

// One block per region sums its four corner gradients over its channels and output elements.
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
                                   add_corner_gradient(ay, ax, iy, ix, grad.image.height, grad.image.width, plane, w,
                                                       sum.v);
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

}  // namespace

void register_pooling_kernels(KernelTable& t) {
    add_kernel<AveragePoolingDesc>(t, make_kernel<PoolingKernel>);
    add_kernel<MaxPoolingDesc>(t, make_kernel<PoolingKernel>);
    add_kernel<RoiAlignDesc>(t, make_kernel<RoiAlignKernel>);
    add_kernel<RoiAlignGradDesc>(t, make_kernel<RoiAlignGradKernel>);
}

}  // namespace dml::cuda
