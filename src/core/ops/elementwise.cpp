#include "elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "../errors.h"
#include "common.h"

namespace dml {

namespace {

using DT = DataType;

// DirectML's "Tensor support" tables (the highest feature level), by the sets of types they list.
const std::initializer_list<DataType> kFloat = {DT::Float32, DT::Float16};
const std::initializer_list<DataType> kNumeric = {DT::Float32, DT::Float16, DT::UInt32, DT::UInt16, DT::UInt8,
                                                  DT::Int32,   DT::Int16,   DT::Int8,   DT::UInt64, DT::Int64};
const std::initializer_list<DataType> kSigned = {DT::Float32, DT::Float16, DT::Int32, DT::Int16, DT::Int8, DT::Int64};
const std::initializer_list<DataType> k32BitIntegers = {DT::Float32, DT::Float16, DT::UInt32, DT::UInt16, DT::UInt8,
                                                        DT::Int32,   DT::Int16,   DT::Int8};
const std::initializer_list<DataType> kFloatInt32 = {DT::Float32, DT::Float16, DT::Int32, DT::UInt32};
const std::initializer_list<DataType> kUnsigned = {DT::UInt64, DT::UInt32, DT::UInt16, DT::UInt8};
const std::initializer_list<DataType> kBoolean = {DT::UInt8, DT::UInt32};

const std::string kPrefix = "DML_OPERATOR_ELEMENT_WISE_";

// Sizes must match exactly (no implicit broadcast); types are checked per operand by the caller.
void require_same_shape(std::string_view op, const Expression& a, const Expression& b) {
    if (a.sizes() != b.sizes())
        throw ValueError(std::string(op) + ": operand shapes differ: " + sizes_to_string(a.sizes()) + " and " +
                         sizes_to_string(b.sizes()) + " (use dml.broadcast to broadcast explicitly)");
}

void require_output_type(std::string_view op, DataType type, std::initializer_list<DataType> allowed) {
    element_size(type);
    if (std::find(allowed.begin(), allowed.end(), type) != allowed.end()) return;
    std::string names;
    for (DataType t : allowed) names += (names.empty() ? "" : ", ") + std::string(data_type_name(t));
    throw ValueError(std::string(op) + ": output_dtype " + std::string(data_type_name(type)) +
                     " is not allowed; allowed: " + names);
}

void check_unary_types(const std::string& op, UnaryFunction f, const Expression& x, bool scale_bias) {
    switch (f) {
        case UnaryFunction::Identity:
            return require_types(op, "input", x, scale_bias ? kFloat : kAllTypes);  // FLOAT64: a copy, no arithmetic
        case UnaryFunction::Abs:
        case UnaryFunction::Negate:
            return require_types(op, "input", x, scale_bias ? kFloat : kSigned);
        case UnaryFunction::Sign: return require_types(op, "input", x, kNumeric);
        case UnaryFunction::Threshold: return require_types(op, "input", x, scale_bias ? kFloat : k32BitIntegers);
        case UnaryFunction::BitNot: return require_types(op, "input", x, kAllTypes);
        case UnaryFunction::LogicalNot: return require_types(op, "input", x, kBoolean);
        default: return require_types(op, "input", x, kFloat);
    }
}

void check_binary_types(const std::string& op, BinaryFunction f, const Expression& a) {
    switch (f) {
        case BinaryFunction::Mean:
        case BinaryFunction::DifferenceSquare: return require_types(op, "a", a, kFloatInt32);
        case BinaryFunction::ATanYX: return require_types(op, "a", a, kFloat);
        case BinaryFunction::LogicalAnd:
        case BinaryFunction::LogicalOr:
        case BinaryFunction::LogicalXor: return require_types(op, "a", a, kBoolean);
        case BinaryFunction::BitAnd:
        case BinaryFunction::BitOr:
        case BinaryFunction::BitXor: return require_types(op, "a", a, kAllTypes);
        case BinaryFunction::BitShiftLeft:
        case BinaryFunction::BitShiftRight: return require_types(op, "a", a, kUnsigned);
        default: return require_types(op, "a", a, kNumeric);
    }
}

}  // namespace

std::string UnaryDesc::type_name() const {
    static const char* names[] = {"IDENTITY", "ABS",  "ACOS", "ACOSH", "ASIN", "ASINH", "ATAN",      "ATANH",
                                  "CEIL",     "COS",  "COSH", "ERF",   "EXP",  "FLOOR", "LOG",       "RECIP",
                                  "SIN",      "SINH", "SQRT", "TAN",   "TANH", "NEGATE", "SIGN",     "THRESHOLD",
                                  "CONSTANT_POW", "BIT_NOT", "LOGICAL_NOT"};
    return kPrefix + names[int(function)];
}

std::string TypedUnaryDesc::type_name() const {
    static const char* names[] = {"IS_NAN", "IS_INFINITY", "BIT_COUNT"};
    return kPrefix + names[int(function)];
}

std::string BinaryDesc::type_name() const {
    static const char* names[] = {"ADD",         "SUBTRACT",   "MULTIPLY",          "DIVIDE",      "MAX",
                                  "MIN",         "MODULUS_FLOOR", "MODULUS_TRUNCATE", "MEAN",     "DIFFERENCE_SQUARE",
                                  "ATAN_YX",     "LOGICAL_AND", "LOGICAL_OR",       "LOGICAL_XOR", "BIT_AND",
                                  "BIT_OR",      "BIT_XOR",    "BIT_SHIFT_LEFT",    "BIT_SHIFT_RIGHT"};
    if (function == BinaryFunction::Add && !fused.is_none()) return "DML_OPERATOR_ELEMENT_WISE_ADD1";
    return kPrefix + names[int(function)];
}

std::string CompareDesc::type_name() const {
    static const char* names[] = {"EQUALS", "GREATER_THAN", "GREATER_THAN_OR_EQUAL", "LESS_THAN",
                                  "LESS_THAN_OR_EQUAL"};
    return kPrefix + "LOGICAL_" + names[int(function)];
}

Expression unary(const Expression& x, UnaryFunction f, std::optional<ScaleBias> scale_bias, float parameter) {
    auto desc = std::make_shared<UnaryDesc>();
    desc->function = f;
    desc->scale_bias = scale_bias;
    desc->parameter = parameter;
    std::string name = desc->type_name();
    check_unary_types(name, f, x, scale_bias.has_value());
    return add_single(name, desc, {x}, packed_like(x));
}

Expression round(const Expression& x, RoundingMode mode) {
    auto desc = std::make_shared<RoundDesc>();
    desc->mode = mode;
    require_types(desc->type_name(), "input", x, kFloat);
    return add_single(desc->type_name(), desc, {x}, packed_like(x));
}

Expression typed_unary(const Expression& x, TypedUnaryFunction f, DataType output_type, IsInfinityMode mode) {
    auto desc = std::make_shared<TypedUnaryDesc>();
    desc->function = f;
    desc->infinity_mode = mode;
    std::string name = desc->type_name();
    require_types(name, "input", x, f == TypedUnaryFunction::BitCount ? kAllTypes : kFloat);
    // IS_INFINITY's table lists UINT8 only; IS_NAN and BIT_COUNT also UINT32.
    if (f == TypedUnaryFunction::IsInfinity) require_output_type(name, output_type, {DT::UInt8});
    else require_output_type(name, output_type, kBoolean);
    return add_single(name, desc, {x}, packed_like(x, output_type));
}

Expression binary(const Expression& a, const Expression& b, BinaryFunction f, FusedActivation fused) {
    auto desc = std::make_shared<BinaryDesc>();
    desc->function = f;
    desc->fused = fused;
    std::string name = desc->type_name();
    common_graph(name, {&a, &b});
    require_same_shape_and_type(name, a, b);
    if (f != BinaryFunction::Add && !fused.is_none()) throw ValueError(name + ": only add fuses an activation");
    check_fused_activation(name, fused, a.data_type());
    check_binary_types(name, f, a);
    return add_single(name, desc, {a, b}, packed_like(a));
}

Expression pow(const Expression& x, const Expression& exponent, std::optional<ScaleBias> scale_bias) {
    auto desc = std::make_shared<PowDesc>();
    desc->scale_bias = scale_bias;
    std::string name = desc->type_name();
    common_graph(name, {&x, &exponent});
    require_same_shape(name, x, exponent);
    require_types(name, "input", x, scale_bias ? kFloat : k32BitIntegers);
    require_types(name, "exponent", exponent, k32BitIntegers);  // since FL 3.0 its type may differ from input's
    return add_single(name, desc, {x, exponent}, packed_like(x));
}

Expression compare(const Expression& a, const Expression& b, CompareFunction f, DataType output_type) {
    auto desc = std::make_shared<CompareDesc>();
    desc->function = f;
    std::string name = desc->type_name();
    common_graph(name, {&a, &b});
    require_same_shape_and_type(name, a, b);
    require_types(name, "a", a, kNumeric);
    require_output_type(name, output_type, kBoolean);
    return add_single(name, desc, {a, b}, packed_like(a, output_type));
}

Expression if_then_else(const Expression& condition, const Expression& a, const Expression& b) {
    auto desc = std::make_shared<IfDesc>();
    std::string name = desc->type_name();
    common_graph(name, {&condition, &a, &b});
    require_same_shape(name, condition, a);
    require_same_shape_and_type(name, a, b);
    require_types(name, "condition", condition, {DT::UInt8});
    require_types(name, "a", a, kAllTypes);
    return add_single(name, desc, {condition, a, b}, packed_like(a));
}

namespace {
// Any ordered pair is valid: DirectML defines CLIP as max(min, min(x, max)) and CLIP_GRAD's gradient as passing
// only where min < x < max, so min > max clips everything to min and passes no gradient.
void check_bounds(const std::string& op, double min, double max) {
    if (std::isnan(min) || std::isnan(max))
        throw ValueError(op + ": min and max must be numbers, got " + std::to_string(min) + " and " + std::to_string(max));
}
}  // namespace

Expression clip(const Expression& x, double min, double max, std::optional<ScaleBias> scale_bias) {
    auto desc = std::make_shared<ClipDesc>();
    desc->min = min;
    desc->max = std::max(min, max);  // max(min, min(x, max)) is min everywhere when min > max, as [min, min] gives
    desc->scale_bias = scale_bias;
    std::string name = desc->type_name();
    require_types(name, "input", x, scale_bias ? kFloat : kNumeric);
    check_bounds(name, min, max);
    return add_single(name, desc, {x}, packed_like(x));
}

Expression clip_grad(const Expression& x, const Expression& gradient, double min, double max) {
    auto desc = std::make_shared<ClipGradDesc>();
    desc->min = min;
    desc->max = max;
    std::string name = desc->type_name();
    common_graph(name, {&x, &gradient});
    require_same_shape_and_type(name, x, gradient);
    require_types(name, "input", x, kNumeric);
    check_bounds(name, min, max);
    return add_single(name, desc, {x, gradient}, packed_like(gradient));
}

Expression cast(const Expression& x, DataType type) {
    require_types("DML_OPERATOR_CAST", "input", x, kAllTypes);
    element_size(type);
    return add_single("DML_OPERATOR_CAST", std::make_shared<CastDesc>(), {x}, packed_like(x, type));
}

namespace {
// `value` stored as T: an integer tensor takes only an integer in its range (nothing wraps or truncates silently).
template <class T>
T scalar_as(double value, DataType type) {
    using C = compute_t<T>;
    if constexpr (std::is_integral_v<C>) {
        // 2^64 and 2^63 are exact doubles; the range test is done before any conversion.
        constexpr double hi = std::is_signed_v<C> ? 0x1p63 : 0x1p64;
        bool fits = std::trunc(value) == value && value >= double(std::numeric_limits<C>::lowest()) &&
                    (sizeof(C) == 8 ? value < hi : value <= double(std::numeric_limits<C>::max()));
        if (!fits) {
            char text[32];
            std::snprintf(text, sizeof text, "%.17g", value);
            throw ValueError("the scalar " + std::string(text) + " is not representable as " +
                             std::string(data_type_name(type)) + " (cast the tensor with dml.cast)");
        }
        return T(C(value));
    } else {
        return T(C(value));
    }
}
}  // namespace

Expression scalar_constant(const Expression& like, double value) {
    Graph& g = *like.graph;
    TensorDesc one(like.data_type(), {1});
    std::vector<std::byte> bytes(one.total_tensor_size_in_bytes());
    visit_data_type(like.data_type(), [&]<class T>() {
        const T v = scalar_as<T>(value, like.data_type());
        std::memcpy(bytes.data(), &v, sizeof v);
    });
    Expression c = g.constant(HostBytes::owning(std::move(bytes)), one, std::nullopt);
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
