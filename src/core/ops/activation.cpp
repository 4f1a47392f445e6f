#include "activation.h"

#include <algorithm>

#include "../errors.h"
#include "common.h"

namespace dml {

std::string activation_type_name(ActivationFunction f) {
    switch (f) {
        case ActivationFunction::None: return "none";
        case ActivationFunction::Identity: return "DML_OPERATOR_ACTIVATION_IDENTITY";
        case ActivationFunction::Relu: return "DML_OPERATOR_ACTIVATION_RELU";
        case ActivationFunction::LeakyRelu: return "DML_OPERATOR_ACTIVATION_LEAKY_RELU";
        case ActivationFunction::Sigmoid: return "DML_OPERATOR_ACTIVATION_SIGMOID";
        case ActivationFunction::Tanh: return "DML_OPERATOR_ACTIVATION_TANH";
        case ActivationFunction::Elu: return "DML_OPERATOR_ACTIVATION_ELU";
        case ActivationFunction::Celu: return "DML_OPERATOR_ACTIVATION_CELU";
        case ActivationFunction::HardSigmoid: return "DML_OPERATOR_ACTIVATION_HARD_SIGMOID";
        case ActivationFunction::Linear: return "DML_OPERATOR_ACTIVATION_LINEAR";
        case ActivationFunction::ParametricSoftplus: return "DML_OPERATOR_ACTIVATION_PARAMETRIC_SOFTPLUS";
        case ActivationFunction::ScaledElu: return "DML_OPERATOR_ACTIVATION_SCALED_ELU";
        case ActivationFunction::ScaledTanh: return "DML_OPERATOR_ACTIVATION_SCALED_TANH";
        case ActivationFunction::Softplus: return "DML_OPERATOR_ACTIVATION_SOFTPLUS";
        case ActivationFunction::Softsign: return "DML_OPERATOR_ACTIVATION_SOFTSIGN";
        case ActivationFunction::ThresholdedRelu: return "DML_OPERATOR_ACTIVATION_THRESHOLDED_RELU";
        case ActivationFunction::Shrink: return "DML_OPERATOR_ACTIVATION_SHRINK";
        case ActivationFunction::Gelu: return "DML_OPERATOR_ACTIVATION_GELU";
        case ActivationFunction::Swish: return "DML_OPERATOR_ACTIVATION_SWISH";
        case ActivationFunction::HardSwish: return "DML_OPERATOR_ACTIVATION_HARD_SWISH";
    }
    return "unknown";
}

std::string SoftmaxDesc::type_name() const {
    switch (function) {
        case SoftmaxFunction::Softmax: return "DML_OPERATOR_ACTIVATION_SOFTMAX1";
        case SoftmaxFunction::LogSoftmax: return "DML_OPERATOR_ACTIVATION_LOG_SOFTMAX1";
        case SoftmaxFunction::Hardmax: return "DML_OPERATOR_ACTIVATION_HARDMAX1";
    }
    return "unknown";
}

namespace {
// DirectML's activation tables: FLOAT32 and FLOAT16; RELU and PARAMETERIZED_RELU also the signed integers.
const std::initializer_list<DataType> kFloat = {DataType::Float32, DataType::Float16};
const std::initializer_list<DataType> kFloatSigned = {DataType::Float32, DataType::Float16, DataType::Int32,
                                                      DataType::Int16, DataType::Int8};
}  // namespace

void check_fused_activation(std::string_view op, const FusedActivation& f, DataType type) {
    if (f.is_none()) return;
    if (f.function == ActivationFunction::Gelu || f.function == ActivationFunction::Swish ||
        f.function == ActivationFunction::HardSwish)
        throw ValueError(std::string(op) + ": " + activation_type_name(f.function) + " cannot be fused");
    if (!is_float(type))
        throw ValueError(std::string(op) + ": a fused activation needs a float tensor, not " +
                         std::string(data_type_name(type)));
}

Expression activation(const Expression& x, FusedActivation f) {
    std::string name = activation_type_name(f.function);
    if (f.is_none()) throw ValueError("activation: no activation function given");
    require_types(name, "input", x, f.function == ActivationFunction::Relu ? kFloatSigned : kFloat);
    auto desc = std::make_shared<ActivationDesc>();
    desc->activation = f;
    return add_single(name, desc, {x}, packed_like(x));
}

Expression activation_parameterized_relu(const Expression& x, const Expression& slope) {
    auto desc = std::make_shared<ParameterizedReluDesc>();
    std::string name = desc->type_name();
    common_graph(name, {&x, &slope});
    require_same_shape_and_type(name, x, slope);
    require_types(name, "input", x, kFloatSigned);
    return add_single(name, desc, {x, slope}, packed_like(x));
}

Expression activation_softmax(const Expression& x, SoftmaxFunction f, std::optional<std::vector<uint32_t>> axes) {
    auto desc = std::make_shared<SoftmaxDesc>();
    desc->function = f;
    std::string name = desc->type_name();
    require_types(name, "input", x, kFloat);
    desc->axes = axes ? normalize_axes(name, *axes, x.desc.rank()) : std::vector<uint32_t>{uint32_t(x.desc.rank() - 1)};
    if (desc->axes.empty()) throw ValueError(name + ": axes must not be empty");
    return add_single(name, desc, {x}, packed_like(x));
}

}  // namespace dml
