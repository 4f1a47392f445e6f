// DML_OPERATOR_GEMM: alpha * op(A) x op(B) + beta * C over 4-D tensors [batch, channel, rows, columns].
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

Expression gemm(const Expression& a, const Expression& b, const std::optional<Expression>& c, MatrixTransform trans_a,
                MatrixTransform trans_b, float alpha, float beta, FusedActivation fused);

}  // namespace dml
