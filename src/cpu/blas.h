// The CPU executor's BLAS: OpenBLAS from the scipy-openblas32 wheel, loaded at import by path (its symbols are
// prefixed, so it never clashes with another BLAS in the process).
#pragma once
#include <string>

namespace dml::blas {

// Loads the library; throws DeviceError if it or a symbol is missing.
void load(const std::string& path);
bool loaded();

// Row-major C = alpha * op(A) op(B) + beta * C, as cblas_?gemm with CblasRowMajor.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);
void dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
           int ldb, double beta, double* c, int ldc);

}  // namespace dml::blas
