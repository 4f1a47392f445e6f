#include "elementwise.h"

#include <cmath>

#include "../../executor/device.h"
#include "../errors.h"
#include "common.h"

namespace dml {

std::string UnaryDesc::type_name() const {
    static const char* names[] = {"IDENTITY", "ABS",  "ACOS", "ACOSH", "ASIN", "ASINH", "ATAN",  "ATANH",
                                  "CEIL",     "COS",  "COSH", "ERF",   "EXP",  "FLOOR", "LOG",   "RECIP",
                                  "SIN",      "SINH", "SQRT", "TAN",   "TANH", "NEGATE", "SIGN"};
    return std::string("DML_OPERATOR_ELEMENT_WISE_") + names[int(function)];
}

std::string BinaryDesc::type_name() const {
    static const char* names[] = {"ADD1", "SUBTRACT", "MULTIPLY", "DIVIDE", "MAX", "MIN", "MODULUS_FLOOR",
                                  "MODULUS_TRUNCATE"};
    return std::string("DML_OPERATOR_ELEMENT_WISE_") + names[int(function)];
}

namespace {

// Which types each unary function accepts (DirectML's tables): math on floats, sign/abs/negate on signed too.
void check_unary_types(const std::string& op, UnaryFunction f, const Expression& x, bool scale_bias) {
    switch (f) {
        case UnaryFunction::Identity:
            if (!scale_bias) return require_types(op, "input", x, kAllTypes);
            break;
        case UnaryFunction::Abs: case UnaryFunction::Negate: case UnaryFunction::Sign:
            if (!scale_bias)
                return require_types(op, "input", x,
                                     {DataType::Float32, DataType::Float16, DataType::Float64, DataType::Int32,
                                      DataType::Int16, DataType::Int8, DataType::Int64});
            break;
        default: break;
    }
    require_types(op, "input", x, kFloatTypes);
}

}  // namespace

Expression unary(const Expression& x, UnaryFunction f, std::optional<ScaleBias> scale_bias) {
    auto desc = std::make_shared<UnaryDesc>();
    desc->function = f;
    desc->scale_bias = scale_bias;
    std::string name = desc->type_name();
    check_unary_types(name, f, x, scale_bias.has_value());
    return add_single(name, desc, {x}, packed_like(x));
}

Expression binary(const Expression& a, const Expression& b, BinaryFunction f, FusedActivation fused) {
    auto desc = std::make_shared<BinaryDesc>();
    desc->function = f;
    desc->fused = fused;
    std::string name = desc->type_name();
    common_graph(name, {&a, &b});
    require_same_shape_and_type(name, a, b);
    require_types(name, "a", a, kAllTypes);
    if (f != BinaryFunction::Add && !fused.is_none()) throw ValueError(name + ": only add fuses an activation");
    check_fused_activation(name, fused, a.data_type());
    return add_single(name, desc, {a, b}, packed_like(a));
}

Expression clip(const Expression& x, double min, double max, std::optional<ScaleBias> scale_bias) {
    auto desc = std::make_shared<ClipDesc>();
    desc->min = min;
    desc->max = max;
    desc->scale_bias = scale_bias;
    std::string name = desc->type_name();
    require_types(name, "input", x, scale_bias ? kFloatTypes : kAllTypes);
    if (std::isnan(min) || std::isnan(max) || min > max)
        throw ValueError(name + ": min (" + std::to_string(min) + ") must not exceed max (" + std::to_string(max) +
                         ")");
    return add_single(name, desc, {x}, packed_like(x));
}

Expression cast(const Expression& x, DataType type) {
    require_types("DML_OPERATOR_CAST", "input", x, kAllTypes);
    element_size(type);
    return add_single("DML_OPERATOR_CAST", std::make_shared<CastDesc>(), {x}, packed_like(x, type));
}

Expression scalar_constant(const Expression& like, double value) {
    Graph& g = *like.graph;
    TensorDesc one(like.data_type(), {1});
    auto memory = g.device()->allocate(one.total_tensor_size_in_bytes());
    alignas(8) std::byte bytes[8] = {};
    visit_data_type(like.data_type(), [&]<class T>() { *reinterpret_cast<T*>(bytes) = T(compute_t<T>(value)); });
    g.device()->upload(*memory, bytes, one.total_tensor_size_in_bytes());
    auto buffer = std::make_shared<Buffer>(Buffer{memory, like.data_type(), {1}});
    Expression c = g.constant(buffer, one, std::nullopt);
    return broadcast(c, like.sizes());
}

Expression add_scalar(const Expression& x, double s) {
    if (is_float(x.data_type())) return unary(x, UnaryFunction::Identity, ScaleBias{1.0f, float(s)});
    return binary(x, scalar_constant(x, s), BinaryFunction::Add);
}

Expression multiply_scalar(const Expression& x, double s) {
    if (is_float(x.data_type())) return unary(x, UnaryFunction::Identity, ScaleBias{float(s), 0.0f});
    return binary(x, scalar_constant(x, s), BinaryFunction::Multiply);
}

Expression scalar_subtract(double s, const Expression& x) {
    if (is_float(x.data_type())) return unary(x, UnaryFunction::Identity, ScaleBias{-1.0f, float(s)});
    return binary(scalar_constant(x, s), x, BinaryFunction::Subtract);
}

Expression scalar_divide(double s, const Expression& x) {
    if (is_float(x.data_type())) return multiply_scalar(unary(x, UnaryFunction::Recip, std::nullopt), s);
    return binary(scalar_constant(x, s), x, BinaryFunction::Divide);
}

}  // namespace dml
