// Element-wise operators (DML_OPERATOR_ELEMENT_WISE_*, DML_OPERATOR_CAST): one desc per arity, the function an
// enum, so one kernel per arity serves the whole family.
#pragma once
#include <optional>

#include "../graph.h"
#include "activation.h"

namespace dml {

struct ScaleBias {
    float scale = 1.0f;
    float bias = 0.0f;
};

enum class UnaryFunction {
    Identity, Abs, ACos, ACosh, ASin, ASinh, ATan, ATanh, Ceil, Cos, Cosh, Erf, Exp, Floor, Log, Recip, Sin,
    Sinh, Sqrt, Tan, Tanh, Negate, Sign,
};

struct UnaryDesc : OperatorDesc {
    UnaryFunction function;
    std::optional<ScaleBias> scale_bias;  // applied to the input before the function, as DirectML does
    std::string type_name() const override;
};

enum class BinaryFunction { Add, Subtract, Multiply, Divide, Max, Min, ModulusFloor, ModulusTruncate };

struct BinaryDesc : OperatorDesc {
    BinaryFunction function;
    FusedActivation fused;  // Add only (DML_OPERATOR_ELEMENT_WISE_ADD1)
    std::string type_name() const override;
};

struct ClipDesc : OperatorDesc {
    double min, max;  // DML_ELEMENT_WISE_CLIP1 carries min/max in the tensor's type; double holds them all
    std::optional<ScaleBias> scale_bias;
    std::string type_name() const override { return "DML_OPERATOR_ELEMENT_WISE_CLIP1"; }
};

struct CastDesc : OperatorDesc {
    std::string type_name() const override { return "DML_OPERATOR_CAST"; }
};

Expression unary(const Expression& x, UnaryFunction f, std::optional<ScaleBias> scale_bias);
Expression binary(const Expression& a, const Expression& b, BinaryFunction f, FusedActivation fused = {});
Expression clip(const Expression& x, double min, double max, std::optional<ScaleBias> scale_bias);
Expression cast(const Expression& x, DataType type);

// Python operators with a scalar operand: ride scale/bias where DirectML does, else a broadcast constant.
Expression scalar_constant(const Expression& like, double value);  // a zero-stride view of one element
Expression add_scalar(const Expression& x, double s);
Expression multiply_scalar(const Expression& x, double s);
Expression scalar_subtract(double s, const Expression& x);  // s - x
Expression scalar_divide(double s, const Expression& x);    // s / x, computed as s * recip(x)

}  // namespace dml
