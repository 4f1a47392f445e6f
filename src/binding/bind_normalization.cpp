// Normalization: batch_normalization (inference, training and their gradients), mean_variance_normalization and
// local_response_normalization.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "../core/ops/normalization.h"
#include "module.h"

namespace dml::binding {

namespace py {  // the Python result types, named as the core's result structs are
DML_OUTPUTS(BatchNormalizationTrainingOutputs);
DML_OUTPUTS(BatchNormalizationGradOutputs);
}  // namespace py

void bind_normalization(nb::module_& m) {
    Outputs<py::BatchNormalizationTrainingOutputs> training_outputs(m, "output mean variance");
    Outputs<py::BatchNormalizationGradOutputs> grad_outputs(m, "gradient scale_gradient bias_gradient");
    auto grad_tuple = [grad_outputs](const BatchNormalizationGradOutputs& r) {
        return grad_outputs(nb::cast(r.gradient), nb::cast(r.scale_gradient), nb::cast(r.bias_gradient));
    };

    def(m, "batch_normalization", &batch_normalization, "input"_a, "mean"_a, "variance"_a, "scale"_a, "bias"_a,
          nb::kw_only(), "spatial"_a, "epsilon"_a, "fused_activation"_a = FusedActivation{},
          "fused(scale * (input - mean) / sqrt(variance + epsilon) + bias), the statistics broadcast along their "
          "size-1 dimensions (DML_OPERATOR_BATCH_NORMALIZATION; `spatial` has no effect, as in DirectML).");
    def(m, "batch_normalization_training",
          [training_outputs](const Expression& input, const Expression& scale, const Expression& bias,
                             const std::optional<Expression>& fused_add, float epsilon, FusedActivation fused) {
              auto r = batch_normalization_training(input, scale, bias, fused_add, epsilon, fused);
              return training_outputs(nb::cast(r.output), nb::cast(r.mean), nb::cast(r.variance));
          },
          "input"_a, "scale"_a, "bias"_a, "fused_add"_a = nb::none(), nb::kw_only(), "epsilon"_a,
          "fused_activation"_a = FusedActivation{},
          "Batch normalization with the statistics computed over the dimensions where scale is 1 "
          "(DML_OPERATOR_BATCH_NORMALIZATION_TRAINING): BatchNormalizationTrainingOutputs(output, mean, variance).");
    def(m, "batch_normalization_grad",
          [grad_tuple](const Expression& input, const Expression& input_gradient, const Expression& mean,
                       const Expression& variance, const Expression& scale, float epsilon) {
              return grad_tuple(batch_normalization_grad(input, input_gradient, mean, variance, scale, epsilon));
          },
          "input"_a, "input_gradient"_a, "mean"_a, "variance"_a, "scale"_a, nb::kw_only(), "epsilon"_a,
          "Gradients of batch_normalization (DML_OPERATOR_BATCH_NORMALIZATION_GRAD): "
          "BatchNormalizationGradOutputs(gradient, scale_gradient, bias_gradient).");
    def(m, "batch_normalization_training_grad",
          [grad_tuple](const Expression& input, const Expression& input_gradient, const Expression& mean,
                       const Expression& variance, const Expression& scale, float epsilon) {
              return grad_tuple(
                  batch_normalization_training_grad(input, input_gradient, mean, variance, scale, epsilon));
          },
          "input"_a, "input_gradient"_a, "mean"_a, "variance"_a, "scale"_a, nb::kw_only(), "epsilon"_a,
          "Gradients of batch_normalization_training (DML_OPERATOR_BATCH_NORMALIZATION_TRAINING_GRAD): "
          "BatchNormalizationGradOutputs(gradient, scale_gradient, bias_gradient).");
    def(m, "mean_variance_normalization", &mean_variance_normalization, "input"_a, "scale"_a = nb::none(),
          "bias"_a = nb::none(), nb::kw_only(), "axes"_a, "normalize_variance"_a, "normalize_mean"_a = true,
          "epsilon"_a, "fused_activation"_a = FusedActivation{},
          "fused(scale * (input - mean) / sqrt(variance + epsilon) + bias) with mean and variance over `axes` "
          "(DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1); scale and bias are optional and broadcast. normalize_mean "
          "False takes the mean as 0, so the variance is the mean square (RMS normalization; "
          "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION2's UseMean).");
    def(m, "local_response_normalization", &local_response_normalization, "input"_a, nb::kw_only(), "cross_channel"_a,
          "local_size"_a, "alpha"_a, "beta"_a, "bias"_a,
          "input / (bias + alpha / local_size * sum of squares in the local region)^beta over a 4-D input "
          "(DML_OPERATOR_LOCAL_RESPONSE_NORMALIZATION).");
}

}  // namespace dml::binding
