// Convolution as im2col + BLAS GEMM per image and group (forward), or GEMM + col2im (backward / transposed).
// Spatial dimensions are padded to three (leading 1s) so one code path serves 1-D to 3-D. The integer
// convolutions run the same path in double, exactly (every product and partial sum of 8-bit operands is an
// integer below 2^53).
#include "../../core/ops/convolution.h"

#include <algorithm>
#include <array>

#include "../../executor/scalar_math.h"
#include "blas_gemm.h"
#include "kernel.h"
#include "quantization.h"

namespace dml::cpu {

namespace {

struct ConvShape {
    uint32_t batch, in_channels, out_channels, groups;
    std::array<int64_t, 3> in, out, kernel, stride, dilation, pad;  // spatial, padded to 3 with leading 1s / 0s
    bool flip;     // the filter is used flipped spatially (DML_CONVOLUTION_MODE_CONVOLUTION)
    bool forward;  // otherwise backward: the adjoint of the forward convolution

    ConvShape(const ConvolutionWindow& d, bool flip_, bool forward_, const TensorDesc& x, const TensorDesc& w,
              const TensorDesc& y)
        : flip(flip_), forward(forward_) {
        const size_t nd = x.rank() - 2, lead = 3 - nd;
        batch = x.sizes[0], in_channels = x.sizes[1], out_channels = y.sizes[1], groups = d.group_count;
        for (size_t i = 0; i < 3; ++i) {
            bool real = i >= lead;
            size_t j = i - lead;
            in[i] = real ? x.sizes[2 + j] : 1;
            out[i] = real ? y.sizes[2 + j] : 1;
            kernel[i] = real ? w.sizes[2 + j] : 1;
            stride[i] = real ? d.strides[j] : 1;
            dilation[i] = real ? d.dilations[j] : 1;
            pad[i] = real ? d.start_padding[j] : 0;
        }
    }
    ConvShape(const ConvolutionDesc& d, const TensorDesc& x, const TensorDesc& w, const TensorDesc& y)
        : ConvShape(d, d.mode == ConvolutionMode::Convolution, d.direction == ConvolutionDirection::Forward, x, w, y) {}

    uint64_t in_spatial() const { return uint64_t(in[0]) * in[1] * in[2]; }
    uint64_t out_spatial() const { return uint64_t(out[0]) * out[1] * out[2]; }
    uint64_t kernel_size() const { return uint64_t(kernel[0]) * kernel[1] * kernel[2]; }
    bool pointwise() const {
        for (int i = 0; i < 3; ++i)
            if (kernel[i] != 1 || stride[i] != 1 || pad[i] != 0 || in[i] != out[i]) return false;
        return true;
    }
    // Channels on the GEMM's reduced side and on its output side, per group.
    uint32_t group_in() const { return in_channels / groups; }
    uint32_t group_out() const { return out_channels / groups; }
    uint64_t col_elements() const {
        return forward ? uint64_t(group_in()) * kernel_size() * out_spatial()
                       : uint64_t(group_out()) * kernel_size() * in_spatial();
    }
    // Workspace elements: packed filter, one packed image, the column buffer, and an accumulator if asked.
    uint64_t workspace_elements(uint64_t filter_elements, bool accumulator) const {
        return filter_elements + uint64_t(in_channels) * in_spatial() + col_elements() +
               (accumulator ? uint64_t(out_channels) * out_spatial() : 0);
    }
};

// Image n of a strided [N, C, spatial...] tensor as packed [C, spatial] compute-type values f(value, channel).
template <class T, class C, class F>
void gather_packed(const T* src, const TensorDesc& d, uint32_t n, C* dst, F f) {
    Strides s = d.effective_strides();
    const size_t nd = d.rank() - 2;
    std::array<int64_t, 3> sz{1, 1, 1}, st{0, 0, 0};
    for (size_t j = 0; j < nd; ++j) sz[3 - nd + j] = d.sizes[2 + j], st[3 - nd + j] = s[2 + j];
    uint64_t o = 0;
    for (uint32_t c = 0; c < d.sizes[1]; ++c)
        for (int64_t z = 0; z < sz[0]; ++z)
            for (int64_t yy = 0; yy < sz[1]; ++yy)
                for (int64_t xx = 0; xx < sz[2]; ++xx)
                    dst[o++] = f(src[int64_t(n) * s[0] + int64_t(c) * s[1] + z * st[0] + yy * st[1] + xx * st[2]], c);
}

// The filter, packed as [rows = filter dim 0, cols = everything else] of f(value, row), flipped spatially if asked.
template <class T, class C, class F>
void pack_filter(const T* src, const TensorDesc& d, const ConvShape& cs, C* dst, F f) {
    Strides s = d.effective_strides();
    const size_t nd = d.rank() - 2;
    std::array<int64_t, 3> st{0, 0, 0};
    for (size_t j = 0; j < nd; ++j) st[3 - nd + j] = s[2 + j];
    uint64_t o = 0;
    for (uint32_t a = 0; a < d.sizes[0]; ++a)
        for (uint32_t b = 0; b < d.sizes[1]; ++b)
            for (int64_t z = 0; z < cs.kernel[0]; ++z)
                for (int64_t yy = 0; yy < cs.kernel[1]; ++yy)
                    for (int64_t xx = 0; xx < cs.kernel[2]; ++xx) {
                        int64_t kz = cs.flip ? cs.kernel[0] - 1 - z : z, ky = cs.flip ? cs.kernel[1] - 1 - yy : yy,
                                kx = cs.flip ? cs.kernel[2] - 1 - xx : xx;
                        dst[o++] = f(src[int64_t(a) * s[0] + int64_t(b) * s[1] + kz * st[0] + ky * st[1] + kx * st[2]], a);
                    }
}

// The input coordinate read by output `o` through kernel tap `k` in one dimension, or -1 outside.
inline int64_t tap(const ConvShape& cs, int dim, int64_t o, int64_t k) {
    int64_t i = o * cs.stride[dim] + k * cs.dilation[dim] - cs.pad[dim];
    return (i >= 0 && i < cs.in[dim]) ? i : -1;
}

template <class C>
void im2col(const ConvShape& cs, const C* in, C* col, ThreadPool& pool) {
    const uint64_t K = cs.kernel_size(), O = cs.out_spatial();
    pool.parallel_for(uint64_t(cs.group_in()) * K, 8, [&](size_t begin, size_t end) {
        for (size_t row = begin; row < end; ++row) {
            uint64_t c = row / K, k = row % K;
            int64_t kz = k / (cs.kernel[1] * cs.kernel[2]), ky = (k / cs.kernel[2]) % cs.kernel[1], kx = k % cs.kernel[2];
            const C* plane = in + c * cs.in_spatial();
            C* dst = col + row * O;
            for (int64_t oz = 0; oz < cs.out[0]; ++oz) {
                int64_t iz = tap(cs, 0, oz, kz);
                for (int64_t oy = 0; oy < cs.out[1]; ++oy) {
                    int64_t iy = tap(cs, 1, oy, ky);
                    for (int64_t ox = 0; ox < cs.out[2]; ++ox) {
                        int64_t ix = tap(cs, 2, ox, kx);
                        *dst++ = (iz < 0 || iy < 0 || ix < 0) ? C(0) : plane[(iz * cs.in[1] + iy) * cs.in[2] + ix];
                    }
                }
            }
        }
    });
}

// Backward: col [out_channels_per_group * K, in_spatial] scatters into out [out_channels_per_group, out_spatial].
// Contributions landing outside the output (beyond a caller-chosen output size) are dropped.
template <class C>
void col2im(const ConvShape& cs, const C* col, C* out, ThreadPool& pool) {
    const uint64_t K = cs.kernel_size(), I = cs.in_spatial(), O = cs.out_spatial();
    // One output channel per task, so no two tasks add into the same element.
    pool.parallel_for(cs.group_out(), 1, [&](size_t begin, size_t end) {
        for (size_t m = begin; m < end; ++m) {
            C* plane = out + m * O;
            for (uint64_t k = 0; k < K; ++k) {
                int64_t kz = k / (cs.kernel[1] * cs.kernel[2]), ky = (k / cs.kernel[2]) % cs.kernel[1], kx = k % cs.kernel[2];
                const C* src = col + (m * K + k) * I;
                for (int64_t iz = 0; iz < cs.in[0]; ++iz) {
                    int64_t oz = iz * cs.stride[0] + kz * cs.dilation[0] - cs.pad[0];
                    for (int64_t iy = 0; iy < cs.in[1]; ++iy) {
                        int64_t oy = iy * cs.stride[1] + ky * cs.dilation[1] - cs.pad[1];
                        for (int64_t ix = 0; ix < cs.in[2]; ++ix) {
                            int64_t ox = ix * cs.stride[2] + kx * cs.dilation[2] - cs.pad[2];
                            C v = src[(iz * cs.in[1] + iy) * cs.in[2] + ix];
                            if (oz >= 0 && oz < cs.out[0] && oy >= 0 && oy < cs.out[1] && ox >= 0 && ox < cs.out[2])
                                plane[(oz * cs.out[1] + oy) * cs.out[2] + ox] += v;
                        }
                    }
                }
            }
        }
    });
}

// One image: packed input [in_channels, I] and filter (pack_filter's layout) into acc [out_channels, O].
template <class C>
void convolve_image(const ConvShape& cs, const C* filter, const C* input, C* col, C* acc, ThreadPool& pool) {
    const uint64_t I = cs.in_spatial(), O = cs.out_spatial(), K = cs.kernel_size();
    const int gi = int(cs.group_in()), go = int(cs.group_out());
    for (uint32_t g = 0; g < cs.groups; ++g) {
        const C* in_g = input + uint64_t(g) * gi * I;
        C* acc_g = acc + uint64_t(g) * go * O;
        if (cs.forward) {
            // out_g[go, O] = filter_g[go, gi*K] x col[gi*K, O]
            const C* cols = in_g;
            if (!cs.pointwise()) {
                im2col(cs, in_g, col, pool);
                cols = col;
            }
            blas_gemm<C>(false, false, go, int(O), int(gi * K), C(1), filter + uint64_t(g) * go * gi * K, int(gi * K),
                         cols, int(O), C(0), acc_g, int(O));
        } else {
            // col[go*K, I] = filter_g^T [go*K, gi] x in_g[gi, I], then scattered into the output
            blas_gemm<C>(true, false, int(go * K), int(I), gi, C(1), filter + uint64_t(g) * gi * go * K, int(go * K),
                         in_g, int(I), C(0), col, int(I));
            std::fill(acc_g, acc_g + uint64_t(go) * O, C(0));
            col2im(cs, col, acc_g, pool);
        }
    }
}

template <class T>
void run_convolution_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<ConvolutionDesc>();
    const TensorArg &x = args.inputs[0], &w = args.inputs[1], &bias = args.inputs[2], &y = args.outputs[0];
    ConvShape cs(d, *x.desc, *w.desc, *y.desc);
    const uint64_t O = cs.out_spatial();
    C* filter = reinterpret_cast<C*>(args.workspace);
    C* input = filter + w.desc->element_count();
    C* col = input + uint64_t(cs.in_channels) * cs.in_spatial();
    C* acc_f16 = col + cs.col_elements();
    auto widen = [](T v, uint32_t) { return C(v); };
    pack_filter<T, C>(w.as<T>(), *w.desc, cs, filter, widen);
    std::vector<C> bias_values(cs.out_channels, C(0));
    if (bias) {
        Strides bs = bias.desc->effective_strides();
        for (uint32_t m = 0; m < cs.out_channels; ++m) bias_values[m] = C(bias.as<T>()[int64_t(m) * bs[1]]);
    }
    for (uint32_t n = 0; n < cs.batch; ++n) {
        gather_packed<T, C>(x.as<T>(), *x.desc, n, input, widen);
        T* out = y.as<T>() + uint64_t(n) * cs.out_channels * O;
        C* acc = std::is_same_v<T, C> ? reinterpret_cast<C*>(out) : acc_f16;
        convolve_image(cs, filter, input, col, acc, args.pool);
        args.pool.parallel_for(cs.out_channels, 1, [&](size_t b, size_t e) {
            for (size_t m = b; m < e; ++m)
                for (uint64_t i = 0; i < O; ++i)
                    out[m * O + i] = T(apply_activation(d.fused, C(acc[m * O + i] + bias_values[m])));
        });
    }
}

void run_convolution(const KernelArgs& args) {
    visit_data_type(args.outputs[0].desc->data_type, [&]<class T>() {
        if constexpr (std::is_floating_point_v<compute_t<T>>) run_convolution_typed<T>(args);
    });
}

uint64_t convolution_workspace(const Node& node) {
    const auto& d = static_cast<const ConvolutionDesc&>(*node.desc);
    const TensorDesc &x = node.inputs[0]->desc, &w = node.inputs[1]->desc, &y = node.outputs[0];
    ConvShape cs(d, x, w, y);
    uint64_t elems = cs.workspace_elements(w.element_count(), y.data_type == DataType::Float16);
    return elems * (y.data_type == DataType::Float64 ? 8 : 4);
}

// The exact convolution (input - input_zero_point) * (filter - filter_zero_point) of every image, handed to
// store(acc, n) as [out_channels, O] doubles. Inputs input, input_zero_point, filter, filter_zero_point sit at the
// given positions.
template <class Desc, class Store>
void integer_convolution(const KernelArgs& args, size_t x_at, size_t xz_at, size_t w_at, size_t wz_at, Store store) {
    const ConvolutionWindow& d = args.desc<Desc>();
    const TensorArg &x = args.inputs[x_at], &w = args.inputs[w_at], &wz = args.inputs[wz_at];
    ConvShape cs(d, false, true, *x.desc, *w.desc, *args.outputs[0].desc);
    double* filter = reinterpret_cast<double*>(args.workspace);
    double* input = filter + w.desc->element_count();
    double* col = input + uint64_t(cs.in_channels) * cs.in_spatial();
    double* acc = col + cs.col_elements();
    const double input_zero = parameter<double>(args.inputs[xz_at], 1, 0, 0.0);
    std::vector<double> filter_zero(cs.out_channels);
    for (uint32_t m = 0; m < cs.out_channels; ++m) filter_zero[m] = parameter<double>(wz, 1, m, 0.0);
    visit_data_type(w.desc->data_type, [&]<class T>() {
        pack_filter<T, double>(w.as<T>(), *w.desc, cs, filter,
                               [&](T v, uint32_t m) { return double(v) - filter_zero[m]; });
    });
    for (uint32_t n = 0; n < cs.batch; ++n) {
        visit_data_type(x.desc->data_type, [&]<class T>() {
            gather_packed<T, double>(x.as<T>(), *x.desc, n, input,
                                     [&](T v, uint32_t) { return double(v) - input_zero; });
        });
        convolve_image(cs, filter, input, col, acc, args.pool);
        store(acc, n);
    }
}

void run_convolution_integer(const KernelArgs& args) {
    const TensorDesc& y = *args.outputs[0].desc;
    const uint64_t image = y.element_count() / y.sizes[0];
    int32_t* out = args.outputs[0].as<int32_t>();
    integer_convolution<ConvolutionIntegerDesc>(args, 0, 1, 2, 3, [&](const double* acc, uint32_t n) {
        for (uint64_t i = 0; i < image; ++i) out[n * image + i] = wrap_int32(acc[i]);
    });
}

// Inputs: input, input_scale, input_zero_point, filter, filter_scale, filter_zero_point, bias, output_scale,
// output_zero_point. The real value of channel m is (acc + bias[m]) * input_scale * filter_scale[m].
void run_quantized_linear_convolution(const KernelArgs& args) {
    const TensorArg &bias = args.inputs[6], &y = args.outputs[0];
    const uint32_t M = y.desc->sizes[1];
    const uint64_t O = y.desc->element_count() / (uint64_t(y.desc->sizes[0]) * M);
    const double input_scale = parameter<double>(args.inputs[1], 1, 0, 0.0);
    const double out_scale = parameter<double>(args.inputs[7], 1, 0, 0.0);
    const double out_zero = parameter<double>(args.inputs[8], 1, 0, 0.0);
    std::vector<double> scale(M), bias_values(M);
    for (uint32_t m = 0; m < M; ++m) {
        scale[m] = input_scale * parameter<double>(args.inputs[4], 1, m, 0.0);
        bias_values[m] = parameter<double>(bias, 1, m, 0.0);
    }
    visit_data_type(y.desc->data_type, [&]<class Q>() {
        if constexpr (std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t>) {
            Q* out = y.as<Q>();
            integer_convolution<QuantizedLinearConvolutionDesc>(args, 0, 2, 3, 5, [&](const double* acc, uint32_t n) {
                Q* o = out + uint64_t(n) * M * O;
                for (uint32_t m = 0; m < M; ++m)
                    for (uint64_t i = 0; i < O; ++i) {
                        const double real = (acc[m * O + i] + bias_values[m]) * scale[m];
                        o[m * O + i] = quantize_rounded<Q>(real / out_scale, out_zero);
                    }
            });
        }
    });
}

// Integer convolutions: input at 0, filter at `filter_at`.
template <class Desc, size_t filter_at>
uint64_t integer_convolution_workspace(const Node& node) {
    const ConvolutionWindow& d = static_cast<const Desc&>(*node.desc);
    const TensorDesc &x = node.inputs[0]->desc, &w = node.inputs[filter_at]->desc;
    ConvShape cs(d, false, true, x, w, node.outputs[0]);
    return cs.workspace_elements(w.element_count(), true) * sizeof(double);
}

}  // namespace

void register_convolution_kernels(KernelTable& t) {
    add_kernel<ConvolutionDesc>(t, {run_convolution, convolution_workspace});
    add_kernel<ConvolutionIntegerDesc>(
        t, {run_convolution_integer, integer_convolution_workspace<ConvolutionIntegerDesc, 2>});
    add_kernel<QuantizedLinearConvolutionDesc>(
        t, {run_quantized_linear_convolution, integer_convolution_workspace<QuantizedLinearConvolutionDesc, 3>});
}

}  // namespace dml::cpu
