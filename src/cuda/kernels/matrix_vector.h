// GEMM of one output row or column on kernels of ours (matrix_vector.cu).
#pragma once
#include <memory>

#include "kernel.h"

namespace dml::cuda {

// The kernel for a float16 or float32 GEMM node whose output is one row or one column a matrix (M == 1 or N == 1)
// and whose batch dimensions hold at most 65,535 matrices; null for any other GEMM.
std::unique_ptr<CudaKernel> make_matrix_vector_kernel(const Node& node, CudaDevice& device);

}  // namespace dml::cuda
