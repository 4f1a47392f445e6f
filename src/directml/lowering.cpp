#include "lowering.h"

#include <cstring>

#include "../core/errors.h"
#include "../executor/scalar_math.h"

namespace dml::directml {

DML_TENSOR_DESC DescStore::tensor_value(const TensorDesc& desc, DML_TENSOR_FLAGS flags) {
    DML_BUFFER_TENSOR_DESC buffer = {};
    buffer.DataType = DML_TENSOR_DATA_TYPE(desc.data_type);  // dml::DataType follows DML_TENSOR_DATA_TYPE
    buffer.Flags = flags;
    buffer.DimensionCount = UINT(desc.rank());
    buffer.Sizes = array(desc.sizes);
    buffer.Strides = desc.strides ? array(*desc.strides) : nullptr;
    buffer.TotalTensorSizeInBytes = desc.total_tensor_size_in_bytes();
    return {DML_TENSOR_TYPE_BUFFER, add(buffer)};
}

const DML_TENSOR_DESC* DescStore::tensor(const TensorDesc& desc, DML_TENSOR_FLAGS flags) {
    return add(tensor_value(desc, flags));
}

namespace {

struct ActivationInfo {
    DML_OPERATOR_TYPE type;
    int parameters;  // how many of alpha, beta DirectML's description has
};

ActivationInfo activation_info(ActivationFunction f) {
    switch (f) {
        case ActivationFunction::Identity: return {DML_OPERATOR_ACTIVATION_IDENTITY, 0};
        case ActivationFunction::Relu: return {DML_OPERATOR_ACTIVATION_RELU, 0};
        case ActivationFunction::LeakyRelu: return {DML_OPERATOR_ACTIVATION_LEAKY_RELU, 1};
        case ActivationFunction::Sigmoid: return {DML_OPERATOR_ACTIVATION_SIGMOID, 0};
        case ActivationFunction::Tanh: return {DML_OPERATOR_ACTIVATION_TANH, 0};
        case ActivationFunction::Elu: return {DML_OPERATOR_ACTIVATION_ELU, 1};
        case ActivationFunction::Celu: return {DML_OPERATOR_ACTIVATION_CELU, 1};
        case ActivationFunction::HardSigmoid: return {DML_OPERATOR_ACTIVATION_HARD_SIGMOID, 2};
        case ActivationFunction::Linear: return {DML_OPERATOR_ACTIVATION_LINEAR, 2};
        case ActivationFunction::ParametricSoftplus: return {DML_OPERATOR_ACTIVATION_PARAMETRIC_SOFTPLUS, 2};
        case ActivationFunction::ScaledElu: return {DML_OPERATOR_ACTIVATION_SCALED_ELU, 2};
        case ActivationFunction::ScaledTanh: return {DML_OPERATOR_ACTIVATION_SCALED_TANH, 2};
        case ActivationFunction::Softplus: return {DML_OPERATOR_ACTIVATION_SOFTPLUS, 1};
        case ActivationFunction::Softsign: return {DML_OPERATOR_ACTIVATION_SOFTSIGN, 0};
        case ActivationFunction::ThresholdedRelu: return {DML_OPERATOR_ACTIVATION_THRESHOLDED_RELU, 1};
        case ActivationFunction::Shrink: return {DML_OPERATOR_ACTIVATION_SHRINK, 2};
        case ActivationFunction::Gelu: return {DML_OPERATOR_ACTIVATION_GELU, 0};
        case ActivationFunction::Swish: return {DML_OPERATOR_ACTIVATION_SWISH, 1};
        case ActivationFunction::HardSwish: return {DML_OPERATOR_ACTIVATION_HARD_SWISH, 2};
        case ActivationFunction::None: break;
    }
    throw ValueError("the directml executor has no activation for this function");
}

const LoweringTable& lowering_table() {
    static const LoweringTable table = [] {
        LoweringTable t;
        register_elementwise_lowerings(t);
        register_activation_lowerings(t);
        register_gemm_lowerings(t);
        register_convolution_lowerings(t);
        register_reduce_lowerings(t);
        register_normalization_lowerings(t);
        register_pooling_lowerings(t);
        register_data_movement_lowerings(t);
        register_indexing_lowerings(t);
        register_resampling_lowerings(t);
        register_generation_lowerings(t);
        register_attention_lowerings(t);
        register_recurrent_lowerings(t);
        return t;
    }();
    return table;
}

}  // namespace

DML_OPERATOR_DESC activation_desc(DescStore& store, const FusedActivation& f, const DML_TENSOR_DESC* input,
                                  const DML_TENSOR_DESC* output) {
    ActivationInfo info = activation_info(f.function);
    DML_ACTIVATION_OPERATOR_DESC desc = {input, output, {info.parameters > 0 ? f.alpha : 0.0f,
                                                         info.parameters > 1 ? f.beta : 0.0f}};
    return {info.type, store.add(desc)};
}

bool fusable(const FusedActivation& f) {
    return f.function != ActivationFunction::Gelu && f.function != ActivationFunction::Swish &&
           f.function != ActivationFunction::HardSwish;
}

DML_TENSOR_FLAGS LoweringContext::flags(size_t i) const {
    return owned_(node.inputs[i]->value) ? DML_TENSOR_FLAG_OWNED_BY_DML : DML_TENSOR_FLAG_NONE;
}

const DML_TENSOR_DESC* LoweringContext::input(size_t i) const {
    return i < node.inputs.size() && node.inputs[i] ? store.tensor(node.inputs[i]->desc, flags(i)) : nullptr;
}

DML_TENSOR_DESC LoweringContext::input_value(size_t i) const {
    return store.tensor_value(node.inputs.at(i)->desc, flags(i));
}

const DML_TENSOR_DESC* LoweringContext::output(size_t i) const { return store.tensor(node.outputs.at(i)); }

const DML_OPERATOR_DESC* LoweringContext::fused(const FusedActivation& f) {
    if (f.is_none()) return nullptr;
    if (!fusable(f)) {
        unfused_ = f;
        return nullptr;
    }
    return store.add(activation_desc(store, f, nullptr, nullptr));
}

const DML_OPERATOR_DESC* LoweringContext::after(const FusedActivation& f) {
    unfused_ = f;
    return nullptr;
}

std::vector<std::type_index> lowered_operator_types() {
    std::vector<std::type_index> types;
    for (const auto& entry : lowering_table()) types.push_back(entry.first);
    return types;
}

const Lowering* find_lowering(const Node& node) {
    const auto& table = lowering_table();
    auto it = table.find(std::type_index(typeid(*node.desc)));
    return it == table.end() ? nullptr : &it->second;
}

DML_SCALAR_UNION scalar(DataType type, double value) {
    DML_SCALAR_UNION s = {};
    visit_data_type(type, [&]<class T>() {
        T typed = T(typed_bound<T>(value));  // integers saturate, as our kernels take CLIP1's bounds
        static_assert(sizeof(T) <= sizeof s.Bytes);
        std::memcpy(s.Bytes, &typed, sizeof typed);
    });
    return s;
}

}  // namespace dml::directml
