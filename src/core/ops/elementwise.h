// Element-wise operators (DML_OPERATOR_ELEMENT_WISE_*, DML_OPERATOR_CAST): one desc per shape of operator (unary,
// binary, comparison, ...), the function an enum, so one kernel per desc serves many DirectML operators.
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
    Threshold,    // max(x, parameter)
    ConstantPow,  // pow(x, parameter)
    BitNot, LogicalNot,
};

struct UnaryDesc : OperatorDesc {
    UnaryFunction function;
    std::optional<ScaleBias> scale_bias;  // applied to the input before the function, as DirectML does
    float parameter = 0.0f;               // THRESHOLD's Min, CONSTANT_POW's Exponent (FLOAT in DirectML)
    std::string type_name() const override;
};

enum class RoundingMode { HalvesToNearestEven, TowardZero, TowardInfinity };  // DML_ROUNDING_MODE

struct RoundDesc : OperatorDesc {
    RoundingMode mode;
    std::string type_name() const override { return "DML_OPERATOR_ELEMENT_WISE_ROUND"; }
};

enum class IsInfinityMode { Either, Positive, Negative };  // DML_IS_INFINITY_MODE

// Unary operators whose output type the caller picks (DirectMLX's outputDataType, UINT8 by default).
enum class TypedUnaryFunction { IsNaN, IsInfinity, BitCount };

struct TypedUnaryDesc : OperatorDesc {
    TypedUnaryFunction function;
    IsInfinityMode infinity_mode = IsInfinityMode::Either;  // IsInfinity only
    std::string type_name() const override;
};

enum class BinaryFunction {
    Add, Subtract, Multiply, Divide, Max, Min, ModulusFloor, ModulusTruncate, Mean, DifferenceSquare, ATanYX,
    LogicalAnd, LogicalOr, LogicalXor, BitAnd, BitOr, BitXor, BitShiftLeft, BitShiftRight,
};

struct BinaryDesc : OperatorDesc {
    BinaryFunction function;
    FusedActivation fused;  // Add only: DML_OPERATOR_ELEMENT_WISE_ADD1, else ELEMENT_WISE_ADD (as DirectMLX)
    std::string type_name() const override;
};

// DML_OPERATOR_ELEMENT_WISE_POW: the exponent is a tensor whose type may differ from the input's.
struct PowDesc : OperatorDesc {
    std::optional<ScaleBias> scale_bias;
    std::string type_name() const override { return "DML_OPERATOR_ELEMENT_WISE_POW"; }
};

// DML_OPERATOR_ELEMENT_WISE_LOGICAL_*: 1 where the comparison holds, else 0, in a UINT8 or UINT32 output.
enum class CompareFunction { Equals, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual };

struct CompareDesc : OperatorDesc {
    CompareFunction function;
    std::string type_name() const override;
};

// DML_OPERATOR_ELEMENT_WISE_IF: condition ? a : b, the condition UINT8.
struct IfDesc : OperatorDesc {
    std::string type_name() const override { return "DML_OPERATOR_ELEMENT_WISE_IF"; }
};

struct ClipDesc : OperatorDesc {
    double min, max;  // DML_ELEMENT_WISE_CLIP1 carries min/max in the tensor's type; double holds them all
    std::optional<ScaleBias> scale_bias;
    std::string type_name() const override { return "DML_OPERATOR_ELEMENT_WISE_CLIP1"; }
};

// Inputs: the forward input and the incoming gradient; output: the gradient, 0 where input <= min or >= max.
struct ClipGradDesc : OperatorDesc {
    double min, max;  // DML_ELEMENT_WISE_CLIP_GRAD1 carries them in the tensor's type, like CLIP1
    std::string type_name() const override { return "DML_OPERATOR_ELEMENT_WISE_CLIP_GRAD1"; }
};

struct CastDesc : OperatorDesc {
    std::string type_name() const override { return "DML_OPERATOR_CAST"; }
};

Expression unary(const Expression& x, UnaryFunction f, std::optional<ScaleBias> scale_bias, float parameter = 0.0f);
Expression round(const Expression& x, RoundingMode mode);
Expression typed_unary(const Expression& x, TypedUnaryFunction f, DataType output_type,
                       IsInfinityMode mode = IsInfinityMode::Either);
Expression binary(const Expression& a, const Expression& b, BinaryFunction f, FusedActivation fused = {});
Expression pow(const Expression& x, const Expression& exponent, std::optional<ScaleBias> scale_bias);
Expression compare(const Expression& a, const Expression& b, CompareFunction f, DataType output_type);
Expression if_then_else(const Expression& condition, const Expression& a, const Expression& b);
Expression clip(const Expression& x, double min, double max, std::optional<ScaleBias> scale_bias);
Expression clip_grad(const Expression& x, const Expression& gradient, double min, double max);
Expression cast(const Expression& x, DataType type);

// Python operators with a scalar operand: ride scale/bias where DirectML does, else a broadcast constant.
Expression scalar_constant(const Expression& like, double value);  // a zero-stride view of one element
Expression add_scalar(const Expression& x, double s);
Expression multiply_scalar(const Expression& x, double s);
Expression scalar_subtract(double s, const Expression& x);  // s - x
Expression scalar_divide(double s, const Expression& x);    // s / x, computed as s * recip(x)

}  // namespace dml
