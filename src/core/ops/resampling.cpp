#include "resampling.h"

#include <cmath>

#include "../errors.h"
#include "common.h"

namespace dml {

namespace {

const std::initializer_list<DataType> kResampleTypes = {DataType::Float32, DataType::Float16};

// A float list of one value per dimension, or empty for `fill(i)`; every value finite (and positive for scales).
template <class Fill>
std::vector<float> per_dimension(const std::string& op, const std::string& arg, std::vector<float> v, size_t rank,
                                 bool positive, Fill fill) {
    if (v.empty())
        for (size_t i = 0; i < rank; ++i) v.push_back(fill(i));
    if (v.size() != rank)
        throw ValueError(op + ": " + arg + " needs one value per dimension (" + std::to_string(rank) + "), got " +
                         std::to_string(v.size()));
    for (float f : v)
        if (!std::isfinite(f) || (positive && f <= 0))
            throw ValueError(op + ": " + arg + " must be " + (positive ? "positive and " : "") + "finite, got " +
                             std::to_string(f));
    return v;
}

// RESAMPLE2's parameters for x resampled to output_sizes, or (gradient) for the forward resample from
// output_sizes to x's sizes.
ResampleParams resample_params(const std::string& op, const Expression& x, const Sizes& output_sizes, bool gradient,
                               InterpolationMode mode, AxisDirection rounding, std::vector<float> scales,
                               std::vector<float> input_offsets, std::vector<float> output_offsets) {
    const char* arg = gradient ? "input_gradient" : "input";
    require_types(op, arg, x, kResampleTypes);
    require_rank(op, arg, x, 1, 4);
    const size_t rank = x.desc.rank();
    if (output_sizes.size() != rank)
        throw ValueError(op + ": output_sizes needs one value per dimension (" + std::to_string(rank) + "), got " +
                         sizes_to_string(output_sizes));
    for (uint32_t s : output_sizes)
        if (s == 0) throw ValueError(op + ": output_sizes must be positive, got " + sizes_to_string(output_sizes));
    const Sizes &in = gradient ? output_sizes : x.sizes(), &out = gradient ? x.sizes() : output_sizes;
    ResampleParams p{mode, rounding, {}, {}, {}};
    p.scales = per_dimension(op, "scales", std::move(scales), rank, true,
                             [&](size_t i) { return float(out[i]) / float(in[i]); });
    p.input_offsets = per_dimension(op, "input_pixel_offsets", std::move(input_offsets), rank, false,
                                    [](size_t) { return 0.5f; });
    p.output_offsets = per_dimension(op, "output_pixel_offsets", std::move(output_offsets), rank, false,
                                     [](size_t) { return -0.5f; });
    return p;
}

}  // namespace

Expression upsample_2d(const Expression& x, uint32_t scale_height, uint32_t scale_width, InterpolationMode mode) {
    const std::string op = "DML_OPERATOR_UPSAMPLE_2D";
    require_types(op, "input", x, kResampleTypes);
    require_rank(op, "input", x, 4, 5);
    if (scale_height == 0 || scale_width == 0) throw ValueError(op + ": scale_size must be positive");
    Sizes out = x.sizes();
    const size_t h = out.size() - 2, w = out.size() - 1;
    for (auto [d, s] : {std::pair{h, scale_height}, std::pair{w, scale_width}}) {
        const uint64_t size = uint64_t(out[d]) * s;
        if (size > UINT32_MAX)
            throw ValueError(op + ": the output size " + std::to_string(size) + " exceeds 32 bits");
        out[d] = uint32_t(size);
    }
    auto desc = std::make_shared<Upsample2dDesc>();
    desc->scale_height = scale_height;
    desc->scale_width = scale_width;
    desc->mode = mode;
    return add_single(op, desc, {x}, TensorDesc(x.data_type(), out));
}

Expression resample(const Expression& x, const Sizes& output_sizes, InterpolationMode mode, AxisDirection rounding,
                    std::vector<float> scales, std::vector<float> input_pixel_offsets,
                    std::vector<float> output_pixel_offsets, bool antialiased) {
    const std::string op = antialiased ? "DML_OPERATOR_RESAMPLE3" : "DML_OPERATOR_RESAMPLE2";
    auto desc = std::make_shared<ResampleDesc>();
    desc->params = resample_params(op, x, output_sizes, false, mode, rounding, std::move(scales),
                                   std::move(input_pixel_offsets), std::move(output_pixel_offsets));
    desc->params.antialiased = antialiased;
    return add_single(op, desc, {x}, TensorDesc(x.data_type(), output_sizes));
}

Expression resample_grad(const Expression& input_gradient, const Sizes& output_sizes, InterpolationMode mode,
                         AxisDirection rounding, std::vector<float> scales, std::vector<float> input_pixel_offsets,
                         std::vector<float> output_pixel_offsets) {
    const std::string op = "DML_OPERATOR_RESAMPLE_GRAD1";
    auto desc = std::make_shared<ResampleGradDesc>();
    desc->params = resample_params(op, input_gradient, output_sizes, true, mode, rounding, std::move(scales),
                                   std::move(input_pixel_offsets), std::move(output_pixel_offsets));
    return add_single(op, desc, {input_gradient}, TensorDesc(input_gradient.data_type(), output_sizes));
}

Expression value_scale_2d(const Expression& x, float scale, std::vector<float> bias) {
    const std::string op = "DML_OPERATOR_VALUE_SCALE_2D";
    require_types(op, "input", x, kResampleTypes);
    require_rank(op, "input", x, 4, 4);
    const uint32_t channels = x.sizes()[1];
    if (bias.size() != channels || (channels != 1 && channels != 3))
        throw ValueError(op + ": bias needs one value per channel, and DirectML allows 1 or 3 channels; the input "
                              "has " + std::to_string(channels) + ", bias " + std::to_string(bias.size()));
    auto desc = std::make_shared<ValueScale2dDesc>();
    desc->scale = scale;
    desc->bias = std::move(bias);
    return add_single(op, desc, {x}, packed_like(x));
}

}  // namespace dml
