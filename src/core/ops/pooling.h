// Pooling: DML_OPERATOR_AVERAGE_POOLING(1), MAX_POOLING2 (with indices), ROI_ALIGN1 and ROI_ALIGN_GRAD.
#pragma once
#include <optional>
#include <vector>

#include "../graph.h"
#include "reduce.h"

namespace dml {

// DML_INTERPOLATION_MODE. Declared here because ROI align is its first user; the resampling family shares it.
enum class InterpolationMode { NearestNeighbor, Linear };

// The sliding window of a pooling operator, one entry per spatial dimension (2 or 3).
struct PoolingWindow {
    std::vector<uint32_t> strides, window_size, start_padding, end_padding, dilations;
};

struct AveragePoolingDesc : OperatorDesc {
    PoolingWindow window;
    bool include_padding = false;
    // AVERAGE_POOLING1 is the version with dilations; without them it is the original operator.
    std::string type_name() const override;
};

struct MaxPoolingDesc : OperatorDesc {
    PoolingWindow window;
    bool output_indices = false;  // a second output: each maximum's index into the input, read as packed 1-D
    std::string type_name() const override { return "DML_OPERATOR_MAX_POOLING2"; }
};

// The parameters ROI_ALIGN1 and ROI_ALIGN_GRAD share.
struct RoiAlignParams {
    ReduceFunction reduction = ReduceFunction::Average;  // AVERAGE or MAX
    InterpolationMode interpolation = InterpolationMode::Linear;
    float spatial_scale_x = 1, spatial_scale_y = 1;
    float input_pixel_offset = 0.5f, output_pixel_offset = -0.5f;
    uint32_t minimum_samples_per_output = 1, maximum_samples_per_output = UINT32_MAX;
    bool align_regions_to_corners = false;
};

struct RoiAlignDesc : OperatorDesc {
    RoiAlignParams params;
    float out_of_bounds_input_value = 0;
    std::string type_name() const override { return "DML_OPERATOR_ROI_ALIGN1"; }
};

struct RoiAlignGradDesc : OperatorDesc {
    RoiAlignParams params;
    bool compute_output_gradient = true, compute_output_roi_gradient = false;  // which outputs exist, in order
    std::string type_name() const override { return "DML_OPERATOR_ROI_ALIGN_GRAD"; }
};

// Empty lists take the defaults (stride and dilation 1, padding 0). `output_sizes`, when given, may pick for each
// spatial dimension the computed (floored) size or the ceiling-mode size one larger.
Expression average_pooling(const Expression& input, std::vector<uint32_t> strides, std::vector<uint32_t> window_size,
                           std::vector<uint32_t> start_padding, std::vector<uint32_t> end_padding,
                           bool include_padding, std::vector<uint32_t> output_sizes, std::vector<uint32_t> dilations);

struct MaxPoolingOutputs {
    Expression values;
    std::optional<Expression> indices;  // only when asked for
};
MaxPoolingOutputs max_pooling(const Expression& input, std::vector<uint32_t> window_size, std::vector<uint32_t> strides,
                              std::vector<uint32_t> start_padding, std::vector<uint32_t> end_padding,
                              std::vector<uint32_t> dilations, bool output_indices, std::vector<uint32_t> output_sizes,
                              DataType index_type);

Expression roi_align(const Expression& input, const Expression& roi, const Expression& batch_indices,
                     const RoiAlignParams& params, float out_of_bounds_input_value, uint32_t output_height,
                     uint32_t output_width);

struct RoiAlignGradOutputs {
    std::optional<Expression> output_gradient, output_roi_gradient;  // each only when asked for
};
RoiAlignGradOutputs roi_align_grad(const std::optional<Expression>& input, const Expression& input_gradient,
                                   const Expression& roi, const Expression& batch_indices, const RoiAlignParams& params,
                                   uint32_t batch_size, uint32_t image_height, uint32_t image_width,
                                   bool compute_output_gradient, bool compute_output_roi_gradient);

}  // namespace dml
