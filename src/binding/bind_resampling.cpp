// Resampling: upsample_2d, resample, resample_grad and value_scale_2d. Their enums are bound by the families that
// declared them first: InterpolationMode with pooling, AxisDirection with reduce (both run before this file).
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include "../core/errors.h"
#include "../core/ops/resampling.h"
#include "module.h"

namespace dml::binding {

void bind_resampling(nb::module_& m) {
    def(m, "upsample_2d",
          [](const Expression& input, std::vector<uint32_t> scale_size, InterpolationMode mode) {
              if (scale_size.size() != 2)
                  throw ValueError("DML_OPERATOR_UPSAMPLE_2D: scale_size is (height, width), got " +
                                   std::to_string(scale_size.size()) + " values");
              return upsample_2d(input, scale_size[0], scale_size[1], mode);
          },
          "input"_a, nb::kw_only(), "scale_size"_a, "interpolation_mode"_a,
          "[N, C, (D,) H, W] upsampled by the integer scale_size (height, width), nearest neighbour or bilinear "
          "over pixel centres (DML_OPERATOR_UPSAMPLE_2D).");
    // rounding_direction: DirectMLX's Resample defaults to INCREASING. Its ResampleGrad takes none and builds
    // RESAMPLE_GRAD, which rounds down (the example of DirectML's docs): so resample_grad defaults to DECREASING.
    def(m, "resample", &resample, "input"_a, nb::kw_only(), "output_sizes"_a, "mode"_a,
          "rounding_direction"_a = AxisDirection::Increasing, "scales"_a = std::vector<float>{},
          "input_pixel_offsets"_a = std::vector<float>{}, "output_pixel_offsets"_a = std::vector<float>{},
          "antialiased"_a = false,
          "input resampled to output_sizes (1 to 4 dimensions): output = (input + input_pixel_offset) * scale + "
          "output_pixel_offset per dimension, edges clamped; NEAREST_NEIGHBOR rounds the input coordinate up "
          "(INCREASING, the default) or down (DECREASING). Empty lists: scales output/input, offsets 0.5 and -0.5 "
          "(DML_OPERATOR_RESAMPLE2). antialiased: LINEAR scaling a dimension down stretches its filter by "
          "1 / scale, weights normalized to sum 1, inputs past the edges read at the edge (DML_OPERATOR_RESAMPLE3, "
          "as ONNX Resize's antialias).");
    def(m, "resample_grad", &resample_grad, "input_gradient"_a, nb::kw_only(), "output_sizes"_a,
          "mode"_a, "rounding_direction"_a = AxisDirection::Decreasing,
          "scales"_a = std::vector<float>{}, "input_pixel_offsets"_a = std::vector<float>{},
          "output_pixel_offsets"_a = std::vector<float>{},
          "The gradient of resample from output_sizes to input_gradient's sizes, with the forward parameters "
          "(scales default to input_gradient / output sizes; rounding down, as DirectMLX's ResampleGrad does) "
          "(DML_OPERATOR_RESAMPLE_GRAD1).");
    def(m, "value_scale_2d", &value_scale_2d, "input"_a, nb::kw_only(), "scale"_a, "bias"_a,
          "scale * input + bias[channel] over [N, C, H, W] with C = len(bias), 1 or 3 "
          "(DML_OPERATOR_VALUE_SCALE_2D).");
}

}  // namespace dml::binding
