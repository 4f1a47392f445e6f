// The BLAS GEMM in the compute type: float goes to sgemm, double to dgemm (row-major, as cblas_?gemm). OpenBLAS
// runs single-threaded (blas.cpp): products are split over the executor's own thread pool here, so that one set
// of threads serves every kernel and none spins against another pool's.
#pragma once
#include <type_traits>

#include "../blas.h"
#include "../thread_pool.h"

namespace dml::cpu {

// One BLAS call on the calling thread (for callers already inside a parallel_for, which does not nest).
template <class C>
void gemm_on_thread(bool trans_a, bool trans_b, int m, int n, int k, C alpha, const C* a, int lda, const C* b,
                    int ldb, C beta, C* c, int ldc) {
    static_assert(std::is_same_v<C, float> || std::is_same_v<C, double>);
    if constexpr (std::is_same_v<C, double>) blas::dgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    else blas::sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// C[m, n] = alpha op(A) op(B) + beta C over the pool: the larger of C's rows and columns is cut into one block per
// thread. Small products (under a few MFLOP) stay one call.
template <class C>
void blas_gemm(ThreadPool& pool, bool trans_a, bool trans_b, int m, int n, int k, C alpha, const C* a, int lda,
               const C* b, int ldb, C beta, C* c, int ldc) {
    const size_t parts = pool.size();
    if (parts == 1 || 2.0 * m * n * k < 4e6) return gemm_on_thread(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    const bool by_rows = m >= n;
    const int total = by_rows ? m : n;
    const int block = ((total + int(parts) - 1) / int(parts) + 15) / 16 * 16;  // whole vector widths
    pool.parallel_for(parts, 1, [&](size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p) {
            const int lo = int(p) * block, count = std::min(total, lo + block) - lo;
            if (count <= 0) continue;
            if (by_rows)
                gemm_on_thread(trans_a, trans_b, count, n, k, alpha, trans_a ? a + lo : a + int64_t(lo) * lda, lda, b,
                               ldb, beta, c + int64_t(lo) * ldc, ldc);
            else
                gemm_on_thread(trans_a, trans_b, m, count, k, alpha, a, lda, trans_b ? b + int64_t(lo) * ldb : b + lo,
                               ldb, beta, c + lo, ldc);
        }
    });
}

}  // namespace dml::cpu
