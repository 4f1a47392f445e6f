// DML_AVERAGE_POOLING(1)_OPERATOR_DESC and DML_MAX_POOLING2_OPERATOR_DESC.
#include "../core/ops/pooling.h"
#include "lowering.h"

namespace dml::directml {

void register_pooling_lowerings(LoweringTable& t) {
    add_lowering<AveragePoolingDesc>(t, [](LoweringContext& c, const AveragePoolingDesc& d) {
        const PoolingWindow& w = d.window;
        DescStore& s = c.store;
        UINT spatial = UINT(w.window_size.size());
        // The original operator where it suffices: AVERAGE_POOLING1 (dilations) needs feature level 6.2.
        if (d.type_name() == "DML_OPERATOR_AVERAGE_POOLING")
            return c.lowered(DML_OPERATOR_AVERAGE_POOLING,
                             DML_AVERAGE_POOLING_OPERATOR_DESC{c.input(0), c.output(0), spatial, s.array(w.strides),
                                                               s.array(w.window_size), s.array(w.start_padding),
                                                               s.array(w.end_padding), d.include_padding});
        return c.lowered(DML_OPERATOR_AVERAGE_POOLING1,
                         DML_AVERAGE_POOLING1_OPERATOR_DESC{c.input(0), c.output(0), spatial, s.array(w.strides),
                                                            s.array(w.window_size), s.array(w.start_padding),
                                                            s.array(w.end_padding), s.array(w.dilations),
                                                            d.include_padding});
    });
    add_lowering<MaxPoolingDesc>(t, [](LoweringContext& c, const MaxPoolingDesc& d) {
        const PoolingWindow& w = d.window;
        DescStore& s = c.store;
        return c.lowered(DML_OPERATOR_MAX_POOLING2,
                         DML_MAX_POOLING2_OPERATOR_DESC{c.input(0), c.output(0), d.output_indices ? c.output(1) : nullptr,
                                                        UINT(w.window_size.size()), s.array(w.strides),
                                                        s.array(w.window_size), s.array(w.start_padding),
                                                        s.array(w.end_padding), s.array(w.dilations)});
    });
    add_lowering<RoiAlignDesc>(t, [](LoweringContext& c, const RoiAlignDesc& d) {
        const RoiAlignParams& p = d.params;
        return c.lowered(DML_OPERATOR_ROI_ALIGN1,
                         DML_ROI_ALIGN1_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.output(0),
                                                      UINT(p.reduction), UINT(p.interpolation), p.spatial_scale_x,
                                                      p.spatial_scale_y, p.input_pixel_offset, p.output_pixel_offset,
                                                      d.out_of_bounds_input_value, p.minimum_samples_per_output,
                                                      p.maximum_samples_per_output, p.align_regions_to_corners});
    });
    add_lowering<RoiAlignGradDesc>(t, [](LoweringContext& c, const RoiAlignGradDesc& d) {
        const RoiAlignParams& p = d.params;
        size_t next = 0;  // the node has the outputs asked for, in DirectML's order
        const DML_TENSOR_DESC* gradient = d.compute_output_gradient ? c.output(next++) : nullptr;
        const DML_TENSOR_DESC* roi_gradient = d.compute_output_roi_gradient ? c.output(next++) : nullptr;
        return c.lowered(DML_OPERATOR_ROI_ALIGN_GRAD,
                         DML_ROI_ALIGN_GRAD_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.input(3), gradient,
                                                          roi_gradient, UINT(p.reduction), UINT(p.interpolation),
                                                          p.spatial_scale_x, p.spatial_scale_y, p.input_pixel_offset,
                                                          p.output_pixel_offset, p.minimum_samples_per_output,
                                                          p.maximum_samples_per_output, p.align_regions_to_corners});
    });
}

}  // namespace dml::directml
