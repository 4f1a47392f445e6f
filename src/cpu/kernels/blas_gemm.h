// The BLAS GEMM in the compute type: float goes to sgemm, double to dgemm (row-major, as cblas_?gemm).
#pragma once
#include <type_traits>

#include "../blas.h"

namespace dml::cpu {

template <class C>
void blas_gemm(bool trans_a, bool trans_b, int m, int n, int k, C alpha, const C* a, int lda, const C* b, int ldb,
               C beta, C* c, int ldc) {
    static_assert(std::is_same_v<C, float> || std::is_same_v<C, double>);
    if constexpr (std::is_same_v<C, double>) blas::dgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    else blas::sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace dml::cpu
