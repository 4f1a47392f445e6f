// Resampling: DML_OPERATOR_UPSAMPLE_2D, RESAMPLE2 and its gradient RESAMPLE_GRAD1, and VALUE_SCALE_2D.
#pragma once
#include <vector>

#include "../graph.h"
#include "pooling.h"  // InterpolationMode
#include "reduce.h"   // AxisDirection

namespace dml {

// RESAMPLE2's mapping per dimension: output = (input + input_offset) * scale + output_offset. NEAREST_NEIGHBOR
// rounds the input coordinate of each output element down (DECREASING) or up (INCREASING); LINEAR weighs the two
// neighbours. Coordinates past the edges clamp to them. antialiased (RESAMPLE3's Antialiased, as ONNX Resize's
// antialias): LINEAR along a dimension scaled down stretches its triangle filter by 1 / scale, the weights
// normalized to sum 1, inputs past the edges read at the edge; nearest neighbour and scales of 1 and more are
// unchanged.
struct ResampleParams {
    InterpolationMode mode;
    AxisDirection rounding;
    std::vector<float> scales, input_offsets, output_offsets;
    bool antialiased = false;
};

struct ResampleDesc : OperatorDesc {
    ResampleParams params;
    std::string type_name() const override {
        return params.antialiased ? "DML_OPERATOR_RESAMPLE3" : "DML_OPERATOR_RESAMPLE2";
    }
};

// Each output (forward input) gradient element sums the incoming gradient over the forward outputs it fed,
// weighted as RESAMPLE2 weighed it.
struct ResampleGradDesc : OperatorDesc {
    ResampleParams params;
    std::string type_name() const override { return "DML_OPERATOR_RESAMPLE_GRAD1"; }
};

struct Upsample2dDesc : OperatorDesc {
    uint32_t scale_height, scale_width;
    InterpolationMode mode;
    std::string type_name() const override { return "DML_OPERATOR_UPSAMPLE_2D"; }
};

struct ValueScale2dDesc : OperatorDesc {
    float scale;
    std::vector<float> bias;  // one per channel
    std::string type_name() const override { return "DML_OPERATOR_VALUE_SCALE_2D"; }
};

// [N, C, H, W] or [N, C, D, H, W] with H and W multiplied by the integer scales.
Expression upsample_2d(const Expression& x, uint32_t scale_height, uint32_t scale_width, InterpolationMode mode);
// Empty lists take DirectMLX's defaults: scales output/input, input offsets 0.5, output offsets -0.5.
Expression resample(const Expression& x, const Sizes& output_sizes, InterpolationMode mode, AxisDirection rounding,
                    std::vector<float> scales, std::vector<float> input_pixel_offsets,
                    std::vector<float> output_pixel_offsets, bool antialiased = false);
// The same parameters as the forward resample (scales default to input_gradient / output sizes).
Expression resample_grad(const Expression& input_gradient, const Sizes& output_sizes, InterpolationMode mode,
                         AxisDirection rounding, std::vector<float> scales, std::vector<float> input_pixel_offsets,
                         std::vector<float> output_pixel_offsets);
// scale * x + bias[channel] over [N, C, H, W] with C (1 or 3) biases.
Expression value_scale_2d(const Expression& x, float scale, std::vector<float> bias);

}  // namespace dml
