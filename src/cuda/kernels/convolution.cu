// Convolution. Forward convolutions with enough channels run as im2col (our kernel) + a cuBLASLt GEMM per group,
// batched over images; 1x1 convolutions of packed inputs skip im2col. Everything else (depthwise and small
// convolutions, backward / transposed ones) runs a direct kernel of ours, one thread per output element, which
// reads every view through its strides. Spatial dimensions are padded to three (leading 1s), as on the CPU.
#include "../../core/ops/convolution.h"

#include <numeric>

#include "../cublaslt.h"
#include "common.cuh"
#include "kernel.h"

namespace dml::cuda {

namespace {

struct ConvGeometry {
    int64_t batch, in_channels, out_channels, group_in, group_out;
    int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
    int64_t x_stride[5], w_stride[5];  // element strides: dimensions 0 and 1, then the three spatial ones
    int64_t bias_stride;
    bool flip;  // DML_CONVOLUTION_MODE_CONVOLUTION flips the filter spatially
    FusedActivation act;

    __host__ __device__ int64_t out_spatial() const { return out[0] * out[1] * out[2]; }
    __host__ __device__ int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
    // The filter tap read for tap `k` of dimension `d`.
    __device__ int64_t tap(int d, int64_t k) const { return flip ? kernel[d] - 1 - k : k; }
};

ConvGeometry geometry(const ConvolutionDesc& d, const TensorDesc& x, const TensorDesc& w, const TensorDesc* bias,
                      const TensorDesc& y) {
    ConvGeometry g{};
    const size_t nd = x.rank() - 2, lead = 3 - nd;
    g.batch = x.sizes[0], g.in_channels = x.sizes[1], g.out_channels = y.sizes[1];
    g.group_in = g.in_channels / d.group_count, g.group_out = g.out_channels / d.group_count;
    Strides xs = x.effective_strides(), ws = w.effective_strides();
    for (int i = 0; i < 2; ++i) g.x_stride[i] = xs[i], g.w_stride[i] = ws[i];
    for (size_t i = 0; i < 3; ++i) {
        const bool real = i >= lead;
        const size_t j = i - lead;
        g.in[i] = real ? x.sizes[2 + j] : 1;
        g.out[i] = real ? y.sizes[2 + j] : 1;
        g.kernel[i] = real ? w.sizes[2 + j] : 1;
        g.stride[i] = real ? d.strides[j] : 1;
        g.dilation[i] = real ? d.dilations[j] : 1;
        g.pad[i] = real ? d.start_padding[j] : 0;
        g.x_stride[2 + i] = real ? xs[2 + j] : 0;
        g.w_stride[2 + i] = real ? ws[2 + j] : 0;
    }
    g.bias_stride = bias ? bias->effective_strides()[1] : 0;
    g.flip = d.mode == ConvolutionMode::Convolution;
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
    ConvGeometry g;

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
    ConvolutionKernel(const Node& node, CudaDevice& device)
        : device_(device), desc_(static_cast<const ConvolutionDesc&>(*node.desc)), type_(node.outputs[0].data_type) {
        if (!known_activation(desc_.fused)) unsupported(node, "with this fused activation");
        const TensorDesc &x = node.inputs[0]->desc, &w = node.inputs[1]->desc, &y = node.outputs[0];
        has_bias_ = node.inputs[2].has_value();
        g_ = geometry(desc_, x, w, has_bias_ ? &node.inputs[2]->desc : nullptr, y);
        output_count_ = y.element_count();
        if (!use_gemm(desc_, g_)) return;

        const size_t es = element_size(type_);
        const int64_t O = g_.out_spatial(), K = g_.kernel_size(), gi = g_.group_in, go = g_.group_out;
        uint64_t ws = 0;
        auto reserve = [&](uint64_t bytes) {
            uint64_t at = ws;
            ws += (bytes + 255) & ~uint64_t(255);
            return at;
        };
        if (!w.is_packed()) {
            filter_pack_ = StridedCopy::packing(device, w);
            filter_offset_ = reserve(w.element_count() * es);
        }
        bool pointwise = x.is_packed() && K == 1;
        for (int d = 0; d < 3; ++d) pointwise = pointwise && g_.stride[d] == 1 && g_.pad[d] == 0 && g_.in[d] == g_.out[d];
        pointwise_ = pointwise;
        // Images per GEMM: all of them, unless their columns pass 512 MiB (then the largest divisor that fits).
        const uint64_t col_per_image = uint64_t(gi * K * O) * es;
        chunk_ = uint32_t(g_.batch);
        if (!pointwise_)
            while (chunk_ > 1 && (uint64_t(chunk_) * col_per_image > (512ull << 20) || g_.batch % chunk_ != 0)) --chunk_;
        if (!pointwise_) col_offset_ = reserve(uint64_t(chunk_) * col_per_image);

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
        matmul_offset_ = reserve(matmul_->workspace_size());
        workspace_ = ws;
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
    ConvGeometry g_;
    bool has_bias_ = false, pointwise_ = false;
    uint64_t output_count_ = 0;
    uint32_t chunk_ = 1;
    std::optional<StridedCopy> filter_pack_;
    std::optional<LtMatmul> matmul_;
    uint64_t filter_offset_ = 0, col_offset_ = 0, matmul_offset_ = 0, workspace_ = 0;
};

}  // namespace

void register_convolution_kernels(KernelTable& t) {
    add_kernel<ConvolutionDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<ConvolutionKernel>(n, d);
    });
}

}  // namespace dml::cuda
