// DML_OPERATOR_GEMM: alpha * op(A) x op(B) + beta * C over 4-D tensors [batch, channel, rows, columns], and the
// integer matrix products DML_OPERATOR_MATRIX_MULTIPLY_INTEGER and DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY.
#pragma once
#include <optional>

#include "../graph.h"
#include "activation.h"

namespace dml {

enum class MatrixTransform { None, Transpose };

struct GemmDesc : OperatorDesc {
    MatrixTransform trans_a = MatrixTransform::None, trans_b = MatrixTransform::None;
    float alpha = 1.0f, beta = 1.0f;
    FusedActivation fused;
    std::string type_name() const override { return "DML_OPERATOR_GEMM"; }
};

// (A - a_zero_point) x (B - b_zero_point) in INT32, A [B, C, M, K] and B [B, C, K, N] of INT8 / UINT8.
// Inputs in DirectML's order: a, a_zero_point, b, b_zero_point; a zero point is per tensor or per row of A
// ([1, 1, M, 1]) / per column of B ([1, 1, 1, N]).
struct MatrixMultiplyIntegerDesc : OperatorDesc {
    std::string type_name() const override { return "DML_OPERATOR_MATRIX_MULTIPLY_INTEGER"; }
};

// Dequantizes A and B ((q - zero_point) * scale), multiplies, and quantizes the product with the output scale and
// zero point (per tensor or per row). Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, output_scale,
// output_zero_point; scales are FLOAT32.
struct QuantizedLinearMatrixMultiplyDesc : OperatorDesc {
    std::string type_name() const override { return "DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY"; }
};

Expression gemm(const Expression& a, const Expression& b, const std::optional<Expression>& c, MatrixTransform trans_a,
                MatrixTransform trans_b, float alpha, float beta, FusedActivation fused);
Expression matrix_multiply_integer(const Expression& a, const Expression& b,
                                   const std::optional<Expression>& a_zero_point,
                                   const std::optional<Expression>& b_zero_point);
// The output type is the output zero point's; without one, `output_type` (UINT8 when not given).
Expression quantized_linear_matrix_multiply(const Expression& a, const Expression& a_scale, const Expression& b,
                                            const Expression& b_scale, const Expression& output_scale,
                                            const std::optional<Expression>& a_zero_point,
                                            const std::optional<Expression>& b_zero_point,
                                            const std::optional<Expression>& output_zero_point,
                                            std::optional<DataType> output_type);

}  // namespace dml
