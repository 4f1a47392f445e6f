#include "normalization.h"

#include "../errors.h"
#include "common.h"

namespace dml {

namespace {

const std::initializer_list<DataType> kFloat16To32 = {DataType::Float32, DataType::Float16};

// `param` has the input's rank and type, and each of its sizes is 1 (broadcast) or the input's.
void require_broadcastable(const std::string& op, std::string_view arg, const Expression& param,
                           const Expression& input) {
    bool fits = param.desc.rank() == input.desc.rank() && param.data_type() == input.data_type();
    for (size_t i = 0; fits && i < param.desc.rank(); ++i)
        fits = param.sizes()[i] == 1 || param.sizes()[i] == input.sizes()[i];
    if (!fits)
        throw ValueError(op + ": " + std::string(arg) + " " + param.desc.to_string() +
                         " must have the type and rank of input " + input.desc.to_string() +
                         ", each size 1 or the input's");
}

void require_same(const std::string& op, std::string_view arg, const Expression& e, const Expression& like,
                  std::string_view like_name) {
    if (e.sizes() != like.sizes() || e.data_type() != like.data_type())
        throw ValueError(op + ": " + std::string(arg) + " " + e.desc.to_string() + " must match " +
                         std::string(like_name) + " " + like.desc.to_string());
}

void check_input(const std::string& op, const Expression& input) {
    require_types(op, "input", input, kFloat16To32);
    require_rank(op, "input", input, 1, kMaxDimensions);
}

BatchNormalizationGradOutputs grad(bool training, const Expression& input, const Expression& input_gradient,
                                   const Expression& mean, const Expression& variance, const Expression& scale,
                                   float epsilon) {
    auto desc = std::make_shared<BatchNormalizationGradDesc>();
    desc->training = training;
    desc->epsilon = epsilon;
    const std::string op = desc->type_name();
    common_graph(op, {&input, &input_gradient, &mean, &variance, &scale});
    check_input(op, input);
    require_same(op, "input_gradient", input_gradient, input, "input");
    require_broadcastable(op, "mean", mean, input);
    require_same(op, "variance", variance, mean, "mean");
    require_same(op, "scale", scale, mean, "mean");
    auto e = input.graph->add_node(desc, {input, input_gradient, mean, variance, scale},
                                   {packed_like(input), packed_like(mean), packed_like(mean)});
    return {e[0], e[1], e[2]};
}

}  // namespace

std::string BatchNormalizationGradDesc::type_name() const {
    return training ? "DML_OPERATOR_BATCH_NORMALIZATION_TRAINING_GRAD" : "DML_OPERATOR_BATCH_NORMALIZATION_GRAD";
}

Expression batch_normalization(const Expression& input, const Expression& mean, const Expression& variance,
                               const Expression& scale, const Expression& bias, bool spatial, float epsilon,
                               FusedActivation fused) {
    auto desc = std::make_shared<BatchNormalizationDesc>();
    const std::string op = desc->type_name();
    common_graph(op, {&input, &mean, &variance, &scale, &bias});
    check_input(op, input);
    require_broadcastable(op, "mean", mean, input);
    require_broadcastable(op, "variance", variance, input);
    require_broadcastable(op, "scale", scale, input);
    require_broadcastable(op, "bias", bias, input);
    check_fused_activation(op, fused, input.data_type());
    desc->spatial = spatial;
    desc->epsilon = epsilon;
    desc->fused = fused;
    return add_single(op, desc, {input, mean, variance, scale, bias}, packed_like(input));
}

BatchNormalizationTrainingOutputs batch_normalization_training(const Expression& input, const Expression& scale,
                                                               const Expression& bias,
                                                               const std::optional<Expression>& fused_add,
                                                               float epsilon, FusedActivation fused) {
    auto desc = std::make_shared<BatchNormalizationTrainingDesc>();
    const std::string op = desc->type_name();
    common_graph(op, {&input, &scale, &bias, fused_add ? &*fused_add : nullptr});
    check_input(op, input);
    require_broadcastable(op, "scale", scale, input);
    require_same(op, "bias", bias, scale, "scale");
    if (fused_add) require_same(op, "fused_add", *fused_add, input, "input");
    check_fused_activation(op, fused, input.data_type());
    desc->epsilon = epsilon;
    desc->fused = fused;
    auto e = input.graph->add_node(desc, {input, scale, bias, fused_add},
                                   {packed_like(input), packed_like(scale), packed_like(scale)});
    return {e[0], e[1], e[2]};
}

BatchNormalizationGradOutputs batch_normalization_grad(const Expression& input, const Expression& input_gradient,
                                                       const Expression& mean, const Expression& variance,
                                                       const Expression& scale, float epsilon) {
    return grad(false, input, input_gradient, mean, variance, scale, epsilon);
}

BatchNormalizationGradOutputs batch_normalization_training_grad(const Expression& input,
                                                                const Expression& input_gradient,
                                                                const Expression& mean, const Expression& variance,
                                                                const Expression& scale, float epsilon) {
    return grad(true, input, input_gradient, mean, variance, scale, epsilon);
}

Expression mean_variance_normalization(const Expression& input, const std::optional<Expression>& scale,
                                       const std::optional<Expression>& bias, std::vector<uint32_t> axes,
                                       bool normalize_variance, bool normalize_mean, float epsilon,
                                       FusedActivation fused) {
    auto desc = std::make_shared<MeanVarianceNormalizationDesc>();
    desc->normalize_mean = normalize_mean;  // first: it names the operator (MEAN_VARIANCE_NORMALIZATION2 if false)
    const std::string op = desc->type_name();
    common_graph(op, {&input, scale ? &*scale : nullptr, bias ? &*bias : nullptr});
    check_input(op, input);
    desc->axes = normalize_axes(op, std::move(axes), input.desc.rank());
    if (desc->axes.empty()) throw ValueError(op + ": axes must name at least one axis");
    if (scale) require_broadcastable(op, "scale", *scale, input);
    if (bias) require_broadcastable(op, "bias", *bias, input);
    check_fused_activation(op, fused, input.data_type());
    desc->normalize_variance = normalize_variance;
    desc->epsilon = epsilon;
    desc->fused = fused;
    return add_single(op, desc, {input, scale, bias}, packed_like(input));
}

Expression local_response_normalization(const Expression& input, bool cross_channel, uint32_t local_size, float alpha,
                                        float beta, float bias) {
    auto desc = std::make_shared<LocalResponseNormalizationDesc>();
    const std::string op = desc->type_name();
    require_types(op, "input", input, kFloat16To32);
    require_rank(op, "input", input, 4, 4);
    if (local_size == 0) throw ValueError(op + ": local_size must be at least 1");
    desc->cross_channel = cross_channel;
    desc->local_size = local_size;
    desc->alpha = alpha;
    desc->beta = beta;
    desc->bias = bias;
    return add_single(op, desc, {input}, packed_like(input));
}

}  // namespace dml
