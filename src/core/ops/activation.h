// Activation operators (DML_OPERATOR_ACTIVATION_*) and FusedActivation, the activation an operator may apply to
// its output (DirectML's fused activation desc).
#pragma once
#include <optional>
#include <vector>

#include "../graph.h"

namespace dml {

// The element-wise activations; each is one DML_OPERATOR_ACTIVATION_* type with up to three float parameters.
enum class ActivationFunction {
    None,  // no fused activation
    Identity,
    Relu,
    LeakyRelu,          // alpha
    Sigmoid,
    Tanh,
    Elu,                // alpha
    Celu,               // alpha
    HardSigmoid,        // alpha, beta
    Linear,             // alpha, beta
    ParametricSoftplus, // alpha, beta
    ScaledElu,          // alpha, gamma
    ScaledTanh,         // alpha, beta
    Softplus,           // steepness (alpha)
    Softsign,
    ThresholdedRelu,    // alpha
    Shrink,             // bias (alpha), threshold (beta)
    // Not in DirectML's fused-activation list: builders refuse them as a fused activation, though compile's
    // fold (fuse_epilogues.h) may set one on the operator before.
    Gelu,
    Swish,              // sigmoid input scale (alpha)
    HardSwish,          // alpha, beta
};

struct FusedActivation {
    ActivationFunction function = ActivationFunction::None;
    float alpha = 0.0f;
    float beta = 0.0f;

    bool is_none() const { return function == ActivationFunction::None; }
};

std::string activation_type_name(ActivationFunction f);  // "DML_OPERATOR_ACTIVATION_RELU"

struct ActivationDesc : OperatorDesc {
    FusedActivation activation;  // the function and its parameters
    std::string type_name() const override { return activation_type_name(activation.function); }
};

// Softmax, log-softmax and hardmax over a set of axes (DML_OPERATOR_ACTIVATION_SOFTMAX1 and friends).
enum class SoftmaxFunction { Softmax, LogSoftmax, Hardmax };
struct SoftmaxDesc : OperatorDesc {
    SoftmaxFunction function;
    std::vector<uint32_t> axes;  // sorted, unique
    std::string type_name() const override;
};

// DML_OPERATOR_ACTIVATION_PARAMETERIZED_RELU: x if x >= 0 else slope * x, the slope a tensor of x's shape.
struct ParameterizedReluDesc : OperatorDesc {
    std::string type_name() const override { return "DML_OPERATOR_ACTIVATION_PARAMETERIZED_RELU"; }
};

Expression activation(const Expression& x, FusedActivation f);  // one builder for every element-wise activation
Expression activation_parameterized_relu(const Expression& x, const Expression& slope);
Expression activation_softmax(const Expression& x, SoftmaxFunction f, std::optional<std::vector<uint32_t>> axes);

// Validates that an operator producing `type` can fuse `f` (DirectML fuses the activations of its list, on floats).
void check_fused_activation(std::string_view op, const FusedActivation& f, DataType type);

}  // namespace dml
