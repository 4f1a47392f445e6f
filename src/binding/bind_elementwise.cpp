// Element-wise operators, ScaleBias, cast, and Python's arithmetic operators on Expression.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include "../core/errors.h"
#include "../core/ops/elementwise.h"
#include "convert.h"
#include "module.h"

namespace dml::binding {

namespace {

// Operators on Expression: another Expression, or a Python number riding scale/bias (see ops/elementwise.h).
nb::object expr_binary(const Expression& a, nb::handle b, BinaryFunction f, bool reflected) {
    if (nb::isinstance<Expression>(b)) {
        const Expression& e = nb::cast<const Expression&>(b);
        return nb::cast(reflected ? binary(e, a, f) : binary(a, e, f));
    }
    if (nb::isinstance<nb::bool_>(b) || !(nb::isinstance<nb::float_>(b) || nb::isinstance<nb::int_>(b)))
        return nb::borrow(Py_NotImplemented);
    double s = nb::cast<double>(b);
    switch (f) {
        case BinaryFunction::Add: return nb::cast(add_scalar(a, s));
        case BinaryFunction::Multiply: return nb::cast(multiply_scalar(a, s));
        case BinaryFunction::Subtract: return nb::cast(reflected ? scalar_subtract(s, a) : add_scalar(a, -s));
        case BinaryFunction::Divide:
            if (reflected) return nb::cast(scalar_divide(s, a));
            if (is_float(a.data_type())) return nb::cast(multiply_scalar(a, 1.0 / s));
            return nb::cast(binary(a, scalar_constant(a, s), f));
        default: {
            Expression c = scalar_constant(a, s);
            return nb::cast(reflected ? binary(c, a, f) : binary(a, c, f));
        }
    }
}

void def_unary(nb::module_& m, const char* name, UnaryFunction f, const char* doc) {
    m.def(name, [f](const Expression& x, std::optional<ScaleBias> sb) { return unary(x, f, sb); }, "x"_a,
          nb::kw_only(), "scale_bias"_a = nb::none(), doc);
}

void def_binary(nb::module_& m, const char* name, BinaryFunction f, const char* doc) {
    m.def(name, [f](const Expression& a, const Expression& b) { return binary(a, b, f); }, "a"_a, "b"_a, doc);
}

}  // namespace

void bind_expression_operators(nb::class_<Expression>& cls) {
    auto def = [&](const char* name, BinaryFunction f, bool reflected) {
        cls.def(name, [f, reflected](const Expression& a, nb::handle b) { return expr_binary(a, b, f, reflected); },
                nb::is_operator());
    };
    def("__add__", BinaryFunction::Add, false);
    def("__radd__", BinaryFunction::Add, true);
    def("__sub__", BinaryFunction::Subtract, false);
    def("__rsub__", BinaryFunction::Subtract, true);
    def("__mul__", BinaryFunction::Multiply, false);
    def("__rmul__", BinaryFunction::Multiply, true);
    def("__truediv__", BinaryFunction::Divide, false);
    def("__rtruediv__", BinaryFunction::Divide, true);
    def("__mod__", BinaryFunction::ModulusFloor, false);  // floored, like Python's %
    def("__rmod__", BinaryFunction::ModulusFloor, true);
    cls.def("__neg__", [](const Expression& x) {
        return is_float(x.data_type()) ? multiply_scalar(x, -1.0) : unary(x, UnaryFunction::Negate, std::nullopt);
    });
}

void bind_elementwise(nb::module_& m) {
    nb::class_<ScaleBias>(m, "ScaleBias", "DirectML's DML_SCALE_BIAS: x * scale + bias, applied to an input.")
        .def(nb::init<float, float>(), "scale"_a = 1.0f, "bias"_a = 0.0f)
        .def_rw("scale", &ScaleBias::scale)
        .def_rw("bias", &ScaleBias::bias)
        .def("__repr__", [](const ScaleBias& s) {
            return "ScaleBias(scale=" + std::to_string(s.scale) + ", bias=" + std::to_string(s.bias) + ")";
        });

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
    m.def("sign", [](const Expression& x) { return unary(x, UnaryFunction::Sign, std::nullopt); }, "x"_a,
          "-1, 0 or 1 by the sign of x.");

    m.def("add", [](const Expression& a, const Expression& b, FusedActivation f) { return binary(a, b, BinaryFunction::Add, f); },
          "a"_a, "b"_a, nb::kw_only(), "fused_activation"_a = FusedActivation{}, "a + b, with an optional fused activation.");
    def_binary(m, "subtract", BinaryFunction::Subtract, "a - b.");
    def_binary(m, "multiply", BinaryFunction::Multiply, "a * b.");
    def_binary(m, "divide", BinaryFunction::Divide, "a / b.");
    def_binary(m, "max", BinaryFunction::Max, "The larger of a and b.");
    def_binary(m, "min", BinaryFunction::Min, "The smaller of a and b.");
    def_binary(m, "modulus_floor", BinaryFunction::ModulusFloor, "a mod b, with the sign of b (Python's %).");
    def_binary(m, "modulus_truncate", BinaryFunction::ModulusTruncate, "a mod b, with the sign of a (C's fmod).");

    m.def("clip", &clip, "x"_a, nb::kw_only(), "min"_a, "max"_a, "scale_bias"_a = nb::none(),
          "x clamped to [min, max] (DML_OPERATOR_ELEMENT_WISE_CLIP1).");
    m.def("cast", [](const Expression& x, nb::handle t) { return cast(x, to_data_type(t)); }, "x"_a, nb::kw_only(),
          "target_data_type"_a, "x converted to another element type (DML_OPERATOR_CAST).");
}

}  // namespace dml::binding
