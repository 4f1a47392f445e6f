// gemm and convolution with their enums, and the integer / quantized matrix products and convolutions.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "../core/ops/convolution.h"
#include "../core/ops/gemm.h"
#include "convert.h"
#include "module.h"

namespace dml::binding {

namespace {

using Window = std::vector<uint32_t>;
using OptExpr = std::optional<Expression>;

ConvolutionWindow window(Window strides, Window dilations, Window start_padding, Window end_padding,
                         uint32_t group_count) {
    return {std::move(strides), std::move(dilations), std::move(start_padding), std::move(end_padding), group_count};
}

std::optional<DataType> optional_type(nb::handle dtype) {
    return dtype.is_none() ? std::nullopt : std::optional<DataType>(to_data_type(dtype));
}

}  // namespace

void bind_gemm_convolution(nb::module_& m) {
    nb::enum_<MatrixTransform>(m, "MatrixTransform", "DML_MATRIX_TRANSFORM.")
        .value("NONE", MatrixTransform::None)
        .value("TRANSPOSE", MatrixTransform::Transpose);
    nb::enum_<ConvolutionMode>(m, "ConvolutionMode", "DML_CONVOLUTION_MODE.")
        .value("CONVOLUTION", ConvolutionMode::Convolution)
        .value("CROSS_CORRELATION", ConvolutionMode::CrossCorrelation);
    nb::enum_<ConvolutionDirection>(m, "ConvolutionDirection", "DML_CONVOLUTION_DIRECTION.")
        .value("FORWARD", ConvolutionDirection::Forward)
        .value("BACKWARD", ConvolutionDirection::Backward);

    def(m, "gemm", &gemm, "a"_a, "b"_a, "c"_a = nb::none(), nb::kw_only(), "trans_a"_a = MatrixTransform::None,
          "trans_b"_a = MatrixTransform::None, "alpha"_a = 1.0f, "beta"_a = 1.0f,
          "fused_activation"_a = FusedActivation{},
          "alpha * op(a) @ op(b) + beta * c over 4-D [batch, channel, rows, columns] tensors (DML_OPERATOR_GEMM).");
    def(m, "matrix_multiply_integer", &matrix_multiply_integer, "a"_a, "b"_a, "a_zero_point"_a = nb::none(),
          "b_zero_point"_a = nb::none(),
          "(a - a_zero_point) @ (b - b_zero_point) in INT32 for INT8 / UINT8 [B, C, M, K] and [B, C, K, N]; zero "
          "points per tensor or per row of a / column of b (DML_OPERATOR_MATRIX_MULTIPLY_INTEGER).");
    def(m, "quantized_linear_matrix_multiply",
          [](const Expression& a, const Expression& a_scale, const Expression& b, const Expression& b_scale,
             const Expression& output_scale, OptExpr a_zero_point, OptExpr b_zero_point, OptExpr output_zero_point,
             nb::handle output_dtype) {
              return quantized_linear_matrix_multiply(a, a_scale, b, b_scale, output_scale, a_zero_point, b_zero_point,
                                                      output_zero_point, optional_type(output_dtype));
          },
          "a"_a, "a_scale"_a, "b"_a, "b_scale"_a, "output_scale"_a, "a_zero_point"_a = nb::none(),
          "b_zero_point"_a = nb::none(), "output_zero_point"_a = nb::none(), nb::kw_only(),
          "output_dtype"_a = nb::none(),
          "Dequantize a and b, multiply, quantize with the output scale and zero point; the output type is the "
          "output zero point's (else output_dtype, else UINT8) (DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY).");

    def(m, "convolution", &convolution, "input"_a, "filter"_a, "bias"_a = nb::none(), nb::kw_only(),
          "mode"_a = ConvolutionMode::CrossCorrelation, "direction"_a = ConvolutionDirection::Forward,
          "strides"_a = Window{}, "dilations"_a = Window{}, "start_padding"_a = Window{}, "end_padding"_a = Window{},
          "output_padding"_a = Window{}, "group_count"_a = 1u, "fused_activation"_a = FusedActivation{},
          "output_sizes"_a = Window{},
          "N-D convolution over [N, C, spatial...] (DML_OPERATOR_CONVOLUTION); empty lists take DirectML's defaults. "
          "A BACKWARD (transposed) convolution takes a filter [C_in, C_out / groups, k...].");
    def(m, "convolution_integer",
          [](const Expression& input, const Expression& filter, OptExpr input_zero_point, OptExpr filter_zero_point,
             Window strides, Window dilations, Window start_padding, Window end_padding, uint32_t group_count,
             Window output_sizes) {
              return convolution_integer(input, filter, input_zero_point, filter_zero_point,
                                         window(strides, dilations, start_padding, end_padding, group_count),
                                         output_sizes);
          },
          "input"_a, "filter"_a, "input_zero_point"_a = nb::none(), "filter_zero_point"_a = nb::none(), nb::kw_only(),
          "strides"_a = Window{}, "dilations"_a = Window{}, "start_padding"_a = Window{}, "end_padding"_a = Window{},
          "group_count"_a = 1u, "output_sizes"_a = Window{},
          "Forward 2-D convolution of INT8 / UINT8 data minus zero points into INT32; output_sizes, where given, "
          "must be the computed ones (DML_OPERATOR_CONVOLUTION_INTEGER).");
    def(m, "quantized_linear_convolution",
          [](const Expression& input, const Expression& input_scale, const Expression& filter,
             const Expression& filter_scale, const Expression& output_scale, OptExpr input_zero_point,
             OptExpr filter_zero_point, OptExpr bias, OptExpr output_zero_point, Window strides, Window dilations,
             Window start_padding, Window end_padding, uint32_t group_count, Window output_sizes,
             nb::handle output_dtype) {
              return quantized_linear_convolution(input, input_scale, filter, filter_scale, output_scale,
                                                  input_zero_point, filter_zero_point, bias, output_zero_point,
                                                  window(strides, dilations, start_padding, end_padding, group_count),
                                                  optional_type(output_dtype), output_sizes);
          },
          "input"_a, "input_scale"_a, "filter"_a, "filter_scale"_a, "output_scale"_a,
          "input_zero_point"_a = nb::none(), "filter_zero_point"_a = nb::none(), "bias"_a = nb::none(),
          "output_zero_point"_a = nb::none(), nb::kw_only(), "strides"_a = Window{}, "dilations"_a = Window{},
          "start_padding"_a = Window{}, "end_padding"_a = Window{}, "group_count"_a = 1u,
          "output_sizes"_a = Window{}, "output_dtype"_a = nb::none(),
          "Dequantize input and filter, convolve, add the INT32 bias, quantize with the output scale and zero point; "
          "output_sizes, where given, must be the computed ones (DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION).");
}

}  // namespace dml::binding
