// FusedActivation and the activation operators.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "../core/ops/activation.h"
#include "module.h"

namespace dml::binding {

namespace {

using AF = ActivationFunction;

FusedActivation make(AF f, float alpha = 0.0f, float beta = 0.0f) { return {f, alpha, beta}; }

std::string short_name(AF f) {
    std::string n = activation_type_name(f);
    const std::string prefix = "DML_OPERATOR_ACTIVATION_";
    return n.rfind(prefix, 0) == 0 ? n.substr(prefix.size()) : n;
}

void def_activation(nb::module_& m, const char* name, AF f, const char* doc) {
    def(m, name, [f](const Expression& x) { return activation(x, make(f)); }, "x"_a, doc);
}

}  // namespace

void bind_activation(nb::module_& m) {
    // One factory per DirectMLX FusedActivation factory, with its defaults (what DirectML can fuse: no gelu/swish).
    nb::class_<FusedActivation>(m, "FusedActivation", "An activation fused into an operator's output.")
        .def_static("none", [] { return FusedActivation{}; })
        .def_static("elu", [](float alpha) { return make(AF::Elu, alpha); }, "alpha"_a = 1.0f)
        .def_static("hard_sigmoid", [](float a, float b) { return make(AF::HardSigmoid, a, b); }, "alpha"_a = 0.2f, "beta"_a = 0.5f)
        .def_static("identity", [] { return make(AF::Identity); })
        .def_static("leaky_relu", [](float alpha) { return make(AF::LeakyRelu, alpha); }, "alpha"_a = 0.01f)
        .def_static("linear", [](float a, float b) { return make(AF::Linear, a, b); }, "alpha"_a, "beta"_a)
        .def_static("parametric_softplus", [](float a, float b) { return make(AF::ParametricSoftplus, a, b); }, "alpha"_a, "beta"_a)
        .def_static("relu", [] { return make(AF::Relu); })
        .def_static("scaled_elu", [](float a, float g) { return make(AF::ScaledElu, a, g); },
                    "alpha"_a = 1.67326319217681884765625f, "gamma"_a = 1.05070102214813232421875f)
        .def_static("scaled_tanh", [](float a, float b) { return make(AF::ScaledTanh, a, b); }, "alpha"_a = 1.0f, "beta"_a = 0.5f)
        .def_static("sigmoid", [] { return make(AF::Sigmoid); })
        .def_static("softplus", [](float s) { return make(AF::Softplus, s); }, "steepness"_a = 1.0f)
        .def_static("softsign", [] { return make(AF::Softsign); })
        .def_static("tanh", [] { return make(AF::Tanh); })
        .def_static("thresholded_relu", [](float a) { return make(AF::ThresholdedRelu, a); }, "alpha"_a = 1.0f)
        .def_static("shrink", [](float bias, float threshold) { return make(AF::Shrink, bias, threshold); },
                    "bias"_a = 0.0f, "threshold"_a = 0.5f)
        .def_static("celu", [](float a) { return make(AF::Celu, a); }, "alpha"_a = 1.0f)
        .def_prop_ro("function", [](const FusedActivation& f) { return short_name(f.function); })
        .def_ro("alpha", &FusedActivation::alpha)
        .def_ro("beta", &FusedActivation::beta)
        .def("__eq__", [](const FusedActivation& a, nb::handle other) {
                 if (!nb::isinstance<FusedActivation>(other)) return false;
                 const auto& b = nb::cast<const FusedActivation&>(other);
                 return a.function == b.function && a.alpha == b.alpha && a.beta == b.beta;
             },
             nb::sig("def __eq__(self, other: object, /) -> bool"))
        .def("__repr__", [](const FusedActivation& f) {
            if (f.is_none()) return std::string("FusedActivation.none()");
            return "FusedActivation(" + short_name(f.function) + ", alpha=" + std::to_string(f.alpha) +
                   ", beta=" + std::to_string(f.beta) + ")";
        });

    def_activation(m, "activation_identity", AF::Identity, "x (DML_OPERATOR_ACTIVATION_IDENTITY).");
    def_activation(m, "activation_relu", AF::Relu, "max(x, 0); float or signed integer x.");
    def_activation(m, "activation_sigmoid", AF::Sigmoid, "1 / (1 + e^-x).");
    def_activation(m, "activation_tanh", AF::Tanh, "tanh x.");
    def_activation(m, "activation_softsign", AF::Softsign, "x / (1 + |x|).");
    def_activation(m, "activation_gelu", AF::Gelu, "x * Phi(x), the exact (erf) form.");
    def(m, "activation_leaky_relu", [](const Expression& x, float a) { return activation(x, make(AF::LeakyRelu, a)); },
          "x"_a, nb::kw_only(), "alpha"_a = 0.01f, "x if x >= 0 else alpha * x.");
    def(m, "activation_elu", [](const Expression& x, float a) { return activation(x, make(AF::Elu, a)); }, "x"_a,
          nb::kw_only(), "alpha"_a = 1.0f, "x if x >= 0 else alpha * (e^x - 1).");
    def(m, "activation_celu", [](const Expression& x, float a) { return activation(x, make(AF::Celu, a)); }, "x"_a,
          nb::kw_only(), "alpha"_a = 1.0f, "max(0, x) + min(0, alpha * (e^(x/alpha) - 1)).");
    def(m, "activation_hard_sigmoid", [](const Expression& x, float a, float b) { return activation(x, make(AF::HardSigmoid, a, b)); },
          "x"_a, nb::kw_only(), "alpha"_a = 0.2f, "beta"_a = 0.5f, "max(0, min(alpha * x + beta, 1)).");
    def(m, "activation_linear", [](const Expression& x, float a, float b) { return activation(x, make(AF::Linear, a, b)); },
          "x"_a, nb::kw_only(), "alpha"_a, "beta"_a, "alpha * x + beta.");
    def(m, "activation_parametric_softplus",
          [](const Expression& x, float a, float b) { return activation(x, make(AF::ParametricSoftplus, a, b)); }, "x"_a,
          nb::kw_only(), "alpha"_a, "beta"_a, "alpha * ln(1 + e^(beta * x)).");
    def(m, "activation_scaled_elu", [](const Expression& x, float a, float g) { return activation(x, make(AF::ScaledElu, a, g)); },
          "x"_a, nb::kw_only(), "alpha"_a = 1.67326319217681884765625f, "gamma"_a = 1.05070102214813232421875f,
          "gamma * (x if x > 0 else alpha * (e^x - 1)).");
    def(m, "activation_scaled_tanh", [](const Expression& x, float a, float b) { return activation(x, make(AF::ScaledTanh, a, b)); },
          "x"_a, nb::kw_only(), "alpha"_a = 1.0f, "beta"_a = 0.5f, "alpha * tanh(beta * x).");
    def(m, "activation_softplus", [](const Expression& x, float s) { return activation(x, make(AF::Softplus, s)); }, "x"_a,
          nb::kw_only(), "steepness"_a = 1.0f, "ln(1 + e^(steepness * x)) / steepness.");
    def(m, "activation_thresholded_relu", [](const Expression& x, float a) { return activation(x, make(AF::ThresholdedRelu, a)); },
          "x"_a, nb::kw_only(), "alpha"_a = 1.0f, "x if x > alpha else 0.");
    def(m, "activation_swish", [](const Expression& x, float s) { return activation(x, make(AF::Swish, s)); }, "x"_a,
          nb::kw_only(), "sigmoid_input_scale"_a = 1.0f, "x * sigmoid(sigmoid_input_scale * x) (SiLU at 1).");
    def(m, "activation_hard_swish", [](const Expression& x, float a, float b) { return activation(x, make(AF::HardSwish, a, b)); },
          "x"_a, nb::kw_only(), "alpha"_a = 1.0f / 6.0f, "beta"_a = 0.5f, "x * max(0, min(alpha * x + beta, 1)).");
    def(m, "activation_parameterized_relu", &activation_parameterized_relu, "x"_a, "slope"_a,
          "x if x >= 0 else slope * x, slope a tensor of x's shape and type.");
    def(m, "activation_shrink", [](const Expression& x, float bias, float t) { return activation(x, make(AF::Shrink, bias, t)); },
          "x"_a, nb::kw_only(), "bias"_a = 0.0f, "threshold"_a = 0.5f, "x -/+ bias outside [-threshold, threshold], else 0.");

    auto def_softmax = [&](const char* name, SoftmaxFunction f, const char* doc) {
        def(m, name, [f](const Expression& x, std::optional<std::vector<uint32_t>> axes) { return activation_softmax(x, f, axes); },
              "x"_a, nb::kw_only(), "axes"_a = nb::none(), doc);
    };
    def_softmax("activation_softmax", SoftmaxFunction::Softmax, "Softmax over `axes` (default: the last axis).");
    def_softmax("activation_log_softmax", SoftmaxFunction::LogSoftmax, "Log-softmax over `axes` (default: the last axis).");
    def_softmax("activation_hardmax", SoftmaxFunction::Hardmax, "1 at the first maximum over `axes`, else 0.");
}

}  // namespace dml::binding
