// The CPU executor's BLAS: OpenBLAS from the scipy-openblas32 wheel (its symbols are prefixed, so it never clashes
// with another BLAS in the process), loaded on first use from the path in DIRECTML_OPENBLAS, which `import
// directml` sets.
#pragma once

namespace dml::blas {

// Loads the library once (the CPU executor does as it creates a device, so that a missing library or symbol is a
// DeviceError there, not in a kernel); a failed load is tried again by the next call.
void load();

// Row-major C = alpha * op(A) op(B) + beta * C, as cblas_?gemm with CblasRowMajor.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);
void dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
           int ldb, double beta, double* c, int ldc);

}  // namespace dml::blas
