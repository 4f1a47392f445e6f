// DML_OPERATOR_CONVOLUTION: forward and backward (transposed), cross-correlation or convolution, grouped and
// dilated, over 1 to 3 spatial dimensions, with optional bias and fused activation; and the integer forms
// DML_OPERATOR_CONVOLUTION_INTEGER and DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION (4-D, forward, cross-correlation).
#pragma once
#include <optional>
#include <vector>

#include "../graph.h"
#include "activation.h"

namespace dml {

enum class ConvolutionMode { Convolution, CrossCorrelation };
enum class ConvolutionDirection { Forward, Backward };

// The window every convolution has: one entry per spatial dimension.
struct ConvolutionWindow {
    std::vector<uint32_t> strides, dilations, start_padding, end_padding;
    uint32_t group_count = 1;
};

// Forward filters are [out_channels, in_channels / groups, k...]; backward ones [in_channels, out_channels / groups,
// k...]. A backward convolution is the adjoint of the forward one of the same mode, so CROSS_CORRELATION + BACKWARD
// is the usual transposed convolution.
struct ConvolutionDesc : OperatorDesc, ConvolutionWindow {
    ConvolutionMode mode = ConvolutionMode::CrossCorrelation;
    ConvolutionDirection direction = ConvolutionDirection::Forward;
    std::vector<uint32_t> output_padding;
    FusedActivation fused;
    std::string type_name() const override { return "DML_OPERATOR_CONVOLUTION"; }
};

// (input - input_zero_point) convolved with (filter - filter_zero_point) into INT32. Inputs in DirectML's order:
// input, input_zero_point, filter, filter_zero_point. The input zero point is per tensor, the filter's per tensor
// or per output channel ([1, out_channels, 1, 1]).
struct ConvolutionIntegerDesc : OperatorDesc, ConvolutionWindow {
    std::string type_name() const override { return "DML_OPERATOR_CONVOLUTION_INTEGER"; }
};

// Dequantizes input and filter, convolves, adds the INT32 bias (scaled by input_scale * filter_scale), quantizes
// with the output scale and zero point. Inputs: input, input_scale, input_zero_point, filter, filter_scale,
// filter_zero_point, bias, output_scale, output_zero_point. Filter parameters may be per output channel.
struct QuantizedLinearConvolutionDesc : OperatorDesc, ConvolutionWindow {
    std::string type_name() const override { return "DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION"; }
};

Expression convolution(const Expression& input, const Expression& filter, const std::optional<Expression>& bias,
                       ConvolutionMode mode, ConvolutionDirection direction, std::vector<uint32_t> strides,
                       std::vector<uint32_t> dilations, std::vector<uint32_t> start_padding,
                       std::vector<uint32_t> end_padding, std::vector<uint32_t> output_padding, uint32_t group_count,
                       FusedActivation fused, std::vector<uint32_t> output_sizes);
Expression convolution_integer(const Expression& input, const Expression& filter,
                               const std::optional<Expression>& input_zero_point,
                               const std::optional<Expression>& filter_zero_point, ConvolutionWindow window,
                               const std::vector<uint32_t>& output_sizes);
// Forward convolutions' `output_sizes`, where not empty, must equal the computed sizes (DirectMLX's parameter).
// The output type is the output zero point's; without one, `output_type` (UINT8 when not given).
Expression quantized_linear_convolution(const Expression& input, const Expression& input_scale,
                                        const Expression& filter, const Expression& filter_scale,
                                        const Expression& output_scale, const std::optional<Expression>& input_zero_point,
                                        const std::optional<Expression>& filter_zero_point,
                                        const std::optional<Expression>& bias,
                                        const std::optional<Expression>& output_zero_point, ConvolutionWindow window,
                                        std::optional<DataType> output_type, const std::vector<uint32_t>& output_sizes);

}  // namespace dml
