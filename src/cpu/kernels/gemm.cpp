// GEMM on the BLAS: each [batch, channel] matrix goes to ?gemm directly when one of its dimensions is contiguous;
// other strided views and float16 are packed into the workspace in the compute type first.
#include "../../core/ops/gemm.h"

#include <algorithm>

#include "../blas.h"
#include "activation_math.h"
#include "kernel.h"

namespace dml::cpu {

namespace {

// A matrix as BLAS takes it: base pointer, leading dimension and whether it is stored transposed.
template <class C>
struct BlasMatrix {
    const C* data;
    int ld;
    bool trans;
};

// Sizes and element strides of one [rows, cols] matrix inside a 4-D tensor.
struct MatrixLayout {
    uint32_t rows, cols;
    int64_t row_stride, col_stride, batch_stride[2];
    explicit MatrixLayout(const TensorDesc& d) {
        Strides s = d.effective_strides();
        rows = d.sizes[2], cols = d.sizes[3];
        row_stride = s[2], col_stride = s[3], batch_stride[0] = s[0], batch_stride[1] = s[1];
    }
    int64_t offset(uint32_t b, uint32_t c) const { return b * batch_stride[0] + c * batch_stride[1]; }
};

template <class T, class C = compute_t<T>>
BlasMatrix<C> as_blas(const T* base, const MatrixLayout& m, bool trans, C* scratch) {
    if constexpr (std::is_same_v<T, C>) {
        if (m.col_stride == 1 && (m.rows == 1 || m.row_stride >= m.cols))
            return {base, int(std::max<int64_t>(m.rows == 1 ? m.cols : m.row_stride, 1)), trans};
        if (m.row_stride == 1 && (m.cols == 1 || m.col_stride >= m.rows))
            return {base, int(std::max<int64_t>(m.cols == 1 ? m.rows : m.col_stride, 1)), !trans};
    }
    for (uint32_t r = 0; r < m.rows; ++r)
        for (uint32_t c = 0; c < m.cols; ++c) scratch[r * m.cols + c] = C(base[r * m.row_stride + c * m.col_stride]);
    return {scratch, int(m.cols), trans};
}

template <class C>
void blas_gemm(bool ta, bool tb, int m, int n, int k, C alpha, BlasMatrix<C> a, BlasMatrix<C> b, C beta, C* c) {
    if constexpr (std::is_same_v<C, double>) blas::dgemm(ta, tb, m, n, k, alpha, a.data, a.ld, b.data, b.ld, beta, c, n);
    else blas::sgemm(ta, tb, m, n, k, alpha, a.data, a.ld, b.data, b.ld, beta, c, n);
}

template <class T>
void run_gemm_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<GemmDesc>();
    const TensorArg &a = args.inputs[0], &b = args.inputs[1], &c = args.inputs[2], &y = args.outputs[0];
    MatrixLayout la(*a.desc), lb(*b.desc);
    const bool ta = d.trans_a == MatrixTransform::Transpose, tb = d.trans_b == MatrixTransform::Transpose;
    const uint32_t M = y.desc->sizes[2], N = y.desc->sizes[3], K = ta ? la.rows : la.cols;
    C* scratch_a = reinterpret_cast<C*>(args.workspace);
    C* scratch_b = scratch_a + uint64_t(la.rows) * la.cols;
    C* scratch_y = scratch_b + uint64_t(lb.rows) * lb.cols;
    for (uint32_t i0 = 0; i0 < y.desc->sizes[0]; ++i0)
        for (uint32_t i1 = 0; i1 < y.desc->sizes[1]; ++i1) {
            T* out = y.as<T>() + (uint64_t(i0) * y.desc->sizes[1] + i1) * M * N;
            C* acc = std::is_same_v<T, C> ? reinterpret_cast<C*>(out) : scratch_y;
            C beta = 0;
            if (c) {
                MatrixLayout lc(*c.desc);
                const T* cb = c.as<T>() + lc.offset(i0, i1);
                for (uint32_t r = 0; r < M; ++r)
                    for (uint32_t col = 0; col < N; ++col)
                        acc[r * N + col] = C(cb[r * lc.row_stride + col * lc.col_stride]);
                beta = C(d.beta);
            }
            auto A = as_blas<T>(a.as<T>() + la.offset(i0, i1), la, ta, scratch_a);
            auto B = as_blas<T>(b.as<T>() + lb.offset(i0, i1), lb, tb, scratch_b);
            blas_gemm<C>(A.trans, B.trans, int(M), int(N), int(K), C(d.alpha), A, B, beta, acc);
            if (!d.fused.is_none() || !std::is_same_v<T, C>) {
                args.pool.parallel_for(uint64_t(M) * N, 16384, [&](size_t s, size_t e) {
                    for (size_t i = s; i < e; ++i) out[i] = T(apply_activation(d.fused, acc[i]));
                });
            }
        }
}

void run_gemm(const KernelArgs& args) {
    visit_data_type(args.outputs[0].desc->data_type, [&]<class T>() {
        if constexpr (std::is_floating_point_v<compute_t<T>>) run_gemm_typed<T>(args);
    });
}

uint64_t gemm_workspace(const Node& node) {
    const TensorDesc &a = node.inputs[0]->desc, &b = node.inputs[1]->desc, &y = node.outputs[0];
    uint64_t elems = uint64_t(a.sizes[2]) * a.sizes[3] + uint64_t(b.sizes[2]) * b.sizes[3] +
                     uint64_t(y.sizes[2]) * y.sizes[3];
    return elems * (y.data_type == DataType::Float64 ? 8 : 4);
}

}  // namespace

void register_gemm_kernels(KernelTable& t) { add_kernel<GemmDesc>(t, {run_gemm, gemm_workspace}); }

}  // namespace dml::cpu
