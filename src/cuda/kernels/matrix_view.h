// One [rows, cols] matrix of a GEMM operand (a 4-D view [batch, channel, rows, columns]): its sizes and element
// strides, and the strides of its two batch dimensions. Shared by the cuBLASLt GEMM (gemm.cpp) and the
// matrix-vector kernels (matrix_vector.cu).
#pragma once
#include <cstdint>

#include "../../core/tensor_desc.h"

namespace dml::cuda {

struct MatrixView {
    uint32_t rows = 1, cols = 1;
    int64_t row_stride = 1, col_stride = 1, batch_stride[2] = {};
    MatrixView() = default;
    explicit MatrixView(const TensorDesc& d) {
        Strides s = d.effective_strides();
        rows = d.sizes[2], cols = d.sizes[3];
        row_stride = s[2], col_stride = s[3], batch_stride[0] = s[0], batch_stride[1] = s[1];
    }
};

}  // namespace dml::cuda
