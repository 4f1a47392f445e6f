// Normalization: DML_OPERATOR_BATCH_NORMALIZATION (inference and training, and both gradients),
// MEAN_VARIANCE_NORMALIZATION1 and LOCAL_RESPONSE_NORMALIZATION.
#pragma once
#include <optional>
#include <vector>

#include "../graph.h"
#include "activation.h"

namespace dml {

// Output = fused(scale * (input - mean) / sqrt(variance + epsilon) + bias); the statistics and parameters
// broadcast along their size-1 dimensions.
struct BatchNormalizationDesc : OperatorDesc {
    bool spatial = true;  // deprecated by DirectML (no effect since feature level 4.0); kept for fidelity
    float epsilon = 0;
    FusedActivation fused;
    std::string type_name() const override { return "DML_OPERATOR_BATCH_NORMALIZATION"; }
};

// Computes mean and variance over the dimensions where scale is 1, then normalizes (+ an optional fused add).
// Outputs: output, mean, variance.
struct BatchNormalizationTrainingDesc : OperatorDesc {
    float epsilon = 0;
    FusedActivation fused;
    std::string type_name() const override { return "DML_OPERATOR_BATCH_NORMALIZATION_TRAINING"; }
};

// Inputs: input, input_gradient, mean, variance, scale. Outputs: gradient, scale_gradient, bias_gradient.
struct BatchNormalizationGradDesc : OperatorDesc {
    bool training = false;  // BATCH_NORMALIZATION_TRAINING_GRAD: the gradient also flows through the batch statistics
    float epsilon = 0;
    std::string type_name() const override;
};

struct MeanVarianceNormalizationDesc : OperatorDesc {
    std::vector<uint32_t> axes;  // sorted, unique
    // normalize_mean false: the mean is taken as 0 and the variance is the mean square (RMS normalization):
    // MEAN_VARIANCE_NORMALIZATION2's UseMean, which DirectMLX passes as normalizeMean.
    bool normalize_mean = true;
    bool normalize_variance = true;
    float epsilon = 0;
    FusedActivation fused;
    std::string type_name() const override {
        return normalize_mean ? "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1" : "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION2";
    }
};

struct LocalResponseNormalizationDesc : OperatorDesc {
    bool cross_channel = true;
    uint32_t local_size = 1;
    float alpha = 0, beta = 0, bias = 0;
    std::string type_name() const override { return "DML_OPERATOR_LOCAL_RESPONSE_NORMALIZATION"; }
};

Expression batch_normalization(const Expression& input, const Expression& mean, const Expression& variance,
                               const Expression& scale, const Expression& bias, bool spatial, float epsilon,
                               FusedActivation fused);

struct BatchNormalizationTrainingOutputs {
    Expression output, mean, variance;
};
BatchNormalizationTrainingOutputs batch_normalization_training(const Expression& input, const Expression& scale,
                                                               const Expression& bias,
                                                               const std::optional<Expression>& fused_add,
                                                               float epsilon, FusedActivation fused);

struct BatchNormalizationGradOutputs {
    Expression gradient, scale_gradient, bias_gradient;
};
BatchNormalizationGradOutputs batch_normalization_grad(const Expression& input, const Expression& input_gradient,
                                                       const Expression& mean, const Expression& variance,
                                                       const Expression& scale, float epsilon);
BatchNormalizationGradOutputs batch_normalization_training_grad(const Expression& input,
                                                                const Expression& input_gradient,
                                                                const Expression& mean, const Expression& variance,
                                                                const Expression& scale, float epsilon);

Expression mean_variance_normalization(const Expression& input, const std::optional<Expression>& scale,
                                       const std::optional<Expression>& bias, std::vector<uint32_t> axes,
                                       bool normalize_variance, bool normalize_mean, float epsilon,
                                       FusedActivation fused);

Expression local_response_normalization(const Expression& input, bool cross_channel, uint32_t local_size, float alpha,
                                        float beta, float bias);

}  // namespace dml
