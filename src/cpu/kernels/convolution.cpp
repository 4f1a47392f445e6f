// Convolution as im2col + BLAS GEMM per image and group (forward), or GEMM + col2im (backward / transposed).
// Spatial dimensions are padded to three (leading 1s) so one code path serves 1-D to 3-D.
#include "../../core/ops/convolution.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "../blas.h"
#include "activation_math.h"
#include "kernel.h"

namespace dml::cpu {

namespace {

struct ConvShape {
    uint32_t batch, in_channels, out_channels, groups;
    std::array<int64_t, 3> in, out, kernel, stride, dilation, pad;  // spatial, padded to 3 with leading 1s / 0s
    bool flip;  // DML_CONVOLUTION_MODE_CONVOLUTION flips the filter spatially
    bool forward;

    ConvShape(const ConvolutionDesc& d, const TensorDesc& x, const TensorDesc& w, const TensorDesc& y) {
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
        flip = d.mode == ConvolutionMode::Convolution;
        forward = d.direction == ConvolutionDirection::Forward;
    }
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
};

// Copies a strided tensor region [count, inner] (two-level) into packed compute-type memory.
template <class T, class C>
void gather_packed(const T* src, const TensorDesc& d, uint32_t n, C* dst) {
    Strides s = d.effective_strides();
    const size_t nd = d.rank() - 2;
    std::array<int64_t, 3> sz{1, 1, 1}, st{0, 0, 0};
    for (size_t j = 0; j < nd; ++j) sz[3 - nd + j] = d.sizes[2 + j], st[3 - nd + j] = s[2 + j];
    uint64_t o = 0;
    for (uint32_t c = 0; c < d.sizes[1]; ++c)
        for (int64_t z = 0; z < sz[0]; ++z)
            for (int64_t yy = 0; yy < sz[1]; ++yy)
                for (int64_t xx = 0; xx < sz[2]; ++xx)
                    dst[o++] = C(src[int64_t(n) * s[0] + int64_t(c) * s[1] + z * st[0] + yy * st[1] + xx * st[2]]);
}

// The filter, packed as [rows = filter dim 0, cols = everything else], flipped spatially if asked.
template <class T, class C>
void pack_filter(const T* src, const TensorDesc& d, const ConvShape& cs, C* dst) {
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
                        dst[o++] = C(src[int64_t(a) * s[0] + int64_t(b) * s[1] + kz * st[0] + ky * st[1] + kx * st[2]]);
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

template <class C>
void gemm_rowmajor(bool ta, int m, int n, int k, const C* a, int lda, const C* b, int ldb, C* c) {
    if constexpr (std::is_same_v<C, double>) blas::dgemm(ta, false, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, n);
    else blas::sgemm(ta, false, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
}

template <class T>
void run_convolution_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<ConvolutionDesc>();
    const TensorArg &x = args.inputs[0], &w = args.inputs[1], &bias = args.inputs[2], &y = args.outputs[0];
    ConvShape cs(d, *x.desc, *w.desc, *y.desc);
    const uint64_t I = cs.in_spatial(), O = cs.out_spatial(), K = cs.kernel_size();
    C* filter = reinterpret_cast<C*>(args.workspace);
    C* input = filter + w.desc->element_count();
    C* col = input + uint64_t(cs.in_channels) * I;
    C* acc_f16 = col + cs.col_elements();
    pack_filter<T, C>(w.as<T>(), *w.desc, cs, filter);
    std::vector<C> bias_values(cs.out_channels, C(0));
    if (bias) {
        Strides bs = bias.desc->effective_strides();
        for (uint32_t m = 0; m < cs.out_channels; ++m) bias_values[m] = C(bias.as<T>()[int64_t(m) * bs[1]]);
    }
    const int gi = int(cs.group_in()), go = int(cs.group_out());
    for (uint32_t n = 0; n < cs.batch; ++n) {
        gather_packed<T, C>(x.as<T>(), *x.desc, n, input);
        T* out = y.as<T>() + uint64_t(n) * cs.out_channels * O;
        C* acc = std::is_same_v<T, C> ? reinterpret_cast<C*>(out) : acc_f16;
        for (uint32_t g = 0; g < cs.groups; ++g) {
            const C* in_g = input + uint64_t(g) * gi * I;
            C* acc_g = acc + uint64_t(g) * go * O;
            if (cs.forward) {
                // out_g[go, O] = filter_g[go, gi*K] x col[gi*K, O]
                const C* cols = in_g;
                if (!cs.pointwise()) {
                    im2col(cs, in_g, col, args.pool);
                    cols = col;
                }
                gemm_rowmajor<C>(false, go, int(O), int(gi * K), filter + uint64_t(g) * go * gi * K, int(gi * K),
                                 cols, int(O), acc_g);
            } else {
                // col[go*K, I] = filter_g^T [go*K, gi] x in_g[gi, I], then scattered into the output
                gemm_rowmajor<C>(true, int(go * K), int(I), gi, filter + uint64_t(g) * gi * go * K, int(go * K), in_g,
                                 int(I), col);
                std::fill(acc_g, acc_g + uint64_t(go) * O, C(0));
                col2im(cs, col, acc_g, args.pool);
            }
        }
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
    uint64_t elems = w.element_count() + uint64_t(cs.in_channels) * cs.in_spatial() + cs.col_elements() +
                     (y.data_type == DataType::Float16 ? uint64_t(cs.out_channels) * cs.out_spatial() : 0);
    return elems * (y.data_type == DataType::Float64 ? 8 : 4);
}

}  // namespace

void register_convolution_kernels(KernelTable& t) {
    add_kernel<ConvolutionDesc>(t, {run_convolution, convolution_workspace});
}

}  // namespace dml::cpu
