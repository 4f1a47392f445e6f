#include "convolution.h"

#include "../errors.h"
#include "common.h"
#include "generation.h"

namespace dml {

namespace {

const std::initializer_list<DataType> kIntegerOperandTypes = {DataType::Int8, DataType::UInt8};

// Fills the window's defaults (strides and dilations 1, no padding) and checks it.
void normalize_window(const std::string& op, ConvolutionWindow& w, size_t nd, uint32_t in_channels) {
    w.strides = spatial_list(op, "strides", w.strides, nd, 1);
    w.dilations = spatial_list(op, "dilations", w.dilations, nd, 1);
    w.start_padding = spatial_list(op, "start_padding", w.start_padding, nd, 0);
    w.end_padding = spatial_list(op, "end_padding", w.end_padding, nd, 0);
    for (size_t i = 0; i < nd; ++i) {
        if (w.strides[i] == 0) throw ValueError(op + ": strides must be positive");
        if (w.dilations[i] == 0) throw ValueError(op + ": dilations must be positive");
    }
    if (w.group_count == 0 || in_channels % w.group_count != 0)
        throw ValueError(op + ": group_count " + std::to_string(w.group_count) + " does not divide the input's " +
                         std::to_string(in_channels) + " channels");
}

void require_same_rank(const std::string& op, const Expression& input, const Expression& filter) {
    if (filter.desc.rank() != input.desc.rank())
        throw ValueError(op + ": filter " + sizes_to_string(filter.sizes()) + " must have the input's rank (" +
                         std::to_string(input.desc.rank()) + ")");
}

// The output sizes of a forward convolution with filter [out_channels, in_channels / groups, k...].
Sizes forward_output_sizes(const std::string& op, const Sizes& in, const Sizes& f, const ConvolutionWindow& w) {
    if (f[1] * w.group_count != in[1] || f[0] % w.group_count != 0)
        throw ValueError(op + ": filter " + sizes_to_string(f) + " does not fit input " + sizes_to_string(in) +
                         " with group_count " + std::to_string(w.group_count));
    Sizes out = {in[0], f[0]};
    for (size_t i = 0; i + 2 < in.size(); ++i) {
        int64_t k = int64_t(f[2 + i] - 1) * w.dilations[i] + 1;
        int64_t padded = int64_t(in[2 + i]) + w.start_padding[i] + w.end_padding[i];
        if (k > padded)
            throw ValueError(op + ": the dilated filter (" + std::to_string(k) + ") is larger than the padded input (" +
                             std::to_string(padded) + ") in spatial dimension " + std::to_string(i));
        out.push_back(uint32_t((padded - k) / w.strides[i] + 1));
    }
    return out;
}

// A forward convolution's output_sizes, where given, only restate the computed ones (DirectMLX takes them as given).
void check_forward_output_sizes(const std::string& op, const std::vector<uint32_t>& output_sizes, const Sizes& out) {
    if (!output_sizes.empty() && output_sizes != out)
        throw ValueError(op + ": output_sizes " + sizes_to_string(output_sizes) + " differ from the computed " +
                         sizes_to_string(out));
}

// The output sizes of a backward convolution with filter [in_channels, out_channels / groups, k...]: each spatial
// size is (in - 1) * stride + dilated kernel - padding + output_padding, or the caller's within that stride (which
// then sets the output padding).
Sizes backward_output_sizes(const std::string& op, const Sizes& in, const Sizes& f, ConvolutionDesc& d,
                            const std::vector<uint32_t>& output_sizes) {
    if (f[0] != in[1])
        throw ValueError(op + ": a backward filter " + sizes_to_string(f) + " needs " + std::to_string(in[1]) +
                         " (the input's channels) in dimension 0");
    Sizes out = {in[0], f[1] * d.group_count};
    if (!output_sizes.empty() && (output_sizes.size() != in.size() || output_sizes[0] != out[0] || output_sizes[1] != out[1]))
        throw ValueError(op + ": output_sizes " + sizes_to_string(output_sizes) + " do not fit; expected [" +
                         std::to_string(out[0]) + ", " + std::to_string(out[1]) + ", ...]");
    for (size_t i = 0; i + 2 < in.size(); ++i) {
        int64_t k = int64_t(f[2 + i] - 1) * d.dilations[i] + 1;
        int64_t base = int64_t(in[2 + i] - 1) * d.strides[i] + k - d.start_padding[i] - d.end_padding[i];
        int64_t o = base + d.output_padding[i];
        if (!output_sizes.empty()) {
            o = output_sizes[2 + i];
            if (o < base || o >= base + std::max(d.strides[i], d.dilations[i]))
                throw ValueError(op + ": output size " + std::to_string(o) + " in spatial dimension " +
                                 std::to_string(i) + " is outside [" + std::to_string(base) + ", " +
                                 std::to_string(base + std::max(d.strides[i], d.dilations[i])) +
                                 ") that the strides allow");
            if (d.output_padding[i] != 0 && o != base + d.output_padding[i])
                throw ValueError(op + ": output_sizes " + sizes_to_string(output_sizes) + " contradict output_padding " +
                                 sizes_to_string(d.output_padding));
            d.output_padding[i] = uint32_t(o - base);
        }
        if (o <= 0) throw ValueError(op + ": the padding leaves no output in spatial dimension " + std::to_string(i));
        out.push_back(uint32_t(o));
    }
    return out;
}

}  // namespace

Expression convolution(const Expression& input, const Expression& filter, const std::optional<Expression>& bias,
                       ConvolutionMode mode, ConvolutionDirection direction, std::vector<uint32_t> strides,
                       std::vector<uint32_t> dilations, std::vector<uint32_t> start_padding,
                       std::vector<uint32_t> end_padding, std::vector<uint32_t> output_padding, uint32_t group_count,
                       FusedActivation fused, std::vector<uint32_t> output_sizes) {
    const std::string op = "DML_OPERATOR_CONVOLUTION";
    common_graph(op, {&input, &filter, bias ? &*bias : nullptr});
    require_types(op, "input", input, kFloatTypes);
    require_rank(op, "input", input, 3, 5);
    require_same_rank(op, input, filter);
    if (filter.data_type() != input.data_type())
        throw ValueError(op + ": the element types differ: input " + std::string(data_type_name(input.data_type())) +
                         ", filter " + std::string(data_type_name(filter.data_type())));
    const size_t nd = input.desc.rank() - 2;
    auto desc = std::make_shared<ConvolutionDesc>();
    desc->mode = mode;
    desc->direction = direction;
    desc->strides = std::move(strides);
    desc->dilations = std::move(dilations);
    desc->start_padding = std::move(start_padding);
    desc->end_padding = std::move(end_padding);
    desc->group_count = group_count;
    normalize_window(op, *desc, nd, input.sizes()[1]);
    desc->output_padding = spatial_list(op, "output_padding", output_padding, nd, 0);
    desc->fused = fused;
    check_fused_activation(op, fused, input.data_type());
    const bool forward = direction == ConvolutionDirection::Forward;
    for (size_t i = 0; i < nd; ++i) {
        // The output padding only sizes a backward convolution's output (DirectMLX's forward sizes ignore it).
        if (desc->output_padding[i] != 0 &&
            (forward || desc->output_padding[i] >= std::max(desc->strides[i], desc->dilations[i])))
            throw ValueError(op + ": output_padding applies to BACKWARD convolutions and must be smaller than the "
                                  "stride or the dilation");
    }
    Sizes out;
    if (forward) {
        out = forward_output_sizes(op, input.sizes(), filter.sizes(), *desc);
        check_forward_output_sizes(op, output_sizes, out);
    } else {
        out = backward_output_sizes(op, input.sizes(), filter.sizes(), *desc, output_sizes);
    }
    if (bias) {
        Sizes want(out.size(), 1u);
        want[1] = out[1];
        if (bias->sizes() != want || bias->data_type() != input.data_type())
            throw ValueError(op + ": bias must be " + std::string(data_type_name(input.data_type())) +
                             sizes_to_string(want) + ", got " + bias->desc.to_string());
    }
    return add_single(op, desc, {input, filter, bias}, TensorDesc(input.data_type(), out));
}

namespace {

// The common part of the integer convolutions: 4-D INT8 / UINT8 operands, the window, the output sizes (checked
// against the caller's), and zero points of their operand's type (the input's per tensor, the filter's per tensor or
// per output channel).
Sizes integer_convolution_sizes(const std::string& op, const Expression& input, const Expression& filter,
                                const std::optional<Expression>& input_zero_point,
                                const std::optional<Expression>& filter_zero_point, ConvolutionWindow& w,
                                const std::vector<uint32_t>& output_sizes) {
    require_types(op, "input", input, kIntegerOperandTypes);
    require_types(op, "filter", filter, kIntegerOperandTypes);
    require_rank(op, "input", input, 4, 4);
    require_same_rank(op, input, filter);
    normalize_window(op, w, 2, input.sizes()[1]);
    Sizes out = forward_output_sizes(op, input.sizes(), filter.sizes(), w);
    check_forward_output_sizes(op, output_sizes, out);
    if (input_zero_point)
        require_parameter(op, "input_zero_point", *input_zero_point, {input.data_type()}, {1, 1, 1, 1});
    if (filter_zero_point)
        require_parameter(op, "filter_zero_point", *filter_zero_point, {filter.data_type()}, {1, out[1], 1, 1});
    return out;
}

}  // namespace

Expression convolution_integer(const Expression& input, const Expression& filter,
                               const std::optional<Expression>& input_zero_point,
                               const std::optional<Expression>& filter_zero_point, ConvolutionWindow window,
                               const std::vector<uint32_t>& output_sizes) {
    const std::string op = "DML_OPERATOR_CONVOLUTION_INTEGER";
    common_graph(op, {&input, &filter, input_zero_point ? &*input_zero_point : nullptr,
                      filter_zero_point ? &*filter_zero_point : nullptr});
    auto desc = std::make_shared<ConvolutionIntegerDesc>();
    static_cast<ConvolutionWindow&>(*desc) = std::move(window);
    Sizes out = integer_convolution_sizes(op, input, filter, input_zero_point, filter_zero_point, *desc, output_sizes);
    return add_single(op, desc, {input, input_zero_point, filter, filter_zero_point}, TensorDesc(DataType::Int32, out));
}

Expression quantized_linear_convolution(const Expression& input, const Expression& input_scale,
                                        const Expression& filter, const Expression& filter_scale,
                                        const Expression& output_scale, const std::optional<Expression>& input_zero_point,
                                        const std::optional<Expression>& filter_zero_point,
                                        const std::optional<Expression>& bias,
                                        const std::optional<Expression>& output_zero_point, ConvolutionWindow window,
                                        std::optional<DataType> output_type,
                                        const std::vector<uint32_t>& output_sizes) {
    const std::string op = "DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION";
    common_graph(op, {&input, &input_scale, &filter, &filter_scale, &output_scale,
                      input_zero_point ? &*input_zero_point : nullptr, filter_zero_point ? &*filter_zero_point : nullptr,
                      bias ? &*bias : nullptr, output_zero_point ? &*output_zero_point : nullptr});
    auto desc = std::make_shared<QuantizedLinearConvolutionDesc>();
    static_cast<ConvolutionWindow&>(*desc) = std::move(window);
    Sizes out = integer_convolution_sizes(op, input, filter, input_zero_point, filter_zero_point, *desc, output_sizes);
    const Sizes per_tensor = {1, 1, 1, 1}, per_channel = {1, out[1], 1, 1};
    require_parameter(op, "input_scale", input_scale, {DataType::Float32}, per_tensor);
    require_parameter(op, "filter_scale", filter_scale, {DataType::Float32}, per_channel);
    require_parameter(op, "output_scale", output_scale, {DataType::Float32}, per_tensor);
    if (bias) {
        require_types(op, "bias", *bias, {DataType::Int32});
        if (bias->sizes() != per_channel)
            throw ValueError(op + ": bias must be INT32" + sizes_to_string(per_channel) + ", got " +
                             bias->desc.to_string());
    }
    DataType type = quantized_output_type(op, "output_zero_point", output_zero_point, output_type);
    if (output_zero_point) require_parameter(op, "output_zero_point", *output_zero_point, {type}, per_tensor);
    return add_single(op, desc,
                      {input, input_scale, input_zero_point, filter, filter_scale, filter_zero_point, bias, output_scale,
                       output_zero_point},
                      TensorDesc(type, out));
}

}  // namespace dml
