#include "pooling.h"

#include <algorithm>

#include "../errors.h"
#include "common.h"

namespace dml {

namespace {

const std::initializer_list<DataType> kFloat16To32 = {DataType::Float32, DataType::Float16};

std::string dim_name(size_t i) { return "spatial dimension " + std::to_string(i); }

// Fills the window's defaults, validates it against a 4-D or 5-D input and returns the output sizes: DirectML's
// (padded - dilated window) / stride + 1, or the caller's `output_sizes` where each spatial size is that or the
// ceiling-mode size. With `need_input_tap`, every window must reach at least one input element (a max, or an
// average that leaves padding out of its divisor, of padding alone is undefined: we refuse it).
Sizes pooling_output(const std::string& op, const Expression& input, PoolingWindow& w,
                     const std::vector<uint32_t>& output_sizes, bool need_input_tap) {
    require_rank(op, "input", input, 4, 5);
    const size_t nd = input.desc.rank() - 2;
    if (w.window_size.empty()) throw ValueError(op + ": window_size needs " + std::to_string(nd) + " values");
    w.window_size = spatial_list(op, "window_size", w.window_size, nd, 1);
    w.strides = spatial_list(op, "strides", w.strides, nd, 1);
    w.dilations = spatial_list(op, "dilations", w.dilations, nd, 1);
    w.start_padding = spatial_list(op, "start_padding", w.start_padding, nd, 0);
    w.end_padding = spatial_list(op, "end_padding", w.end_padding, nd, 0);
    const Sizes& in = input.sizes();
    Sizes floor_sizes = {in[0], in[1]}, ceil_sizes = {in[0], in[1]};
    for (size_t i = 0; i < nd; ++i) {
        for (auto [name, v] : {std::pair{"window_size", w.window_size[i]}, {"strides", w.strides[i]},
                               {"dilations", w.dilations[i]}})
            if (v == 0) throw ValueError(op + ": " + name + " must be positive");
        const int64_t k = int64_t(w.window_size[i] - 1) * w.dilations[i] + 1, s = w.strides[i];
        const int64_t padded = int64_t(in[2 + i]) + w.start_padding[i] + w.end_padding[i];
        if (k > padded)
            throw ValueError(op + ": the window (" + std::to_string(k) +
                             " elements with its dilation) is larger than the padded input (" +
                             std::to_string(padded) + ") in " + dim_name(i));
        floor_sizes.push_back(uint32_t((padded - k) / s + 1));
        ceil_sizes.push_back(uint32_t((padded - k + s - 1) / s + 1));
    }
    Sizes out = floor_sizes;
    if (!output_sizes.empty()) {
        bool fits = output_sizes.size() == out.size();
        for (size_t i = 0; fits && i < out.size(); ++i)
            fits = output_sizes[i] == floor_sizes[i] || output_sizes[i] == ceil_sizes[i];
        if (!fits)
            throw ValueError(op + ": output_sizes " + sizes_to_string(output_sizes) + " do not fit; expected " +
                             sizes_to_string(floor_sizes) +
                             (floor_sizes == ceil_sizes ? "" : " or, rounding up, " + sizes_to_string(ceil_sizes)));
        out = output_sizes;
    }
    // Every window must reach an element it can count: an input element, or with include_padding any element of
    // the padded input (a ceiling-mode window can start past it).
    for (size_t i = 0; i < nd; ++i) {
        const int64_t d = w.dilations[i], k = w.window_size[i];
        const int64_t lo = need_input_tap ? 0 : -int64_t(w.start_padding[i]);
        const int64_t hi = need_input_tap ? in[2 + i] : int64_t(in[2 + i]) + w.end_padding[i];
        for (int64_t o = 0; o < out[2 + i]; ++o) {
            const int64_t first = o * w.strides[i] - w.start_padding[i];  // the window's first tap
            const int64_t j = first >= lo ? 0 : (lo - first + d - 1) / d;   // its first tap at or after lo
            if (j >= k || first + j * d >= hi)
                throw ValueError(op + ": the window at output " + std::to_string(o) + " of " + dim_name(i) +
                                 (need_input_tap ? " covers padding only" : " lies past the padded input"));
        }
    }
    return out;
}

uint32_t roi_count(const std::string& op, const Expression& input, const Expression& roi) {
    require_rank(op, "roi", roi, 2, 4);
    const Sizes& r = roi.sizes();
    const size_t rank = r.size();
    if (r[rank - 1] != 4 || std::any_of(r.begin(), r.end() - 2, [](uint32_t s) { return s != 1; }))
        throw ValueError(op + ": roi must be [num_rois, 4] (with leading 1s up to 4-D), got " + sizes_to_string(r));
    if (roi.data_type() != input.data_type())
        throw ValueError(op + ": roi has type " + std::string(data_type_name(roi.data_type())) +
                         "; it must match the input's " + std::string(data_type_name(input.data_type())));
    return r[rank - 2];
}

void check_batch_indices(const std::string& op, const Expression& batch_indices, uint32_t rois,
                         std::initializer_list<DataType> types) {
    require_rank(op, "batch_indices", batch_indices, 1, 4);
    require_types(op, "batch_indices", batch_indices, types);
    const Sizes& b = batch_indices.sizes();
    if (b.back() != rois || std::any_of(b.begin(), b.end() - 1, [](uint32_t s) { return s != 1; }))
        throw ValueError(op + ": batch_indices must be [" + std::to_string(rois) +
                         "] (with leading 1s up to 4-D), got " + sizes_to_string(b));
}

void check_roi_params(const std::string& op, const RoiAlignParams& p) {
    if (p.reduction != ReduceFunction::Average && p.reduction != ReduceFunction::Max)
        throw ValueError(op + ": reduction_function must be AVERAGE or MAX");
    if (p.minimum_samples_per_output == 0 || p.minimum_samples_per_output > p.maximum_samples_per_output)
        throw ValueError(op + ": need 1 <= minimum_samples_per_output (" +
                         std::to_string(p.minimum_samples_per_output) + ") <= maximum_samples_per_output (" +
                         std::to_string(p.maximum_samples_per_output) + ")");
}

}  // namespace

std::string AveragePoolingDesc::type_name() const {
    bool dilated = std::any_of(window.dilations.begin(), window.dilations.end(), [](uint32_t d) { return d != 1; });
    return dilated ? "DML_OPERATOR_AVERAGE_POOLING1" : "DML_OPERATOR_AVERAGE_POOLING";
}

Expression average_pooling(const Expression& input, std::vector<uint32_t> strides, std::vector<uint32_t> window_size,
                           std::vector<uint32_t> start_padding, std::vector<uint32_t> end_padding,
                           bool include_padding, std::vector<uint32_t> output_sizes, std::vector<uint32_t> dilations) {
    auto desc = std::make_shared<AveragePoolingDesc>();
    desc->window = {std::move(strides), std::move(window_size), std::move(start_padding), std::move(end_padding),
                    std::move(dilations)};
    desc->include_padding = include_padding;
    const std::string op = "DML_OPERATOR_AVERAGE_POOLING";
    require_types(op, "input", input, kFloat16To32);
    Sizes out = pooling_output(op, input, desc->window, output_sizes, !include_padding);
    return add_single(op, desc, {input}, TensorDesc(input.data_type(), out));
}

MaxPoolingOutputs max_pooling(const Expression& input, std::vector<uint32_t> window_size, std::vector<uint32_t> strides,
                              std::vector<uint32_t> start_padding, std::vector<uint32_t> end_padding,
                              std::vector<uint32_t> dilations, bool output_indices, std::vector<uint32_t> output_sizes,
                              DataType index_type) {
    auto desc = std::make_shared<MaxPoolingDesc>();
    desc->window = {std::move(strides), std::move(window_size), std::move(start_padding), std::move(end_padding),
                    std::move(dilations)};
    desc->output_indices = output_indices;
    const std::string op = desc->type_name();
    require_types(op, "input", input,
                  {DataType::Float32, DataType::Float16, DataType::Int64, DataType::Int32, DataType::Int16,
                   DataType::Int8, DataType::UInt64, DataType::UInt32, DataType::UInt16, DataType::UInt8});
    if (index_type != DataType::UInt32 && index_type != DataType::UInt64)
        throw ValueError(op + ": output_dtype must be UINT32 or UINT64, got " +
                         std::string(data_type_name(index_type)));
    Sizes out = pooling_output(op, input, desc->window, output_sizes, true);
    std::vector<TensorDesc> outs = {TensorDesc(input.data_type(), out)};
    if (output_indices) outs.emplace_back(index_type, out);
    auto e = input.graph->add_node(desc, {input}, outs);
    return {e[0], output_indices ? std::optional<Expression>(e[1]) : std::nullopt};
}

Expression roi_align(const Expression& input, const Expression& roi, const Expression& batch_indices,
                     const RoiAlignParams& params, float out_of_bounds_input_value, uint32_t output_height,
                     uint32_t output_width) {
    auto desc = std::make_shared<RoiAlignDesc>();
    const std::string op = desc->type_name();
    common_graph(op, {&input, &roi, &batch_indices});
    require_rank(op, "input", input, 4, 4);
    require_types(op, "input", input, kFloat16To32);
    const uint32_t rois = roi_count(op, input, roi);
    check_batch_indices(op, batch_indices, rois, {DataType::UInt32, DataType::UInt64});
    check_roi_params(op, params);
    if (output_height == 0 || output_width == 0)
        throw ValueError(op + ": output_height and output_width must be positive");
    desc->params = params;
    desc->out_of_bounds_input_value = out_of_bounds_input_value;
    return add_single(op, desc, {input, roi, batch_indices},
                      TensorDesc(input.data_type(), {rois, input.sizes()[1], output_height, output_width}));
}

RoiAlignGradOutputs roi_align_grad(const std::optional<Expression>& input, const Expression& input_gradient,
                                   const Expression& roi, const Expression& batch_indices, const RoiAlignParams& params,
                                   uint32_t batch_size, uint32_t image_height, uint32_t image_width,
                                   bool compute_output_gradient, bool compute_output_roi_gradient) {
    auto desc = std::make_shared<RoiAlignGradDesc>();
    const std::string op = desc->type_name();
    common_graph(op, {input ? &*input : nullptr, &input_gradient, &roi, &batch_indices});
    require_rank(op, "input_gradient", input_gradient, 4, 4);
    require_types(op, "input_gradient", input_gradient, kFloat16To32);
    const uint32_t rois = roi_count(op, input_gradient, roi);
    if (input_gradient.sizes()[0] != rois)
        throw ValueError(op + ": input_gradient " + sizes_to_string(input_gradient.sizes()) +
                         " must have one row per roi (" + std::to_string(rois) + ")");
    check_batch_indices(op, batch_indices, rois, {DataType::UInt32});
    check_roi_params(op, params);
    if (!compute_output_gradient && !compute_output_roi_gradient)
        throw ValueError(op + ": compute_output_gradient or compute_output_roi_gradient must be set");
    if (batch_size == 0 || image_height == 0 || image_width == 0)
        throw ValueError(op + ": batch_size, image_height and image_width must be positive");
    const Sizes image = {batch_size, input_gradient.sizes()[1], image_height, image_width};
    if (input) {
        if (input->sizes() != image || input->data_type() != input_gradient.data_type())
            throw ValueError(op + ": input must be " + TensorDesc(input_gradient.data_type(), image).to_string() +
                             " (the forward input), got " + input->desc.to_string());
    } else if (compute_output_roi_gradient || params.reduction == ReduceFunction::Max) {
        throw ValueError(op + ": input (the forward input) is needed for the roi gradient and for MAX reduction");
    }
    desc->params = params;
    desc->compute_output_gradient = compute_output_gradient;
    desc->compute_output_roi_gradient = compute_output_roi_gradient;
    std::vector<TensorDesc> outs;
    if (compute_output_gradient) outs.emplace_back(input_gradient.data_type(), image);
    if (compute_output_roi_gradient) outs.emplace_back(roi.data_type(), roi.sizes());
    auto e = input_gradient.graph->add_node(desc, {input, input_gradient, roi, batch_indices}, outs);
    RoiAlignGradOutputs r;
    if (compute_output_gradient) r.output_gradient = e[0];
    if (compute_output_roi_gradient) r.output_roi_gradient = e.back();
    return r;
}

}  // namespace dml
