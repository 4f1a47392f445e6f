// Pooling: average_pooling, max_pooling (with indices), roi_align and roi_align_grad, and InterpolationMode.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "../core/ops/pooling.h"
#include "convert.h"
#include "module.h"

namespace dml::binding {

namespace py {  // the Python result types, named as the core's result structs are
DML_OUTPUTS(MaxPoolingOutputs);
DML_OUTPUTS(RoiAlignGradOutputs);
}  // namespace py

namespace {

using U32s = std::vector<uint32_t>;

RoiAlignParams roi_params(ReduceFunction reduction, InterpolationMode interpolation, float scale_x, float scale_y,
                          float input_offset, float output_offset, uint32_t min_samples, uint32_t max_samples,
                          bool align_corners) {
    return {reduction, interpolation, scale_x, scale_y, input_offset, output_offset, min_samples, max_samples,
            align_corners};
}

}  // namespace

void bind_pooling(nb::module_& m) {
    nb::enum_<InterpolationMode>(m, "InterpolationMode", "DML_INTERPOLATION_MODE.")
        .value("NEAREST_NEIGHBOR", InterpolationMode::NearestNeighbor)
        .value("LINEAR", InterpolationMode::Linear);

    Outputs<py::MaxPoolingOutputs> max_pooling_outputs(m, "values indices", {"indices"});
    Outputs<py::RoiAlignGradOutputs> roi_align_grad_outputs(m, "output_gradient output_roi_gradient",
                                                             {"output_gradient", "output_roi_gradient"});

    def(m, "average_pooling",
        [](const Expression& input, U32s window_size, U32s strides, U32s start_padding, U32s end_padding,
           U32s dilations, bool include_padding, U32s output_sizes) {
            return average_pooling(input, strides, window_size, start_padding, end_padding, include_padding,
                                   output_sizes, dilations);
        },
        "input"_a, nb::kw_only(), "window_size"_a, "strides"_a = U32s{}, "start_padding"_a = U32s{},
        "end_padding"_a = U32s{}, "dilations"_a = U32s{}, "include_padding"_a = false, "output_sizes"_a = U32s{},
          "Averages each sliding window over a 4-D or 5-D [N, C, spatial...] input (DML_OPERATOR_AVERAGE_POOLING, "
          "AVERAGE_POOLING1 with dilations). Empty lists take DirectML's defaults; output_sizes may round up.");
    def(m, "max_pooling",
          [max_pooling_outputs](const Expression& input, U32s window_size, U32s strides, U32s start_padding,
                                U32s end_padding, U32s dilations, bool output_indices, U32s output_sizes,
                                nb::handle output_dtype) {
              DataType index_type = to_data_type(output_dtype);
              MaxPoolingOutputs r = max_pooling(input, window_size, strides, start_padding, end_padding, dilations,
                                                output_indices, output_sizes, index_type);
              return max_pooling_outputs(nb::cast(r.values), or_none(r.indices));
          },
          "input"_a, nb::kw_only(), "window_size"_a, "strides"_a = U32s{}, "start_padding"_a = U32s{},
          "end_padding"_a = U32s{}, "dilations"_a = U32s{}, "output_indices"_a = false, "output_sizes"_a = U32s{},
          "output_dtype"_a = nb::cast(DataType::UInt32),
          "The maximum of each sliding window (DML_OPERATOR_MAX_POOLING2): MaxPoolingOutputs(values, indices), "
          "indices (`output_dtype`: UINT32 or UINT64) into the input read as packed 1-D, first maximum on ties; None unless "
          "output_indices.");
    def(m, "roi_align",
          [](const Expression& input, const Expression& roi, const Expression& batch_indices, ReduceFunction reduction,
             InterpolationMode interpolation, float scale_x, float scale_y, float input_offset, float output_offset,
             float out_of_bounds, uint32_t min_samples, uint32_t max_samples, bool align_corners, uint32_t height,
             uint32_t width) {
              return roi_align(input, roi, batch_indices,
                               roi_params(reduction, interpolation, scale_x, scale_y, input_offset, output_offset,
                                          min_samples, max_samples, align_corners),
                               out_of_bounds, height, width);
          },
          "input"_a, "roi"_a, "batch_indices"_a, nb::kw_only(), "reduction_function"_a, "interpolation_mode"_a,
          "spatial_scale_x"_a, "spatial_scale_y"_a, "input_pixel_offset"_a, "output_pixel_offset"_a,
          "out_of_bounds_input_value"_a, "minimum_samples_per_output"_a, "maximum_samples_per_output"_a,
          "align_regions_to_corners"_a, "output_height"_a, "output_width"_a,
          "Crops each [x1, y1, x2, y2] region of the input batch it names and resamples it to "
          "[num_rois, C, output_height, output_width] (DML_OPERATOR_ROI_ALIGN1).");
    def(m, "roi_align_grad",
          [roi_align_grad_outputs](const std::optional<Expression>& input, const Expression& input_gradient,
                                   const Expression& roi, const Expression& batch_indices, ReduceFunction reduction,
                                   InterpolationMode interpolation, float scale_x, float scale_y, float input_offset,
                                   float output_offset, uint32_t min_samples, uint32_t max_samples, bool align_corners,
                                   uint32_t batch_size, uint32_t height, uint32_t width, bool compute_gradient,
                                   bool compute_roi_gradient) {
              RoiAlignGradOutputs r = roi_align_grad(
                  input, input_gradient, roi, batch_indices,
                  roi_params(reduction, interpolation, scale_x, scale_y, input_offset, output_offset, min_samples,
                             max_samples, align_corners),
                  batch_size, height, width, compute_gradient, compute_roi_gradient);
              return roi_align_grad_outputs(or_none(r.output_gradient), or_none(r.output_roi_gradient));
          },
          "input"_a.none(), "input_gradient"_a, "roi"_a, "batch_indices"_a, nb::kw_only(), "reduction_function"_a,
          "interpolation_mode"_a, "spatial_scale_x"_a, "spatial_scale_y"_a, "input_pixel_offset"_a,
          "output_pixel_offset"_a, "minimum_samples_per_output"_a, "maximum_samples_per_output"_a,
          "align_regions_to_corners"_a, "batch_size"_a, "image_height"_a, "image_width"_a,
          "compute_output_gradient"_a, "compute_output_roi_gradient"_a,
          "Gradients of roi_align (DML_OPERATOR_ROI_ALIGN_GRAD): RoiAlignGradOutputs(output_gradient "
          "[batch_size, C, image_height, image_width], output_roi_gradient like roi), each None unless asked for. "
          "`input` (the forward input, or None) is needed for the roi gradient and for MAX.");
}

}  // namespace dml::binding
