// Convolution. cuDNN (loaded at run time, cudnn.h) runs what it takes: forward convolutions as themselves,
// backward (transposed) ones as its backward data, with the algorithm measured at compile. Where cuDNN is missing
// or refuses a case, forward convolutions with enough channels run as im2col (our kernel) + a cuBLASLt GEMM per
// group, batched over images; 1x1 convolutions of packed inputs skip im2col. Everything else (depthwise and small
// convolutions, backward ones) runs a direct kernel of ours, one thread per output element, which reads every view
// through its strides. Spatial dimensions are padded to three (leading 1s), as on the CPU.
#include "../../core/ops/convolution.h"

#include <array>
#include <climits>
#include <numeric>

#include "../../executor/conv_geometry.h"
#include "../cublaslt.h"
#include "../cudnn.h"
#include "common.cuh"
#include "kernel.h"
#include "workspace.h"

namespace dml::cuda {

namespace {

// The shared geometry (executor/conv_geometry.h) with what the direct kernel also reads: the bias's stride and
// the fused activation.
struct DirectGeometry : ConvGeometry {
    int64_t bias_stride = 0;
    FusedActivation act;
};

DirectGeometry geometry(const ConvolutionDesc& d, const TensorDesc& x, const TensorDesc& w, const TensorDesc* bias,
                        const TensorDesc& y) {
    DirectGeometry g;
    static_cast<ConvGeometry&>(g) = ConvGeometry(d, x, w, y);
    g.bias_stride = bias ? bias->effective_strides()[1] : 0;
    g.act = d.fused;
    return g;
}

// One output element per thread. Forward: y[n, m, o] = sum over the group's input channels c and taps k of
// x[n, c, o * stride + k * dilation - pad] w[m, c, k]. Backward (transposed): the input position i that tap k of
// output o reads satisfies i * stride + k * dilation - pad = o; the filter is [in_channels, out / groups, k...].
template <class T, bool Forward>
struct DirectConv {
    T* y;
    const T* x;
    const T* w;
    const T* bias;
    DirectGeometry g;

    __device__ void operator()(uint64_t i, const int64_t (&)[1]) const {
        using C = compute_of<T>;
        int64_t o[3];
        uint64_t r = i;
        for (int d = 2; d >= 0; --d) {
            o[d] = int64_t(r % uint64_t(g.out[d]));
            r /= uint64_t(g.out[d]);
        }
        const int64_t m = int64_t(r % uint64_t(g.out_channels)), n = int64_t(r / uint64_t(g.out_channels));
        const int64_t group = m / g.group_out;
        C acc = 0;
        for (int64_t c = 0; c < g.group_in; ++c) {
            const int64_t ci = group * g.group_in + c;
            const T* xc = x + n * g.x_stride[0] + ci * g.x_stride[1];
            const T* wc = Forward ? w + m * g.w_stride[0] + c * g.w_stride[1]
                                  : w + ci * g.w_stride[0] + (m - group * g.group_out) * g.w_stride[1];
            for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
                int64_t iz;
                if (!input_position(0, o[0], kz, iz)) continue;
                for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
                    int64_t iy;
                    if (!input_position(1, o[1], ky, iy)) continue;
                    for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                        int64_t ix;
                        if (!input_position(2, o[2], kx, ix)) continue;
                        C xv = load(xc + iz * g.x_stride[2] + iy * g.x_stride[3] + ix * g.x_stride[4]);
                        C wv = load(wc + g.tap(0, kz) * g.w_stride[2] + g.tap(1, ky) * g.w_stride[3] +
                                    g.tap(2, kx) * g.w_stride[4]);
                        acc += xv * wv;
                    }
                }
            }
        }
        if (bias) acc += load(bias + m * g.bias_stride);
        store(y + i, apply_activation(g.act, acc));
    }

    // The input coordinate tap k of output coordinate o reads in dimension d, if any.
    __device__ bool input_position(int d, int64_t o, int64_t k, int64_t& i) const {
        if constexpr (Forward) {
            i = o * g.stride[d] + k * g.dilation[d] - g.pad[d];
            return i >= 0 && i < g.in[d];
        } else {
            int64_t t = o + g.pad[d] - k * g.dilation[d];
            if (t < 0 || t % g.stride[d] != 0) return false;
            i = t / g.stride[d];
            return i < g.in[d];
        }
    }
};

// col[n, c * K + k, o] = x[n0 + n, c0 + c, position of tap k for output o], 0 in the padding; packed
// [images, group_in * K, O]. One row (n, c, k) per blockIdx.x, output positions across threads and blockIdx.y,
// several per thread: a thread splits its first position and its step into coordinates once, in 32 bits (the
// host checked the sizes fit), then steps with carries. Flipping happens here: row k gathers the tap the flipped
// filter pairs with it.
template <class T>
__global__ void __launch_bounds__(kThreads) im2col_kernel(T* col, const T* x, ConvGeometry g, int64_t n0, int64_t c0) {
    const uint32_t O = uint32_t(g.out_spatial()), K = uint32_t(g.kernel_size()), gi = uint32_t(g.group_in);
    const uint32_t row = blockIdx.x, k = row % K, c = row / K % gi, n = row / K / gi;
    const uint32_t k1 = uint32_t(g.kernel[1]), k2 = uint32_t(g.kernel[2]);
    const uint32_t kk[3] = {k / (k1 * k2), k / k2 % k1, k % k2};
    int64_t start[3];
    for (int d = 0; d < 3; ++d) start[d] = g.tap(d, kk[d]) * g.dilation[d] - g.pad[d];
    const T* image = x + (n0 + n) * g.x_stride[0] + (c0 + c) * g.x_stride[1];
    T* out = col + uint64_t(row) * O;
    const uint32_t o1 = uint32_t(g.out[1]), o2 = uint32_t(g.out[2]);
    auto split = [&](uint32_t o, uint32_t (&q)[3]) {
        q[2] = o % o2;
        q[1] = o / o2 % o1;
        q[0] = o / o2 / o1;
    };
    uint32_t o = blockIdx.y * blockDim.x + threadIdx.x;
    const uint32_t step = gridDim.y * blockDim.x;
    uint32_t at[3], by[3];
    split(o, at);
    split(step, by);
    for (; o < O; o += step) {
        int64_t offset = 0;
        bool inside = true;
        for (int d = 0; d < 3; ++d) {
            const int64_t p = int64_t(at[d]) * g.stride[d] + start[d];
            inside = inside && p >= 0 && p < g.in[d];
            offset += p * g.x_stride[2 + d];
        }
        store(out + o, inside ? load(image + offset) : compute_of<T>(0));
        at[2] += by[2];
        const uint32_t carry2 = at[2] >= o2;
        at[2] -= carry2 * o2;
        at[1] += by[1] + carry2;
        const uint32_t carry1 = at[1] >= o1;
        at[1] -= carry1 * o1;
        at[0] += by[0] + carry1;
    }
}

Indexer<1> flat(uint64_t count) {
    Indexer<1> ix;
    ix.count = count;
    ix.strides[0][0] = 1;
    return ix;
}

// The im2col + GEMM route is worth it where the GEMM has some width on both sides.
bool use_gemm(const ConvolutionDesc& d, const ConvGeometry& g) {
    return d.direction == ConvolutionDirection::Forward && g.group_in * g.kernel_size() >= 8 && g.group_out >= 8 &&
           g.out_spatial() < (int64_t(1) << 31) && g.batch * g.group_in * g.kernel_size() < (int64_t(1) << 31);
}

class ConvolutionKernel : public CudaKernel {
public:
    // A 1x1 convolution of a packed input, stride 1 and no padding: one GEMM over the image as it is stored.
    static bool is_pointwise(const TensorDesc& x, const ConvGeometry& g) { return x.is_packed() && g.pointwise(); }
    // Those run as one cuBLASLt GEMM here (deterministic, and on the H200 4x cuDNN's deterministic algorithms).
    static bool prefers_gemm(const Node& node) {
        const auto& d = static_cast<const ConvolutionDesc&>(*node.desc);
        const TensorDesc& x = node.inputs[0]->desc;
        const ConvGeometry g = geometry(d, x, node.inputs[1]->desc,
                                        node.inputs[2] ? &node.inputs[2]->desc : nullptr, node.outputs[0]);
        return use_gemm(d, g) && is_pointwise(x, g);
    }

    ConvolutionKernel(const Node& node, CudaDevice& device)
        : device_(device), desc_(static_cast<const ConvolutionDesc&>(*node.desc)), type_(node.outputs[0].data_type) {
        const TensorDesc &x = node.inputs[0]->desc, &w = node.inputs[1]->desc, &y = node.outputs[0];
        has_bias_ = node.inputs[2].has_value();
        g_ = geometry(desc_, x, w, has_bias_ ? &node.inputs[2]->desc : nullptr, y);
        output_count_ = y.element_count();
        if (!use_gemm(desc_, g_)) return;

        const size_t es = element_size(type_);
        const int64_t O = g_.out_spatial(), K = g_.kernel_size(), gi = g_.group_in, go = g_.group_out;
        WorkspaceLayout ws;
        if (!w.is_packed()) {
            filter_pack_ = StridedCopy::packing(device, w);
            filter_offset_ = ws.reserve(w.element_count() * es);
        }
        pointwise_ = is_pointwise(x, g_);
        // Images per GEMM: all of them, unless their columns pass 512 MiB (then the largest divisor that fits).
        const uint64_t col_per_image = uint64_t(gi * K * O) * es;
        chunk_ = uint32_t(g_.batch);
        if (!pointwise_)
            while (chunk_ > 1 && (uint64_t(chunk_) * col_per_image > (512ull << 20) || g_.batch % chunk_ != 0)) --chunk_;
        if (!pointwise_) col_offset_ = ws.reserve(uint64_t(chunk_) * col_per_image);

        LtProblem p;
        p.type = type_;
        p.alpha = 1;
        p.batch = int32_t(chunk_);
        // Y_g^T [O, go] = col^T [O, gi K] x W_g^T [gi K, go], column-major.
        p.a = LtMatrix{uint64_t(O), uint64_t(gi * K), O, pointwise_ ? g_.in_channels * O : gi * K * O, false};
        p.b = LtMatrix{uint64_t(gi * K), uint64_t(go), gi * K, 0, false};
        p.d = LtMatrix{uint64_t(O), uint64_t(go), O, g_.out_channels * O, false};
        uint64_t align = 256;
        auto fold = [&](uint64_t bytes) { align = std::gcd(align, bytes); };
        fold(filter_offset_);
        fold(col_offset_);
        fold(uint64_t(go * gi * K) * es);            // a group's filter rows
        fold(uint64_t(go * O) * es);                 // a group's output rows
        fold(uint64_t(chunk_ * g_.out_channels * O) * es);
        if (pointwise_) fold(uint64_t(gi * O) * es);  // a group's input channels
        else fold(uint64_t(chunk_) * col_per_image);
        p.alignment = uint32_t(align);
        matmul_.emplace(device.cublaslt(), p);
        matmul_offset_ = ws.reserve(matmul_->workspace_size());
        workspace_ = ws.size;
    }

    uint64_t workspace_size() const override { return workspace_; }

    void enqueue(const LaunchArgs& a) const override {
        visit_float_type(type_, [&]<class T>() {
            const T* x = static_cast<const T*>(a.inputs[0]);
            const T* w = static_cast<const T*>(a.inputs[1]);
            const T* bias = static_cast<const T*>(a.inputs[2]);
            T* y = static_cast<T*>(a.outputs[0]);
            if (!matmul_) {
                if (desc_.direction == ConvolutionDirection::Forward)
                    for_each<1>(flat(output_count_), DirectConv<T, true>{y, x, w, bias, g_}, device_.sm_count(),
                                a.stream, "convolution");
                else
                    for_each<1>(flat(output_count_), DirectConv<T, false>{y, x, w, bias, g_}, device_.sm_count(),
                                a.stream, "convolution");
                return;
            }
            auto* ws = static_cast<std::byte*>(a.workspace);
            if (filter_pack_) {
                filter_pack_->enqueue(ws + filter_offset_, w, a.stream);
                w = reinterpret_cast<const T*>(ws + filter_offset_);
            }
            T* col = reinterpret_cast<T*>(ws + col_offset_);
            const int64_t O = g_.out_spatial(), K = g_.kernel_size(), gi = g_.group_in, go = g_.group_out;
            for (int64_t n0 = 0; n0 < g_.batch; n0 += chunk_)
                for (uint32_t group = 0; group < desc_.group_count; ++group) {
                    const T* cols = x + n0 * g_.in_channels * O + int64_t(group) * gi * O;
                    if (!pointwise_) {
                        // About 8 positions per thread, the row's decomposition amortized over them.
                        const unsigned threads = unsigned(std::min<int64_t>(kThreads, (O + 31) / 32 * 32));
                        const dim3 grid(unsigned(chunk_ * gi * K),
                                        unsigned(std::clamp<int64_t>(O / (threads * 8), 1, 65535)));
                        im2col_kernel<T><<<grid, threads, 0, a.stream>>>(col, x, g_, n0, int64_t(group) * gi);
                        check_launch("im2col");
                        cols = col;
                    }
                    matmul_->enqueue(cols, w + int64_t(group) * go * gi * K, nullptr,
                                     y + (n0 * g_.out_channels + int64_t(group) * go) * O, nullptr,
                                     ws + matmul_offset_, a.stream);
                }
            if (has_bias_ || (!g_.act.is_none() && g_.act.function != ActivationFunction::Identity))
                enqueue_bias_activation(device_, type_, y, uint64_t(g_.batch), uint64_t(g_.out_channels), uint64_t(O),
                                        bias, g_.bias_stride, g_.act, a.stream);
        });
    }

private:
    const CudaDevice& device_;
    const ConvolutionDesc& desc_;
    DataType type_;
    DirectGeometry g_;
    bool has_bias_ = false, pointwise_ = false;
    uint64_t output_count_ = 0;
    uint32_t chunk_ = 1;
    std::optional<StridedCopy> filter_pack_;
    std::optional<LtMatmul> matmul_;
    uint64_t filter_offset_ = 0, col_offset_ = 0, matmul_offset_ = 0, workspace_ = 0;
};

// --- cuDNN ---------------------------------------------------------------------------------------------------

// A DirectML [N, C, spatial...] view in cuDNN's terms: 4-D or 5-D, a 1-D convolution getting a height of 1.
struct Lifted {
    int rank = 0;
    int64_t dims[5] = {}, strides[5] = {};

    explicit Lifted(const TensorDesc& t) {
        const Strides s = t.effective_strides();
        const bool one_d = t.rank() == 3;
        rank = one_d ? 4 : int(t.rank());
        for (int i = 0, j = 0; i < rank; ++i) {
            const bool inserted = one_d && i == 2;
            dims[i] = inserted ? 1 : t.sizes[j];
            strides[i] = inserted ? 0 : s[j];
            j += !inserted;
        }
    }
    Sizes sizes() const { return Sizes(dims, dims + rank); }
    std::vector<int64_t> stride_list() const { return std::vector<int64_t>(strides, strides + rank); }
};

using DimStrides = std::array<int64_t, 5>;

// The strides of `t` where its elements lie in NCHW order (or NHWC: channels innermost) without overlapping, gaps
// allowed, dimensions of size 1 given the stride a packed tensor would have; nullopt where they do not (zero
// strides, another order) or pass int. `packed`: the packed strides in that order instead.
std::optional<DimStrides> layout_strides(const Lifted& t, bool nhwc, bool packed) {
    DimStrides s{};
    int64_t span = 1;  // elements spanned by the dimensions inside
    for (int i = t.rank - 1; i >= 0; --i) {
        const int d = !nhwc || i == 0 ? i : i == t.rank - 1 ? 1 : i + 1;
        if (t.dims[d] == 1) {
            s[d] = span;
            continue;
        }
        s[d] = packed ? span : t.strides[d];
        if (s[d] < span) return std::nullopt;
        span = s[d] * t.dims[d];
        if (span > INT_MAX) return std::nullopt;
    }
    return s;
}

DnnTensor dnn_tensor(const Lifted& t, const DimStrides& s) {
    DnnTensor d;
    d.rank = t.rank;
    for (int i = 0; i < t.rank; ++i) d.dims[i] = int(t.dims[i]), d.strides[i] = int(s[i]);
    return d;
}

// The convolution through cuDNN, the input, filter and output in one layout: NHWC where the input is stored so,
// else NCHW. An NCHW input goes to cuDNN as it is, not transposed by us: cuDNN's NCHW float16 path (which
// transposes inside where its tensor-core kernels want NHWC) is the one PyTorch's conv2d takes for NCHW tensors,
// and two transposes of ours would cost about as much. The workspace holds what cuDNN cannot read in place: the
// filter packed in that layout, the input packed (in neither layout, or padded with zeros where its two ends
// differ), and the NHWC result, transposed into the NCHW output.
class CudnnConvolution : public CudaKernel {
public:
    // Null where cuDNN is missing or does not take this convolution.
    static std::unique_ptr<CudaKernel> create(const Node& node, CudaDevice& device) {
        std::unique_ptr<CudnnConvolution> k(new CudnnConvolution(node, device));
        if (!k->plan(node, device)) return nullptr;
        return k;
    }

    uint64_t workspace_size() const override { return workspace_; }

    void enqueue(const LaunchArgs& a) const override {
        auto* ws = static_cast<std::byte*>(a.workspace);
        const void* x = a.inputs[0];
        const void* w = a.inputs[1];
        if (x_copy_) {
            if (x_zero_bytes_) check(cudaMemsetAsync(ws + x_offset_, 0, x_zero_bytes_, a.stream), "cudaMemsetAsync");
            x_copy_->enqueue(ws + x_offset_, x, a.stream);
            x = ws + x_offset_;
        }
        if (w_pack_) {
            w_pack_->enqueue(ws + w_offset_, w, a.stream);
            w = ws + w_offset_;
        }
        void* y = y_unpack_ ? ws + y_offset_ : a.outputs[0];
        dnn_->enqueue(x, w, y, a.inputs[2], ws + dnn_offset_, a.stream);
        if (y_unpack_) y_unpack_->enqueue(a.outputs[0], y, a.stream);
    }

private:
    CudnnConvolution(const Node& node, const CudaDevice& device)
        : device_(device), type_(node.outputs[0].data_type),
          act_(static_cast<const ConvolutionDesc&>(*node.desc).fused) {}

    bool plan(const Node& node, CudaDevice& device) {
        const auto& d = static_cast<const ConvolutionDesc&>(*node.desc);
        const TensorDesc &xd = node.inputs[0]->desc, &wd = node.inputs[1]->desc, &yd = node.outputs[0];
        const Lifted x(xd), w(wd), y(yd);
        const size_t es = element_size(type_);
        WorkspaceLayout ws;

        DnnConvProblem p;
        p.type = type_;
        p.backward = d.direction == ConvolutionDirection::Backward;
        p.flip = d.mode == ConvolutionMode::Convolution;
        p.groups = int(d.group_count);
        const int spatial = x.rank - 2, lead = spatial - int(xd.rank() - 2);
        const Lifted& conv_in = p.backward ? y : x;
        const Lifted& conv_out = p.backward ? x : y;
        int64_t start[3] = {}, end[3] = {};
        bool pad_copy = false;
        for (int i = 0; i < spatial; ++i) {
            const int j = i - lead;
            start[i] = j < 0 ? 0 : d.start_padding[j], end[i] = j < 0 ? 0 : d.end_padding[j];
            const int64_t stride = j < 0 ? 1 : d.strides[j], dilation = j < 0 ? 1 : d.dilations[j];
            if (start[i] > INT_MAX || stride > INT_MAX || dilation > INT_MAX) return false;
            p.pad[i] = int(start[i]), p.stride[i] = int(stride), p.dilation[i] = int(dilation);
            // cuDNN pads both ends by one amount and sizes its output from it. With the start padding the
            // positions read are ours; the size must be ours too.
            const int64_t room = conv_in.dims[2 + i] + 2 * start[i] - (w.dims[2 + i] - 1) * dilation - 1;
            pad_copy = pad_copy || room < 0 || room / stride + 1 != conv_out.dims[2 + i];
        }
        // Else a forward convolution reads a copy of x padded with zeros, cuDNN padding nothing; a backward one is
        // left to our kernels.
        Lifted padded = x;
        if (pad_copy) {
            if (p.backward) return false;
            for (int i = 0; i < spatial; ++i) padded.dims[2 + i] += start[i] + end[i], p.pad[i] = 0;
        }

        const bool nhwc = !layout_strides(x, false, false) && layout_strides(x, true, false);
        std::optional<DimStrides> xs = pad_copy ? std::nullopt : layout_strides(x, nhwc, false);
        if (!xs) {
            // A copy of x, packed (NHWC where x is stored so, else NCHW) and zero-padded where asked.
            if (!(xs = layout_strides(padded, nhwc, true))) return false;
            uint64_t count = 1;
            int64_t at = 0;
            for (int i = 0; i < padded.rank; ++i) count *= uint64_t(padded.dims[i]);
            for (int i = 0; i < spatial; ++i) at += start[i] * (*xs)[2 + i];
            x_copy_.emplace(device, x.sizes(), es, std::vector<int64_t>(xs->begin(), xs->begin() + x.rank), at,
                            x.stride_list(), 0);
            x_offset_ = ws.reserve(count * es);
            if (pad_copy) x_zero_bytes_ = count * es;
        }
        const std::optional<DimStrides> wp = layout_strides(w, nhwc, true), yp = layout_strides(y, nhwc, true);
        if (!wp || !yp) return false;
        if (layout_strides(w, nhwc, false) != wp) {
            w_pack_.emplace(device, w.sizes(), es, std::vector<int64_t>(wp->begin(), wp->begin() + w.rank), 0,
                            w.stride_list(), 0);
            w_offset_ = ws.reserve(wd.element_count() * es);
        }
        if (nhwc) {
            y_unpack_.emplace(device, y.sizes(), es, y.stride_list(), 0,
                              std::vector<int64_t>(yp->begin(), yp->begin() + y.rank), 0);
            y_offset_ = ws.reserve(yd.element_count() * es);
        }
        p.nhwc = nhwc;
        p.x = dnn_tensor(padded, *xs);
        p.y = dnn_tensor(y, *yp);
        for (int i = 0; i < w.rank; ++i) p.filter[i] = int(w.dims[i]);

        // The bias and activation: inside cuDNN's fused call where it takes them (forward, a packed bias, ReLU
        // or none) and measures faster, else our epilogue over y as [outer, channels, inner].
        const bool has_bias = node.inputs[2].has_value();
        const bool activation = !act_.is_none() && act_.function != ActivationFunction::Identity;
        bias_stride_ = has_bias ? int64_t(node.inputs[2]->desc.effective_strides()[1]) : 0;
        channels_ = uint64_t(y.dims[1]);
        uint64_t image = 1;
        for (int i = 2; i < y.rank; ++i) image *= uint64_t(y.dims[i]);
        outer_ = uint64_t(y.dims[0]) * (nhwc ? image : 1);
        inner_ = nhwc ? 1 : image;
        p.fuse_bias = !p.backward && has_bias && (bias_stride_ == 1 || channels_ == 1) &&
                      (!activation || act_.function == ActivationFunction::Relu);
        p.fuse_relu = p.fuse_bias && activation;
        DnnEpilogue epilogue;
        if (has_bias || activation)
            epilogue = [this](void* out, const void* bias, cudaStream_t stream) {
                enqueue_bias_activation(device_, type_, out, outer_, channels_, inner_, bias, bias_stride_, act_,
                                        stream);
            };
        dnn_ = DnnConvolution::create(device, p, std::move(epilogue));
        if (!dnn_) return false;
        dnn_offset_ = ws.reserve(dnn_->workspace_size());
        workspace_ = ws.size;
        return true;
    }

    const CudaDevice& device_;
    DataType type_;
    FusedActivation act_;
    int64_t bias_stride_ = 0;
    uint64_t outer_ = 0, channels_ = 0, inner_ = 0;
    std::optional<StridedCopy> x_copy_, w_pack_, y_unpack_;
    std::unique_ptr<DnnConvolution> dnn_;
    uint64_t x_offset_ = 0, x_zero_bytes_ = 0, w_offset_ = 0, y_offset_ = 0, dnn_offset_ = 0, workspace_ = 0;
};

}  // namespace

void register_convolution_kernels(KernelTable& t) {
    add_kernel<ConvolutionDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        if (!ConvolutionKernel::prefers_gemm(n))
            if (auto k = CudnnConvolution::create(n, d)) return k;
        return std::make_unique<ConvolutionKernel>(n, d);
    });
}

}  // namespace dml::cuda
