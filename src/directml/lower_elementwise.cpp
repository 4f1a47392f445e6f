// Element-wise operators: DML_ELEMENT_WISE_*_OPERATOR_DESC and DML_CAST_OPERATOR_DESC.
#include <cmath>

#include "../core/errors.h"
#include "../core/ops/elementwise.h"
#include "lowering.h"

namespace dml::directml {

namespace {

struct UnaryInfo {
    DML_OPERATOR_TYPE type;
    bool scale_bias;  // whether DirectML's description has a ScaleBias
};

UnaryInfo unary_info(UnaryFunction f) {
    switch (f) {
        case UnaryFunction::Identity: return {DML_OPERATOR_ELEMENT_WISE_IDENTITY, true};
        case UnaryFunction::Abs: return {DML_OPERATOR_ELEMENT_WISE_ABS, true};
        case UnaryFunction::ACos: return {DML_OPERATOR_ELEMENT_WISE_ACOS, true};
        case UnaryFunction::ACosh: return {DML_OPERATOR_ELEMENT_WISE_ACOSH, true};
        case UnaryFunction::ASin: return {DML_OPERATOR_ELEMENT_WISE_ASIN, true};
        case UnaryFunction::ASinh: return {DML_OPERATOR_ELEMENT_WISE_ASINH, true};
        case UnaryFunction::ATan: return {DML_OPERATOR_ELEMENT_WISE_ATAN, true};
        case UnaryFunction::ATanh: return {DML_OPERATOR_ELEMENT_WISE_ATANH, true};
        case UnaryFunction::Ceil: return {DML_OPERATOR_ELEMENT_WISE_CEIL, true};
        case UnaryFunction::Cos: return {DML_OPERATOR_ELEMENT_WISE_COS, true};
        case UnaryFunction::Cosh: return {DML_OPERATOR_ELEMENT_WISE_COSH, true};
        case UnaryFunction::Erf: return {DML_OPERATOR_ELEMENT_WISE_ERF, true};
        case UnaryFunction::Exp: return {DML_OPERATOR_ELEMENT_WISE_EXP, true};
        case UnaryFunction::Floor: return {DML_OPERATOR_ELEMENT_WISE_FLOOR, true};
        case UnaryFunction::Log: return {DML_OPERATOR_ELEMENT_WISE_LOG, true};
        case UnaryFunction::Recip: return {DML_OPERATOR_ELEMENT_WISE_RECIP, true};
        case UnaryFunction::Sin: return {DML_OPERATOR_ELEMENT_WISE_SIN, true};
        case UnaryFunction::Sinh: return {DML_OPERATOR_ELEMENT_WISE_SINH, true};
        case UnaryFunction::Sqrt: return {DML_OPERATOR_ELEMENT_WISE_SQRT, true};
        case UnaryFunction::Tan: return {DML_OPERATOR_ELEMENT_WISE_TAN, true};
        case UnaryFunction::Tanh: return {DML_OPERATOR_ELEMENT_WISE_TANH, true};
        case UnaryFunction::Negate: return {DML_OPERATOR_ELEMENT_WISE_NEGATE, false};
        case UnaryFunction::Sign: return {DML_OPERATOR_ELEMENT_WISE_SIGN, false};
        case UnaryFunction::Threshold: return {DML_OPERATOR_ELEMENT_WISE_THRESHOLD, true};
        case UnaryFunction::ConstantPow: return {DML_OPERATOR_ELEMENT_WISE_CONSTANT_POW, true};
        case UnaryFunction::BitNot: return {DML_OPERATOR_ELEMENT_WISE_BIT_NOT, false};
        case UnaryFunction::LogicalNot: return {DML_OPERATOR_ELEMENT_WISE_LOGICAL_NOT, false};
    }
    throw ValueError("unknown unary function");
}

DML_OPERATOR_TYPE binary_type(BinaryFunction f) {
    switch (f) {
        case BinaryFunction::Add: return DML_OPERATOR_ELEMENT_WISE_ADD;
        case BinaryFunction::Subtract: return DML_OPERATOR_ELEMENT_WISE_SUBTRACT;
        case BinaryFunction::Multiply: return DML_OPERATOR_ELEMENT_WISE_MULTIPLY;
        case BinaryFunction::Divide: return DML_OPERATOR_ELEMENT_WISE_DIVIDE;
        case BinaryFunction::Max: return DML_OPERATOR_ELEMENT_WISE_MAX;
        case BinaryFunction::Min: return DML_OPERATOR_ELEMENT_WISE_MIN;
        case BinaryFunction::ModulusFloor: return DML_OPERATOR_ELEMENT_WISE_MODULUS_FLOOR;
        case BinaryFunction::ModulusTruncate: return DML_OPERATOR_ELEMENT_WISE_MODULUS_TRUNCATE;
        case BinaryFunction::Mean: return DML_OPERATOR_ELEMENT_WISE_MEAN;
        case BinaryFunction::DifferenceSquare: return DML_OPERATOR_ELEMENT_WISE_DIFFERENCE_SQUARE;
        case BinaryFunction::ATanYX: return DML_OPERATOR_ELEMENT_WISE_ATAN_YX;
        case BinaryFunction::LogicalAnd: return DML_OPERATOR_ELEMENT_WISE_LOGICAL_AND;
        case BinaryFunction::LogicalOr: return DML_OPERATOR_ELEMENT_WISE_LOGICAL_OR;
        case BinaryFunction::LogicalXor: return DML_OPERATOR_ELEMENT_WISE_LOGICAL_XOR;
        case BinaryFunction::BitAnd: return DML_OPERATOR_ELEMENT_WISE_BIT_AND;
        case BinaryFunction::BitOr: return DML_OPERATOR_ELEMENT_WISE_BIT_OR;
        case BinaryFunction::BitXor: return DML_OPERATOR_ELEMENT_WISE_BIT_XOR;
        case BinaryFunction::BitShiftLeft: return DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_LEFT;
        case BinaryFunction::BitShiftRight: return DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_RIGHT;
    }
    throw ValueError("unknown binary function");
}

DML_OPERATOR_TYPE compare_type(CompareFunction f) {
    switch (f) {
        case CompareFunction::Equals: return DML_OPERATOR_ELEMENT_WISE_LOGICAL_EQUALS;
        case CompareFunction::GreaterThan: return DML_OPERATOR_ELEMENT_WISE_LOGICAL_GREATER_THAN;
        case CompareFunction::GreaterThanOrEqual: return DML_OPERATOR_ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL;
        case CompareFunction::LessThan: return DML_OPERATOR_ELEMENT_WISE_LOGICAL_LESS_THAN;
        case CompareFunction::LessThanOrEqual: return DML_OPERATOR_ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL;
    }
    throw ValueError("unknown comparison");
}

const DML_SCALE_BIAS* scale_bias(DescStore& store, const std::optional<ScaleBias>& sb) {
    return sb ? store.add(DML_SCALE_BIAS{sb->scale, sb->bias}) : nullptr;
}

}  // namespace

void register_elementwise_lowerings(LoweringTable& t) {
    add_lowering<UnaryDesc>(t, [](LoweringContext& c, const UnaryDesc& d) {
        UnaryInfo info = unary_info(d.function);
        if (d.function == UnaryFunction::Negate && d.scale_bias) {
            // NEGATE has no scale and bias: -(x * scale + bias) is IDENTITY's x * -scale + -bias.
            return c.lowered(DML_OPERATOR_ELEMENT_WISE_IDENTITY,
                             DML_UNARY_OPERATOR_DESC{c.input(0), c.output(0),
                                                     scale_bias(c.store, ScaleBias{-d.scale_bias->scale,
                                                                                   -d.scale_bias->bias}),
                                                     0});
        }
        if (d.scale_bias && !info.scale_bias)
            throw ValueError("DirectML's operator has no scale and bias; the graph gives one");
        return c.lowered(info.type, DML_UNARY_OPERATOR_DESC{c.input(0), c.output(0),
                                                            scale_bias(c.store, d.scale_bias), d.parameter});
    });
    add_lowering<RoundDesc>(t, [](LoweringContext& c, const RoundDesc& d) {
        return c.lowered(DML_OPERATOR_ELEMENT_WISE_ROUND,
                         DML_UNARY_MODE_OPERATOR_DESC{c.input(0), c.output(0), UINT(d.mode)});
    });
    add_lowering<TypedUnaryDesc>(t, [](LoweringContext& c, const TypedUnaryDesc& d) {
        switch (d.function) {
            case TypedUnaryFunction::IsNaN:
                return c.lowered(DML_OPERATOR_ELEMENT_WISE_IS_NAN, DML_CAST_OPERATOR_DESC{c.input(0), c.output(0)});
            case TypedUnaryFunction::BitCount:
                return c.lowered(DML_OPERATOR_ELEMENT_WISE_BIT_COUNT, DML_CAST_OPERATOR_DESC{c.input(0), c.output(0)});
            case TypedUnaryFunction::IsInfinity: break;
        }
        return c.lowered(DML_OPERATOR_ELEMENT_WISE_IS_INFINITY,
                         DML_UNARY_MODE_OPERATOR_DESC{c.input(0), c.output(0), UINT(d.infinity_mode)});
    });
    add_lowering<BinaryDesc>(t, [](LoweringContext& c, const BinaryDesc& d) {
        if (d.function == BinaryFunction::Add && !d.fused.is_none())
            return c.lowered(DML_OPERATOR_ELEMENT_WISE_ADD1,
                             DML_BINARY_OPERATOR_DESC{c.input(0), c.input(1), c.output(0), c.fused(d.fused)});
        return c.lowered(binary_type(d.function), DML_BINARY_OPERATOR_DESC{c.input(0), c.input(1), c.output(0), {}});
    });
    add_lowering<PowDesc>(t, [](LoweringContext& c, const PowDesc& d) {
        // DirectML scales and biases the exponent too (on lavapipe: pow(s*x + b, s*e + b)), where its docs and our
        // executors scale the base alone: refused rather than answered differently.
        if (d.scale_bias)
            throw NotSupported("DML_OPERATOR_ELEMENT_WISE_POW", "directml",
                               "DirectML applies POW's scale_bias to the exponent as well as the base");
        return c.lowered(DML_OPERATOR_ELEMENT_WISE_POW, DML_ELEMENT_WISE_POW_OPERATOR_DESC{
                                                            c.input(0), c.input(1), c.output(0),
                                                            scale_bias(c.store, d.scale_bias)});
    });
    add_lowering<CompareDesc>(t, [](LoweringContext& c, const CompareDesc& d) {
        return c.lowered(compare_type(d.function), DML_BINARY_OPERATOR_DESC{c.input(0), c.input(1), c.output(0), {}});
    });
    add_lowering<IfDesc>(t, [](LoweringContext& c, const IfDesc&) {
        return c.lowered(DML_OPERATOR_ELEMENT_WISE_IF,
                         DML_ELEMENT_WISE_IF_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.output(0)});
    });
    add_lowering<ClipDesc>(t, [](LoweringContext& c, const ClipDesc& d) {
        DataType type = c.node.outputs[0].data_type;
        return c.lowered(DML_OPERATOR_ELEMENT_WISE_CLIP1,
                         DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC{c.input(0), c.output(0), scale_bias(c.store, d.scale_bias),
                                                              DML_TENSOR_DATA_TYPE(type), scalar(type, d.min),
                                                              scalar(type, d.max)});
    });
    add_lowering<CastDesc>(t, [](LoweringContext& c, const CastDesc&) {
        return c.lowered(DML_OPERATOR_CAST, DML_CAST_OPERATOR_DESC{c.input(0), c.output(0)});
    });
    add_lowering<ClipGradDesc>(t, [](LoweringContext& c, const ClipGradDesc& d) {
        DataType type = c.node.outputs[0].data_type;
        // Integer inputs compare against the exact bounds (x <= -2.5 stops -3, passes -2); DirectML holds the bounds
        // in the tensor's type, so hand it the integers that give the same comparisons: floor(min), ceil(max).
        const bool integer = is_integer(type);
        return c.lowered(DML_OPERATOR_ELEMENT_WISE_CLIP_GRAD1,
                         DML_ELEMENT_WISE_CLIP_GRAD1_OPERATOR_DESC{
                             c.input(0), c.input(1), c.output(0), DML_TENSOR_DATA_TYPE(type),
                             scalar(type, integer ? std::floor(d.min) : d.min),
                             scalar(type, integer ? std::ceil(d.max) : d.max)});
    });
}

}  // namespace dml::directml
