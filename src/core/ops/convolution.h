// DML_OPERATOR_CONVOLUTION: forward and backward (transposed), cross-correlation or convolution, grouped and
// dilated, over 1 to 3 spatial dimensions, with optional bias and fused activation.
#pragma once
#include <optional>
#include <vector>

#include "../graph.h"
#include "activation.h"

namespace dml {

enum class ConvolutionMode { Convolution, CrossCorrelation };
enum class ConvolutionDirection { Forward, Backward };

struct ConvolutionDesc : OperatorDesc {
    ConvolutionMode mode = ConvolutionMode::CrossCorrelation;
    ConvolutionDirection direction = ConvolutionDirection::Forward;
    std::vector<uint32_t> strides, dilations, start_padding, end_padding, output_padding;  // one per spatial dim
    uint32_t group_count = 1;
    FusedActivation fused;
    std::string type_name() const override { return "DML_OPERATOR_CONVOLUTION"; }
};

Expression convolution(const Expression& input, const Expression& filter, const std::optional<Expression>& bias,
                       ConvolutionMode mode, ConvolutionDirection direction, std::vector<uint32_t> strides,
                       std::vector<uint32_t> dilations, std::vector<uint32_t> start_padding,
                       std::vector<uint32_t> end_padding, std::vector<uint32_t> output_padding, uint32_t group_count,
                       FusedActivation fused, std::vector<uint32_t> output_sizes);

}  // namespace dml
