// Element-wise operators, ScaleBias, the RoundingMode and IsInfinityMode enums, cast, and Python's arithmetic and
// bitwise operators on Expression.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>

#include <list>

#include "../core/errors.h"
#include "../core/ops/elementwise.h"
#include "convert.h"
#include "module.h"

namespace dml::binding {

namespace {

// Operators on Expression: another Expression, or a Python number. On a float tensor + - * / ride scale/bias
// (see ops/elementwise.h); anything else makes the number a one-element constant of the tensor's type.
nb::object expr_binary(const Expression& a, nb::handle b, BinaryFunction f, bool reflected) {
    if (nb::isinstance<Expression>(b)) {
        const Expression& e = nb::cast<const Expression&>(b);
        return nb::cast(reflected ? binary(e, a, f) : binary(a, e, f));
    }
    if (nb::isinstance<nb::bool_>(b) || !(nb::isinstance<nb::float_>(b) || nb::isinstance<nb::int_>(b)))
        return nb::borrow(Py_NotImplemented);
    double s = nb::cast<double>(b);
    if (is_float(a.data_type())) {
        switch (f) {
            case BinaryFunction::Add: return nb::cast(add_scalar(a, s));
            case BinaryFunction::Multiply: return nb::cast(multiply_scalar(a, s));
            case BinaryFunction::Subtract: return nb::cast(reflected ? scalar_subtract(s, a) : add_scalar(a, -s));
            case BinaryFunction::Divide: return nb::cast(reflected ? scalar_divide(s, a) : multiply_scalar(a, 1.0 / s));
            default: break;
        }
    }
    Expression c = scalar_constant(a, s);
    return nb::cast(reflected ? binary(c, a, f) : binary(a, c, f));
}

// A scale_bias argument: a dml.ScaleBias, or a (scale, bias) tuple as DirectMLX's brace-initialized struct is (the
// stubs say both, so type checkers take the tuple too).
using ScaleBiasArgument = std::optional<std::variant<ScaleBias, std::tuple<float, float>>>;

std::optional<ScaleBias> to_scale_bias(const ScaleBiasArgument& a) {
    if (!a) return std::nullopt;
    if (const auto* t = std::get_if<std::tuple<float, float>>(&*a)) return ScaleBias{std::get<0>(*t), std::get<1>(*t)};
    return std::get<ScaleBias>(*a);
}

void def_unary(nb::module_& m, const char* name, UnaryFunction f, const char* doc) {
    def(m, name, [f](const Expression& x, ScaleBiasArgument sb) { return unary(x, f, to_scale_bias(sb)); }, "x"_a,
          nb::kw_only(), "scale_bias"_a = nb::none(), doc);
}

void def_plain_unary(nb::module_& m, const char* name, UnaryFunction f, const char* doc) {
    def(m, name, [f](const Expression& x) { return unary(x, f, std::nullopt); }, "x"_a, doc);
}

void def_binary(nb::module_& m, const char* name, BinaryFunction f, const char* doc) {
    def(m, name, [f](const Expression& a, const Expression& b) { return binary(a, b, f); }, "a"_a, "b"_a, doc);
}

void def_compare(nb::module_& m, const char* name, CompareFunction f, const char* doc) {
    def(m, name, [f](const Expression& a, const Expression& b, nb::handle t) { return compare(a, b, f, to_data_type(t)); },
          "a"_a, "b"_a, nb::kw_only(), "output_dtype"_a = nb::cast(DataType::UInt8), doc);
}

}  // namespace

void bind_expression_operators(nb::class_<Expression>& cls) {
    // `symbol` names the operation in errors ("a + b: operand shapes differ ...").
    auto def = [&](const char* name, const char* symbol, BinaryFunction f, bool reflected) {
        // The signature tells type checkers the result is an Expression (NotImplemented is the protocol's).
        static std::list<std::string> sigs;  // nb::sig keeps the pointer
        const std::string& sig =
            sigs.emplace_back(std::string("def ") + name + "(self, other: Expression | int | float, /) -> Expression");
        cls.def(name,
                leading_with_call(std::string("a ") + symbol + " b",
                                  [f, reflected](const Expression& a, nb::handle b) { return expr_binary(a, b, f, reflected); }),
                nb::is_operator(), nb::sig(sig.c_str()));
    };
    def("__add__", "+", BinaryFunction::Add, false);
    def("__radd__", "+", BinaryFunction::Add, true);
    def("__sub__", "-", BinaryFunction::Subtract, false);
    def("__rsub__", "-", BinaryFunction::Subtract, true);
    def("__mul__", "*", BinaryFunction::Multiply, false);
    def("__rmul__", "*", BinaryFunction::Multiply, true);
    def("__truediv__", "/", BinaryFunction::Divide, false);
    def("__rtruediv__", "/", BinaryFunction::Divide, true);
    def("__mod__", "%", BinaryFunction::ModulusFloor, false);  // floored, like Python's %
    def("__rmod__", "%", BinaryFunction::ModulusFloor, true);
    // DirectMLX maps & | ^ << >> ~ to the bit operators. Comparisons stay functions: == is identity.
    def("__and__", "&", BinaryFunction::BitAnd, false);
    def("__rand__", "&", BinaryFunction::BitAnd, true);
    def("__or__", "|", BinaryFunction::BitOr, false);
    def("__ror__", "|", BinaryFunction::BitOr, true);
    def("__xor__", "^", BinaryFunction::BitXor, false);
    def("__rxor__", "^", BinaryFunction::BitXor, true);
    def("__lshift__", "<<", BinaryFunction::BitShiftLeft, false);
    def("__rlshift__", "<<", BinaryFunction::BitShiftLeft, true);
    def("__rshift__", ">>", BinaryFunction::BitShiftRight, false);
    def("__rrshift__", ">>", BinaryFunction::BitShiftRight, true);
    cls.def("__neg__", [](const Expression& x) {
        return is_float(x.data_type()) ? multiply_scalar(x, -1.0) : unary(x, UnaryFunction::Negate, std::nullopt);
    });
    cls.def("__invert__", [](const Expression& x) { return unary(x, UnaryFunction::BitNot, std::nullopt); });
}

void bind_elementwise(nb::module_& m) {
    nb::class_<ScaleBias>(m, "ScaleBias", "DirectML's DML_SCALE_BIAS: x * scale + bias, applied to an input.")
        .def(nb::init<float, float>(), "scale"_a = 1.0f, "bias"_a = 0.0f)
        .def_rw("scale", &ScaleBias::scale)
        .def_rw("bias", &ScaleBias::bias)
        .def("__repr__", [](const ScaleBias& s) {
            return "ScaleBias(scale=" + std::to_string(s.scale) + ", bias=" + std::to_string(s.bias) + ")";
        });
    nb::enum_<RoundingMode>(m, "RoundingMode", "DML_ROUNDING_MODE.")
        .value("HALVES_TO_NEAREST_EVEN", RoundingMode::HalvesToNearestEven)
        .value("TOWARD_ZERO", RoundingMode::TowardZero)
        .value("TOWARD_INFINITY", RoundingMode::TowardInfinity);
    nb::enum_<IsInfinityMode>(m, "IsInfinityMode", "DML_IS_INFINITY_MODE.")
        .value("EITHER", IsInfinityMode::Either)
        .value("POSITIVE", IsInfinityMode::Positive)
        .value("NEGATIVE", IsInfinityMode::Negative);

    def_unary(m, "identity", UnaryFunction::Identity, "A copy of x (DML_OPERATOR_ELEMENT_WISE_IDENTITY).");
    def_unary(m, "abs", UnaryFunction::Abs, "|x|.");
    def_unary(m, "acos", UnaryFunction::ACos, "arccos x.");
    def_unary(m, "acosh", UnaryFunction::ACosh, "arcosh x.");
    def_unary(m, "asin", UnaryFunction::ASin, "arcsin x.");
    def_unary(m, "asinh", UnaryFunction::ASinh, "arsinh x.");
    def_unary(m, "atan", UnaryFunction::ATan, "arctan x.");
    def_unary(m, "atanh", UnaryFunction::ATanh, "artanh x.");
    def_unary(m, "ceil", UnaryFunction::Ceil, "ceil x.");
    def_unary(m, "cos", UnaryFunction::Cos, "cos x.");
    def_unary(m, "cosh", UnaryFunction::Cosh, "cosh x.");
    def_unary(m, "erf", UnaryFunction::Erf, "The error function.");
    def_unary(m, "exp", UnaryFunction::Exp, "e^x.");
    def_unary(m, "floor", UnaryFunction::Floor, "floor x.");
    def_unary(m, "log", UnaryFunction::Log, "ln x.");
    def_unary(m, "recip", UnaryFunction::Recip, "1 / x.");
    def_unary(m, "sin", UnaryFunction::Sin, "sin x.");
    def_unary(m, "sinh", UnaryFunction::Sinh, "sinh x.");
    def_unary(m, "sqrt", UnaryFunction::Sqrt, "sqrt x.");
    def_unary(m, "tan", UnaryFunction::Tan, "tan x.");
    def_unary(m, "tanh", UnaryFunction::Tanh, "tanh x (DML_OPERATOR_ELEMENT_WISE_TANH).");
    def_unary(m, "negate", UnaryFunction::Negate, "-x.");
    def_plain_unary(m, "sign", UnaryFunction::Sign, "-1, 0 or 1 by the sign of x.");
    def_plain_unary(m, "bit_not", UnaryFunction::BitNot, "~x on the stored bits (DML_OPERATOR_ELEMENT_WISE_BIT_NOT).");
    def_plain_unary(m, "logical_not", UnaryFunction::LogicalNot, "1 where x is 0, else 0.");
    def(m, "threshold",
          [](const Expression& x, float min, ScaleBiasArgument sb) {
              return unary(x, UnaryFunction::Threshold, to_scale_bias(sb), min);
          },
          "x"_a, nb::kw_only(), "min"_a, "scale_bias"_a = nb::none(),
          "max(x, min) (DML_OPERATOR_ELEMENT_WISE_THRESHOLD); integers use the least integer >= min.");
    def(m, "pow",
          [](const Expression& x, const Expression& exponent, ScaleBiasArgument sb) {
              return pow(x, exponent, to_scale_bias(sb));
          },
          "x"_a, "exponent"_a, nb::kw_only(), "scale_bias"_a = nb::none(),
          "x ** exponent: a tensor exponent of x's shape (DML_OPERATOR_ELEMENT_WISE_POW, any allowed type), or a "
          "number (DML_OPERATOR_ELEMENT_WISE_CONSTANT_POW).");
    def(m, "pow",
          [](const Expression& x, float exponent, ScaleBiasArgument sb) {
              return unary(x, UnaryFunction::ConstantPow, to_scale_bias(sb), exponent);
          },
          "x"_a, "exponent"_a, nb::kw_only(), "scale_bias"_a = nb::none());
    def(m, "round", [](const Expression& x, RoundingMode mode) { return round(x, mode); }, "x"_a, nb::kw_only(),
          "rounding_mode"_a = RoundingMode::HalvesToNearestEven, "x rounded to an integer value.");
    def(m, "is_nan",
          [](const Expression& x, nb::handle t) { return typed_unary(x, TypedUnaryFunction::IsNaN, to_data_type(t)); },
          "x"_a, nb::kw_only(), "output_dtype"_a = nb::cast(DataType::UInt8), "1 where x is NaN, else 0.");
    def(m, "is_infinity",
          [](const Expression& x, IsInfinityMode mode, nb::handle t) {
              return typed_unary(x, TypedUnaryFunction::IsInfinity, to_data_type(t), mode);
          },
          "x"_a, nb::kw_only(), "infinity_mode"_a = IsInfinityMode::Either,
          "output_dtype"_a = nb::cast(DataType::UInt8), "1 where x is an infinity of the chosen sign, else 0.");
    def(m, "bit_count",
          [](const Expression& x, nb::handle t) { return typed_unary(x, TypedUnaryFunction::BitCount, to_data_type(t)); },
          "x"_a, nb::kw_only(), "output_dtype"_a = nb::cast(DataType::UInt8),
          "The number of set bits in each element's stored bits.");

    def(m, "add", [](const Expression& a, const Expression& b, FusedActivation f) { return binary(a, b, BinaryFunction::Add, f); },
          "a"_a, "b"_a, nb::kw_only(), "fused_activation"_a = FusedActivation{},
          "a + b (DML_OPERATOR_ELEMENT_WISE_ADD; ADD1 with a fused activation).");
    def_binary(m, "subtract", BinaryFunction::Subtract, "a - b.");
    def_binary(m, "multiply", BinaryFunction::Multiply, "a * b.");
    def_binary(m, "divide", BinaryFunction::Divide, "a / b.");
    def_binary(m, "max", BinaryFunction::Max, "The larger of a and b.");
    def_binary(m, "min", BinaryFunction::Min, "The smaller of a and b.");
    def_binary(m, "mean", BinaryFunction::Mean, "(a + b) / 2; integers round toward zero.");
    def_binary(m, "difference_square", BinaryFunction::DifferenceSquare, "(a - b) ** 2.");
    def_binary(m, "atan_yx", BinaryFunction::ATanYX, "atan2(a, b): the angle of the point (x=b, y=a).");
    def_binary(m, "modulus_floor", BinaryFunction::ModulusFloor, "a mod b, with the sign of b (Python's %).");
    def_binary(m, "modulus_truncate", BinaryFunction::ModulusTruncate, "a mod b, with the sign of a (C's fmod).");
    def_binary(m, "logical_and", BinaryFunction::LogicalAnd, "1 where a and b are both nonzero, else 0.");
    def_binary(m, "logical_or", BinaryFunction::LogicalOr, "1 where a or b is nonzero, else 0.");
    def_binary(m, "logical_xor", BinaryFunction::LogicalXor, "1 where exactly one of a and b is nonzero, else 0.");
    def_binary(m, "bit_and", BinaryFunction::BitAnd, "a & b on the stored bits.");
    def_binary(m, "bit_or", BinaryFunction::BitOr, "a | b on the stored bits.");
    def_binary(m, "bit_xor", BinaryFunction::BitXor, "a ^ b on the stored bits.");
    def_binary(m, "bit_shift_left", BinaryFunction::BitShiftLeft, "a << b (0 once b reaches the width).");
    def_binary(m, "bit_shift_right", BinaryFunction::BitShiftRight, "a >> b (0 once b reaches the width).");

    def_compare(m, "equals", CompareFunction::Equals, "1 where a == b, else 0.");
    def_compare(m, "greater_than", CompareFunction::GreaterThan, "1 where a > b, else 0.");
    def_compare(m, "greater_than_or_equal", CompareFunction::GreaterThanOrEqual, "1 where a >= b, else 0.");
    def_compare(m, "less_than", CompareFunction::LessThan, "1 where a < b, else 0.");
    def_compare(m, "less_than_or_equal", CompareFunction::LessThanOrEqual, "1 where a <= b, else 0.");
    def(m, "where", &if_then_else, "condition"_a, "a"_a, "b"_a,
          "a where the UINT8 condition is nonzero, else b (DirectMLX's If, DML_OPERATOR_ELEMENT_WISE_IF).");

    def(m, "clip",
        [](const Expression& x, double min, double max, ScaleBiasArgument sb) {
            return clip(x, min, max, to_scale_bias(sb));
        },
        "x"_a, nb::kw_only(), "min"_a, "max"_a, "scale_bias"_a = nb::none(),
          "x clamped to [min, max] (DML_OPERATOR_ELEMENT_WISE_CLIP1).");
    def(m, "clip_grad", &clip_grad, "input"_a, "input_gradient"_a, nb::kw_only(), "min"_a, "max"_a,
          "input_gradient where min < input < max, else 0 (DML_OPERATOR_ELEMENT_WISE_CLIP_GRAD1).");
    def(m, "cast", [](const Expression& x, nb::handle t) { return cast(x, to_data_type(t)); }, "x"_a, nb::kw_only(),
          "dtype"_a, "x converted to another element type (DML_OPERATOR_CAST).");
}

}  // namespace dml::binding
