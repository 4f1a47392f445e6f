// Integer and quantized GEMM and convolution on CUDA: MATRIX_MULTIPLY_INTEGER, QUANTIZED_LINEAR_MATRIX_MULTIPLY,
// CONVOLUTION_INTEGER and QUANTIZED_LINEAR_CONVOLUTION, with the CPU kernels' semantics (cpu/kernels/gemm.cpp,
// convolution.cpp): the products of (q - zero_point) summed exactly in 64 bits, INT32 outputs wrapping modulo 2^32,
// and requantization in double as cpu/kernels/quantization.h (halves to even, saturation). Direct kernels: a
// shared-memory tiled product, and one thread per output element for the convolutions.
#include "../../core/ops/convolution.h"
#include "../../core/ops/gemm.h"
#include "common.cuh"
#include "factory.h"
#include "kernel.h"

namespace dml::cuda {

namespace {

// Calls f.template operator()<Q>() with the 8-bit integer type stored for `type` (the builders admit no other).
template <class F>
void visit_8bit(DataType type, F&& f) {
    if (type == DataType::Int8) return f.template operator()<int8_t>();
    if (type == DataType::UInt8) return f.template operator()<uint8_t>();
    throw ValueError("expected an INT8 or UINT8 tensor, got " + std::string(data_type_name(type)));
}

// Entry i of a parameter tensor that is per tensor (stride 0) or per entry along one axis; 0 when left out.
template <class T>
struct Param {
    const T* data;
    int64_t stride;
    __device__ __forceinline__ T at(uint32_t i) const { return data ? data[i * stride] : T(0); }
};

// Where input `input` of a node is read as a Param along `axis`, settled at compile.
struct ParamSpec {
    size_t input;
    int64_t stride = 0;
    ParamSpec(const Node& node, size_t input, size_t axis) : input(input) {
        if (const auto& op = node.inputs[input]; op && op->desc.sizes[axis] != 1)
            stride = int64_t(op->desc.effective_strides()[axis]);
    }
    template <class T> Param<T> bind(const LaunchArgs& a) const {
        return {static_cast<const T*>(a.inputs[input]), stride};
    }
};

// The INT32 output: the exact sum wrapped as a 32-bit integer unit would.
struct WrapInt32 {
    __device__ int32_t operator()(int64_t acc, uint32_t, uint32_t) const { return int32_t(uint32_t(uint64_t(acc))); }
};

// A quantized output: real = (acc + bias[i2]) * (scale1[i1] * scale2[i2]), then round(real / out_scale[i1]) +
// out_zero[i1] saturated to Q, in double, in the CPU kernels' order of operations.
template <class Q>
struct Requantize {
    Param<float> scale1, scale2, out_scale;
    Param<Q> out_zero;
    Param<int32_t> bias;
    __device__ Q operator()(int64_t acc, uint32_t i1, uint32_t i2) const {
        using L = ::cuda::std::numeric_limits<Q>;
        const double real = double(acc + bias.at(i2)) * (double(scale1.at(i1)) * double(scale2.at(i2)));
        const double r = rint(real / double(out_scale.at(i1))) + double(out_zero.at(i1));
        if (!(r >= double(L::min()))) return L::min();  // NaN too, as on the CPU
        if (r >= double(L::max())) return L::max();
        return Q(r);
    }
};

// Which inputs hold the requantization parameters, and along which axis they may vary.
struct RequantizeSpec {
    ParamSpec scale1, scale2, out_scale, out_zero;
    std::optional<ParamSpec> bias;
    template <class Q> Requantize<Q> bind(const LaunchArgs& a) const {
        return {scale1.bind<float>(a), scale2.bind<float>(a), out_scale.bind<float>(a), out_zero.bind<Q>(a),
                bias ? bias->bind<int32_t>(a) : Param<int32_t>{nullptr, 0}};
    }
};

// The inputs both families share: 8-bit operands A and B with their zero points, as (a, a_zero_point, b,
// b_zero_point), or quantized (a, a_scale, a_zero_point, b, b_scale, b_zero_point, ...). The output is INT32, or
// 8-bit requantized where the kernel sets `requantize`.
struct IntegerOperands {
    size_t a, b;
    ParamSpec a_zero, b_zero;
    DataType a_type, b_type, y_type;
    std::optional<RequantizeSpec> requantize;

    // The zero points vary, if at all, along `a_axis` of A and `b_axis` of B.
    IntegerOperands(const Node& node, bool quantized, size_t a_axis, size_t b_axis)
        : a(0), b(quantized ? 3 : 2), a_zero(node, quantized ? 2 : 1, a_axis), b_zero(node, quantized ? 5 : 3, b_axis),
          a_type(node.inputs[a]->desc.data_type), b_type(node.inputs[b]->desc.data_type),
          y_type(node.outputs[0].data_type) {}

    // Calls f(a, b, a_zero, b_zero, y, epilogue) with the node's element types.
    template <class F>
    void visit(const LaunchArgs& args, F&& f) const {
        visit_8bit(a_type, [&]<class A>() {
            visit_8bit(b_type, [&]<class B>() {
                const A* av = static_cast<const A*>(args.inputs[a]);
                const B* bv = static_cast<const B*>(args.inputs[b]);
                const Param<A> az = a_zero.bind<A>(args);
                const Param<B> bz = b_zero.bind<B>(args);
                if (!requantize) return f(av, bv, az, bz, static_cast<int32_t*>(args.outputs[0]), WrapInt32{});
                visit_8bit(y_type, [&]<class Q>() {
                    f(av, bv, az, bz, static_cast<Q*>(args.outputs[0]), requantize->bind<Q>(args));
                });
            });
        });
    }
};

// --- matrix products ---------------------------------------------------------------------------------------------

constexpr unsigned kTile = 32;       // output tile kTile x kTile, K walked kTile at a time
constexpr unsigned kTileRows = 8;    // thread rows: each thread computes kTile / kTileRows outputs of a column

// A [B0, B1, M, K] and B [B0, B1, K, N] through their strides; the output [B0, B1, M, N] in tiles.
struct ProductShape {
    int64_t a_stride[4], b_stride[4];
    uint32_t batch1, M, N, K;
    uint64_t batches, row_tiles, column_tiles;
};

// The operands, a's zero point per row and b's per column.
template <class A, class B>
struct IntegerProduct {
    const A* a;
    const B* b;
    Param<A> a_zero;
    Param<B> b_zero;
    ProductShape s;
};

template <class A, class B, class Epilogue, class Y>
__global__ void __launch_bounds__(kTile * kTileRows)
    integer_product_kernel(IntegerProduct<A, B> p, Epilogue epi, Y* y) {
    constexpr unsigned R = kTile / kTileRows;
    const ProductShape& s = p.s;
    __shared__ int32_t as[kTile][kTile + 1], bs[kTile][kTile + 1];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const uint64_t per_batch = s.row_tiles * s.column_tiles;
    for (uint64_t tile = blockIdx.x; tile < s.batches * per_batch; tile += gridDim.x) {
        const uint64_t batch = tile / per_batch, rest = tile % per_batch;
        const uint32_t row0 = uint32_t(rest / s.column_tiles) * kTile, col0 = uint32_t(rest % s.column_tiles) * kTile;
        const uint64_t i0 = batch / s.batch1, i1 = batch % s.batch1;
        const A* a = p.a + int64_t(i0) * s.a_stride[0] + int64_t(i1) * s.a_stride[1];
        const B* b = p.b + int64_t(i0) * s.b_stride[0] + int64_t(i1) * s.b_stride[1];
        int64_t acc[R] = {};
        for (uint32_t k0 = 0; k0 < s.K; k0 += kTile) {
#pragma unroll
            for (unsigned q = 0; q < R; ++q) {
                const unsigned t = ty + kTileRows * q;
                const uint32_t r = row0 + t, ka = k0 + tx, kb = k0 + t, c = col0 + tx;
                as[t][tx] = r < s.M && ka < s.K
                                ? int32_t(a[r * s.a_stride[2] + ka * s.a_stride[3]]) - int32_t(p.a_zero.at(r))
                                : 0;
                bs[t][tx] = kb < s.K && c < s.N
                                ? int32_t(b[kb * s.b_stride[2] + c * s.b_stride[3]]) - int32_t(p.b_zero.at(c))
                                : 0;
            }
            __syncthreads();
            // A tile's kTile products of 8-bit differences (|d| <= 255) stay far inside INT32.
            int32_t part[R] = {};
#pragma unroll 8
            for (unsigned k = 0; k < kTile; ++k) {
                const int32_t bv = bs[k][tx];
#pragma unroll
                for (unsigned q = 0; q < R; ++q) part[q] += as[ty + kTileRows * q][k] * bv;
            }
#pragma unroll
            for (unsigned q = 0; q < R; ++q) acc[q] += part[q];
            __syncthreads();
        }
#pragma unroll
        for (unsigned q = 0; q < R; ++q) {
            const uint32_t r = row0 + ty + kTileRows * q, c = col0 + tx;
            if (r < s.M && c < s.N) y[(batch * s.M + r) * s.N + c] = epi(acc[q], r, c);
        }
    }
}

// MATRIX_MULTIPLY_INTEGER (inputs a, a_zero_point, b, b_zero_point) and QUANTIZED_LINEAR_MATRIX_MULTIPLY (a,
// a_scale, a_zero_point, b, b_scale, b_zero_point, output_scale, output_zero_point).
class IntegerProductKernel : public CudaKernel {
public:
    IntegerProductKernel(const Node& node, const CudaDevice& device, bool quantized)
        : ops_(node, quantized, 2, 3), sm_count_(device.sm_count()) {
        if (quantized)  // the real product's scales per row of A and column of B; the output's per row
            ops_.requantize = RequantizeSpec{{node, 1, 2}, {node, 4, 3}, {node, 6, 2}, {node, 7, 2}, std::nullopt};
        const TensorDesc &a = node.inputs[ops_.a]->desc, &b = node.inputs[ops_.b]->desc, &y = node.outputs[0];
        const std::vector<int64_t> as = signed_strides(a), bs = signed_strides(b);
        for (int d = 0; d < 4; ++d) shape_.a_stride[d] = as[d], shape_.b_stride[d] = bs[d];
        shape_.batch1 = y.sizes[1], shape_.M = y.sizes[2], shape_.N = y.sizes[3], shape_.K = a.sizes[3];
        shape_.batches = uint64_t(y.sizes[0]) * y.sizes[1];
        shape_.row_tiles = (shape_.M + kTile - 1) / kTile;
        shape_.column_tiles = (shape_.N + kTile - 1) / kTile;
    }

    void enqueue(const LaunchArgs& args) const override {
        ops_.visit(args, [&]<class A, class B, class Y, class Epilogue>(const A* a, const B* b, Param<A> a_zero,
                                                                       Param<B> b_zero, Y* y, const Epilogue& epi) {
            launch(IntegerProduct<A, B>{a, b, a_zero, b_zero, shape_}, epi, y, args.stream);
        });
    }

private:
    template <class A, class B, class Epilogue, class Y>
    void launch(const IntegerProduct<A, B>& p, const Epilogue& epi, Y* y, cudaStream_t stream) const {
        const uint64_t tiles = p.s.batches * p.s.row_tiles * p.s.column_tiles;
        const unsigned blocks = unsigned(std::min<uint64_t>(tiles, uint64_t(sm_count_) * 8));
        integer_product_kernel<A, B, Epilogue, Y><<<blocks, dim3(kTile, kTileRows), 0, stream>>>(p, epi, y);
        check_launch("integer matrix product");
    }

    IntegerOperands ops_;
    int sm_count_;
    ProductShape shape_{};
};

// --- convolutions ------------------------------------------------------------------------------------------------

// A forward cross-correlation over two spatial dimensions, as the builders settle it.
struct ConvShape {
    int64_t x_stride[4], w_stride[4];
    uint32_t out_channels, group_in, group_out;
    int64_t in[2], out[2], kernel[2], stride[2], dilation[2], pad[2];
};

// One output element per thread: the sum over the group's input channels and the taps inside the input of
// (x - x_zero) (w - w_zero[m]); padding holds the zero point, so it adds nothing.
template <class X, class W, class Epilogue, class Y>
struct IntegerConvolution {
    Y* y;
    const X* x;
    const W* w;
    Param<X> x_zero;
    Param<W> w_zero;
    Epilogue epi;
    ConvShape s;
    __device__ void operator()(uint64_t e, const int64_t (&)[1]) const {
        const int64_t ox = int64_t(e % uint64_t(s.out[1]));
        uint64_t rest = e / uint64_t(s.out[1]);
        const int64_t oy = int64_t(rest % uint64_t(s.out[0]));
        rest /= uint64_t(s.out[0]);
        const uint32_t m = uint32_t(rest % s.out_channels);
        const uint64_t n = rest / s.out_channels;
        const int32_t xz = int32_t(x_zero.at(0)), wz = int32_t(w_zero.at(m));
        const X* xg = x + int64_t(n) * s.x_stride[0] + int64_t(m / s.group_out) * s.group_in * s.x_stride[1];
        const W* wm = w + int64_t(m) * s.w_stride[0];
        int64_t acc = 0;
        for (uint32_t c = 0; c < s.group_in; ++c)
            for (int64_t ky = 0; ky < s.kernel[0]; ++ky) {
                const int64_t iy = oy * s.stride[0] + ky * s.dilation[0] - s.pad[0];
                if (iy < 0 || iy >= s.in[0]) continue;
                for (int64_t kx = 0; kx < s.kernel[1]; ++kx) {
                    const int64_t ix = ox * s.stride[1] + kx * s.dilation[1] - s.pad[1];
                    if (ix < 0 || ix >= s.in[1]) continue;
                    const int32_t xv = int32_t(xg[c * s.x_stride[1] + iy * s.x_stride[2] + ix * s.x_stride[3]]) - xz;
                    const int32_t wv = int32_t(wm[c * s.w_stride[1] + ky * s.w_stride[2] + kx * s.w_stride[3]]) - wz;
                    acc += xv * wv;
                }
            }
        y[e] = epi(acc, m, m);
    }
};

// CONVOLUTION_INTEGER (inputs input, input_zero_point, filter, filter_zero_point) and QUANTIZED_LINEAR_CONVOLUTION
// (input, input_scale, input_zero_point, filter, filter_scale, filter_zero_point, bias, output_scale,
// output_zero_point). Zero points, scales and bias vary, if at all, along dimension 1 (output channels).
class IntegerConvolutionKernel : public CudaKernel {
public:
    IntegerConvolutionKernel(const Node& node, const CudaDevice& device, bool quantized)
        : ops_(node, quantized, 1, 1), sm_count_(device.sm_count()) {
        if (quantized)  // the real value's scales: the input's (per tensor) and the filter's per output channel
            ops_.requantize =
                RequantizeSpec{{node, 1, 1}, {node, 4, 1}, {node, 7, 1}, {node, 8, 1}, ParamSpec{node, 6, 1}};
        const auto& d = dynamic_cast<const ConvolutionWindow&>(*node.desc);
        const TensorDesc &x = node.inputs[ops_.a]->desc, &w = node.inputs[ops_.b]->desc, &y = node.outputs[0];
        const std::vector<int64_t> xs = signed_strides(x), ws = signed_strides(w);
        for (int i = 0; i < 4; ++i) s_.x_stride[i] = xs[i], s_.w_stride[i] = ws[i];
        s_.out_channels = y.sizes[1];
        s_.group_in = x.sizes[1] / d.group_count, s_.group_out = y.sizes[1] / d.group_count;
        for (int i = 0; i < 2; ++i) {
            s_.in[i] = x.sizes[2 + i], s_.out[i] = y.sizes[2 + i], s_.kernel[i] = w.sizes[2 + i];
            s_.stride[i] = d.strides[i], s_.dilation[i] = d.dilations[i], s_.pad[i] = d.start_padding[i];
        }
        ix_ = make_indexer<1>(y.sizes, {signed_strides(y)});
    }

    void enqueue(const LaunchArgs& args) const override {
        ops_.visit(args, [&]<class X, class W, class Y, class Epilogue>(const X* x, const W* w, Param<X> x_zero,
                                                                       Param<W> w_zero, Y* y, const Epilogue& epi) {
            IntegerConvolution<X, W, Epilogue, Y> f{y, x, w, x_zero, w_zero, epi, s_};
            for_each<1>(ix_, f, sm_count_, args.stream, "integer convolution");
        });
    }

private:
    IntegerOperands ops_;  // A is the input, B the filter
    int sm_count_;
    ConvShape s_{};
    Indexer<1> ix_;  // over the packed output: the offset is the element's index
};

}  // namespace

void register_quantized_kernels(KernelTable& t) {
    add_kernel<MatrixMultiplyIntegerDesc>(t, make_kernel<IntegerProductKernel, false>);
    add_kernel<QuantizedLinearMatrixMultiplyDesc>(t, make_kernel<IntegerProductKernel, true>);
    add_kernel<ConvolutionIntegerDesc>(t, make_kernel<IntegerConvolutionKernel, false>);
    add_kernel<QuantizedLinearConvolutionDesc>(t, make_kernel<IntegerConvolutionKernel, true>);
}

}  // namespace dml::cuda
