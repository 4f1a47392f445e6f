// GEMM on the BLAS: each [batch, channel] matrix goes to ?gemm directly when one of its dimensions is contiguous;
// float16 is widened into the workspace line by line (large products a K slice at a time), other strided views packed
// there in the compute type. Large float16 and float products take AMX's BF16 tiles instead where the processor has
// them (amx_gemm.h), operands read where they lie. The integer products run as exact double GEMMs (every product and
// partial sum of 8-bit operands is an integer below 2^53).
#include "../../core/ops/gemm.h"

#include <algorithm>

#include "../../executor/scalar_math.h"
#include "amx_gemm.h"
#include "blas_gemm.h"
#include "float16_rows.h"
#include "kernel.h"
#include "quantization.h"
#include "vector_math.h"

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
    uint64_t count() const { return uint64_t(rows) * cols; }
    // Copies the matrix at `base` into packed row-major memory as f(value, row, column).
    template <class T, class C, class F>
    void pack(const T* base, C* dst, F f) const {
        for (uint32_t r = 0; r < rows; ++r)
            for (uint32_t c = 0; c < cols; ++c) dst[uint64_t(r) * cols + c] = f(base[r * row_stride + c * col_stride], r, c);
    }
};

// The matrix where BLAS can read it: in place when one of its dimensions is contiguous, float16 widened into
// `scratch` line by line as stored (F16C), other views packed row by row.
template <class T, class C = compute_t<T>>
BlasMatrix<C> as_blas(const T* base, const MatrixLayout& m, bool trans, C* scratch) {
    // lines: how many, how long, their pitch; flip: stored transposed (its columns contiguous).
    auto lines = [&](uint32_t count, uint32_t length, int64_t pitch, bool flip) -> BlasMatrix<C> {
        const int ld = int(std::max<int64_t>(count == 1 ? length : pitch, 1));
        if constexpr (std::is_same_v<T, C>) {
            return {base, ld, trans != flip};
        } else {
            for (uint32_t i = 0; i < count; ++i) widen(base + i * pitch, scratch + uint64_t(i) * length, length);
            return {scratch, int(length), trans != flip};
        }
    };
    if (m.col_stride == 1 && (m.rows == 1 || m.row_stride >= m.cols)) return lines(m.rows, m.cols, m.row_stride, false);
    if (m.row_stride == 1 && (m.cols == 1 || m.col_stride >= m.rows)) return lines(m.cols, m.rows, m.col_stride, true);
    m.pack(base, scratch, [](T v, uint32_t, uint32_t) { return C(v); });
    return {scratch, int(m.cols), trans};
}

// The K slice [k0, k0 + n) of an operand whose K runs along its stored rows (k_rows) or columns, as BLAS takes it.
template <class T, class C = compute_t<T>>
BlasMatrix<C> k_slice(const T* base, MatrixLayout m, bool trans, bool k_rows, uint32_t k0, uint32_t n, C* scratch) {
    (k_rows ? m.rows : m.cols) = n;
    return as_blas<T>(base + k0 * (k_rows ? m.row_stride : m.col_stride), m, trans, scratch);
}

// float16 operands whose widened copies would outgrow the second-level cache are widened and multiplied a K slice at
// a time (each product adding into the last): the BLAS then packs each slice from that cache, where the whole copy
// would have been written out and read back. 256: a slice of A and of B of 1024 lines fills 2 MiB, and the extra
// passes over the product cost nothing measurable from there up (1024^3: 128 cost 2 %).
constexpr uint32_t kWidenedSlice = 256;
constexpr uint64_t kWidenedBytes = 1 << 20;

// The workspace bytes of the BLAS path: A, B and the product in the compute type.
uint64_t blas_workspace(const TensorDesc& a, const TensorDesc& b, const TensorDesc& y) {
    const uint64_t elems = uint64_t(a.sizes[2]) * a.sizes[3] + uint64_t(b.sizes[2]) * b.sizes[3] +
                           uint64_t(y.sizes[2]) * y.sizes[3];
    return elems * (y.data_type == DataType::Float64 ? 8 : 4);
}

// Whether a float16 or float product of this output takes amx_gemm on a pool of `threads` (its workspace, sized for
// one thread, after the BLAS path's, which it falls back to where the pieces cannot carry an operand).
bool takes_amx(const TensorDesc& y, uint32_t k, size_t threads) {
    const uint32_t m = y.sizes[2], n = y.sizes[3];
    return y.data_type == DataType::Float16   ? amx_gemm_pays<half>(m, n, k, threads)
           : y.data_type == DataType::Float32 ? amx_gemm_pays<float>(m, n, k, threads)
                                              : false;
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
    C* scratch_b = scratch_a + la.count();
    C* scratch_y = scratch_b + lb.count();
    const bool sliced = !std::is_same_v<T, C> && (uint64_t(M) + N) * K * sizeof(C) > kWidenedBytes;
    const uint32_t slice = sliced ? kWidenedSlice : K;
    const bool amx = takes_amx(*y.desc, K, args.pool.size());
    for (uint32_t i0 = 0; i0 < y.desc->sizes[0]; ++i0)
        for (uint32_t i1 = 0; i1 < y.desc->sizes[1]; ++i1) {
            T* out = y.as<T>() + (uint64_t(i0) * y.desc->sizes[1] + i1) * M * N;
            // The BLAS sums into the output where it is of the compute type, unless amx_gemm may have stored some
            // of its rows over C before falling back.
            C* acc = std::is_same_v<T, C> && !amx ? reinterpret_cast<C*>(out) : scratch_y;
            C beta = 0;
            if (c) {
                MatrixLayout lc(*c.desc);
                lc.pack(c.as<T>() + lc.offset(i0, i1), acc, [](T v, uint32_t, uint32_t) { return C(v); });
                beta = C(d.beta);
            }
            if constexpr (std::is_same_v<T, half> || std::is_same_v<T, float>) {
                if (amx) {
                    // A's rows run along its stored rows (columns when transposed), B's columns along its stored
                    // columns (rows when transposed).
                    const AmxOperand<T> A{a.as<T>() + la.offset(i0, i1), ta ? la.col_stride : la.row_stride,
                                          ta ? la.row_stride : la.col_stride};
                    const AmxOperand<T> B{b.as<T>() + lb.offset(i0, i1), tb ? lb.row_stride : lb.col_stride,
                                          tb ? lb.col_stride : lb.row_stride};
                    const auto store_row = [&](uint32_t r, float* p) {
                        if (c || d.alpha != 1)
                            for (uint32_t j = 0; j < N; ++j)
                                p[j] = C(d.alpha) * p[j] + (c ? beta * acc[uint64_t(r) * N + j] : 0);
                        activate_run(d.fused, p, out + uint64_t(r) * N, N);
                    };
                    std::byte* workspace = args.workspace + blas_workspace(*a.desc, *b.desc, *y.desc);
                    if (amx_gemm(args.pool, M, N, K, A, B, workspace, store_row)) continue;
                }
            }
            // K runs along A's stored columns (rows when transposed) and B's stored rows (columns when transposed).
            for (uint32_t k0 = 0; k0 < K; k0 += slice) {
                const uint32_t n = std::min(slice, K - k0);
                auto A = k_slice<T>(a.as<T>() + la.offset(i0, i1), la, ta, ta, k0, n, scratch_a);
                auto B = k_slice<T>(b.as<T>() + lb.offset(i0, i1), lb, tb, !tb, k0, n, scratch_b);
                blas_gemm<C>(args.pool, A.trans, B.trans, int(M), int(N), int(n), C(d.alpha), A.data, A.ld, B.data, B.ld,
                             k0 ? C(1) : beta, acc, int(N));
            }
            if (!d.fused.is_none() || acc != reinterpret_cast<C*>(out)) {
                args.pool.parallel_for(uint64_t(M) * N, 16384,
                                       [&](size_t s, size_t e) { activate_run(d.fused, acc + s, out + s, e - s); });
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
    const auto& d = static_cast<const GemmDesc&>(*node.desc);
    const uint32_t K = d.trans_a == MatrixTransform::Transpose ? a.sizes[2] : a.sizes[3];
    if (!takes_amx(y, K, 1)) return blas_workspace(a, b, y);
    const uint32_t m = y.sizes[2], n = y.sizes[3];
    return blas_workspace(a, b, y) + (y.data_type == DataType::Float16 ? amx_gemm_workspace<half>(m, n, K)
                                                                       : amx_gemm_workspace<float>(m, n, K));
}

// The exact products (A - a_zero_point) x (B - b_zero_point) of every [batch, channel] pair, each handed to
// store(acc, matrix_index) as M x N doubles. Inputs a, a_zero_point, b, b_zero_point sit at the given positions.
template <class Store>
void integer_products(const KernelArgs& args, size_t a_at, size_t za_at, size_t b_at, size_t zb_at, Store store) {
    const TensorArg &a = args.inputs[a_at], &za = args.inputs[za_at], &b = args.inputs[b_at], &zb = args.inputs[zb_at];
    const TensorDesc& y = *args.outputs[0].desc;
    MatrixLayout la(*a.desc), lb(*b.desc);
    const uint32_t M = la.rows, K = la.cols, N = lb.cols;
    double* pa = reinterpret_cast<double*>(args.workspace);
    double* pb = pa + la.count();
    double* acc = pb + lb.count();
    std::vector<double> row_zero(M), column_zero(N);
    for (uint32_t r = 0; r < M; ++r) row_zero[r] = parameter<double>(za, 2, r, 0.0);
    for (uint32_t c = 0; c < N; ++c) column_zero[c] = parameter<double>(zb, 3, c, 0.0);
    for (uint32_t i0 = 0; i0 < y.sizes[0]; ++i0)
        for (uint32_t i1 = 0; i1 < y.sizes[1]; ++i1) {
            visit_data_type(a.desc->data_type, [&]<class T>() {
                la.pack(a.as<T>() + la.offset(i0, i1), pa, [&](T v, uint32_t r, uint32_t) { return double(v) - row_zero[r]; });
            });
            visit_data_type(b.desc->data_type, [&]<class T>() {
                lb.pack(b.as<T>() + lb.offset(i0, i1), pb, [&](T v, uint32_t, uint32_t c) { return double(v) - column_zero[c]; });
            });
            blas_gemm<double>(args.pool, false, false, int(M), int(N), int(K), 1.0, pa, int(K), pb, int(N), 0.0, acc, int(N));
            store(acc, uint64_t(i0) * y.sizes[1] + i1);
        }
}

void run_matrix_multiply_integer(const KernelArgs& args) {
    const TensorDesc& y = *args.outputs[0].desc;
    const uint64_t mn = uint64_t(y.sizes[2]) * y.sizes[3];
    int32_t* out = args.outputs[0].as<int32_t>();
    integer_products(args, 0, 1, 2, 3, [&](const double* acc, uint64_t matrix) {
        for (uint64_t i = 0; i < mn; ++i) out[matrix * mn + i] = wrap_int32(acc[i]);
    });
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, output_scale, output_zero_point. The real product
// is acc * a_scale[row] * b_scale[column]; it is quantized with the output's per-row scale and zero point.
void run_quantized_linear_matrix_multiply(const KernelArgs& args) {
    const TensorArg &as = args.inputs[1], &bs = args.inputs[4], &ys = args.inputs[6], &yz = args.inputs[7];
    const TensorArg& y = args.outputs[0];
    const uint32_t M = y.desc->sizes[2], N = y.desc->sizes[3];
    std::vector<double> a_scale(M), out_scale(M), out_zero(M), b_scale(N);
    for (uint32_t r = 0; r < M; ++r) {
        a_scale[r] = parameter<double>(as, 2, r, 0.0);
        out_scale[r] = parameter<double>(ys, 2, r, 0.0);
        out_zero[r] = parameter<double>(yz, 2, r, 0.0);
    }
    for (uint32_t c = 0; c < N; ++c) b_scale[c] = parameter<double>(bs, 3, c, 0.0);
    visit_data_type(y.desc->data_type, [&]<class Q>() {
        if constexpr (std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t>) {
            Q* out = y.as<Q>();
            integer_products(args, 0, 2, 3, 5, [&](const double* acc, uint64_t matrix) {
                Q* o = out + matrix * M * N;
                for (uint32_t r = 0; r < M; ++r)
                    for (uint32_t c = 0; c < N; ++c) {
                        const double real = acc[uint64_t(r) * N + c] * (a_scale[r] * b_scale[c]);
                        o[uint64_t(r) * N + c] = quantize_rounded<Q>(real / out_scale[r], out_zero[r]);
                    }
            });
        }
    });
}

uint64_t integer_product_workspace(const Node& node) {
    const TensorDesc& y = node.outputs[0];
    const uint64_t M = y.sizes[2], N = y.sizes[3];
    const TensorDesc& a = node.inputs[0]->desc;
    const uint64_t K = a.sizes[3];
    return (M * K + K * N + M * N) * sizeof(double);
}

}  // namespace

void register_gemm_kernels(KernelTable& t) {
    add_kernel<GemmDesc>(t, {run_gemm, gemm_workspace});
    add_kernel<MatrixMultiplyIntegerDesc>(t, {run_matrix_multiply_integer, integer_product_workspace});
    add_kernel<QuantizedLinearMatrixMultiplyDesc>(t, {run_quantized_linear_matrix_multiply, integer_product_workspace});
}

}  // namespace dml::cpu
