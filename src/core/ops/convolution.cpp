#include "convolution.h"

#include "../errors.h"
#include "common.h"

namespace dml {

Expression convolution(const Expression& input, const Expression& filter, const std::optional<Expression>& bias,
                       ConvolutionMode mode, ConvolutionDirection direction, std::vector<uint32_t> strides,
                       std::vector<uint32_t> dilations, std::vector<uint32_t> start_padding,
                       std::vector<uint32_t> end_padding, std::vector<uint32_t> output_padding, uint32_t group_count,
                       FusedActivation fused, std::vector<uint32_t> output_sizes) {
    const std::string op = "DML_OPERATOR_CONVOLUTION";
    common_graph(op, {&input, &filter, bias ? &*bias : nullptr});
    require_types(op, "input", input, kFloatTypes);
    require_rank(op, "input", input, 3, 5);
    const size_t rank = input.desc.rank(), nd = rank - 2;
    if (filter.desc.rank() != rank)
        throw ValueError(op + ": filter " + sizes_to_string(filter.sizes()) + " must have the input's rank (" +
                         std::to_string(rank) + ")");
    if (filter.data_type() != input.data_type())
        throw ValueError(op + ": the element types differ: input " + std::string(data_type_name(input.data_type())) +
                         ", filter " + std::string(data_type_name(filter.data_type())));
    auto desc = std::make_shared<ConvolutionDesc>();
    desc->mode = mode;
    desc->direction = direction;
    desc->strides = spatial_list(op, "strides", strides, nd, 1);
    desc->dilations = spatial_list(op, "dilations", dilations, nd, 1);
    desc->start_padding = spatial_list(op, "start_padding", start_padding, nd, 0);
    desc->end_padding = spatial_list(op, "end_padding", end_padding, nd, 0);
    desc->output_padding = spatial_list(op, "output_padding", output_padding, nd, 0);
    desc->group_count = group_count;
    desc->fused = fused;
    check_fused_activation(op, fused, input.data_type());
    for (size_t i = 0; i < nd; ++i) {
        if (desc->strides[i] == 0) throw ValueError(op + ": strides must be positive");
        if (desc->dilations[i] == 0) throw ValueError(op + ": dilations must be positive");
        if (desc->output_padding[i] >= std::max(desc->strides[i], desc->dilations[i]) &&
            desc->output_padding[i] != 0)
            throw ValueError(op + ": output_padding must be smaller than the stride or the dilation");
    }
    const Sizes& in = input.sizes();
    const Sizes& f = filter.sizes();
    if (group_count == 0 || in[1] % group_count != 0)
        throw ValueError(op + ": group_count " + std::to_string(group_count) + " does not divide the input's " +
                         std::to_string(in[1]) + " channels");
    const bool forward = direction == ConvolutionDirection::Forward;
    // Forward filters are [out_channels, in_channels / groups, k...]; backward ones [in_channels, out / groups, k...].
    uint32_t out_channels;
    if (forward) {
        if (f[1] * group_count != in[1] || f[0] % group_count != 0)
            throw ValueError(op + ": filter " + sizes_to_string(f) + " does not fit input " + sizes_to_string(in) +
                             " with group_count " + std::to_string(group_count));
        out_channels = f[0];
    } else {
        if (f[0] != in[1])
            throw ValueError(op + ": a backward filter " + sizes_to_string(f) + " needs " + std::to_string(in[1]) +
                             " (the input's channels) in dimension 0");
        out_channels = f[1] * group_count;
    }
    Sizes out = {in[0], out_channels};
    for (size_t i = 0; i < nd; ++i) {
        int64_t k = int64_t(f[2 + i] - 1) * desc->dilations[i] + 1;
        int64_t padded = int64_t(in[2 + i]) + desc->start_padding[i] + desc->end_padding[i];
        int64_t o;
        if (forward) {
            if (k > padded)
                throw ValueError(op + ": the dilated filter (" + std::to_string(k) + ") is larger than the padded input (" +
                                 std::to_string(padded) + ") in spatial dimension " + std::to_string(i));
            o = (padded - k) / desc->strides[i] + 1;
        } else {
            o = int64_t(in[2 + i] - 1) * desc->strides[i] + k - desc->start_padding[i] - desc->end_padding[i] +
                desc->output_padding[i];
            if (o <= 0) throw ValueError(op + ": the padding leaves no output in spatial dimension " + std::to_string(i));
        }
        out.push_back(uint32_t(o));
    }
    if (!output_sizes.empty()) {
        if (output_sizes.size() != rank || output_sizes[0] != out[0] || output_sizes[1] != out[1])
            throw ValueError(op + ": output_sizes " + sizes_to_string(output_sizes) + " do not fit; expected " +
                             sizes_to_string(out));
        if (forward && output_sizes != out)
            throw ValueError(op + ": output_sizes " + sizes_to_string(output_sizes) + " differ from the computed " +
                             sizes_to_string(out));
        out = output_sizes;  // backward: the caller picks among the sizes the strides allow
        for (size_t i = 0; i < nd; ++i) desc->output_padding[i] = 0;
    }
    if (bias) {
        Sizes want(rank, 1u);
        want[1] = out_channels;
        if (bias->sizes() != want || bias->data_type() != input.data_type())
            throw ValueError(op + ": bias must be " + std::string(data_type_name(input.data_type())) +
                             sizes_to_string(want) + ", got " + bias->desc.to_string());
    }
    std::optional<Expression> b = bias;
    return add_single(op, desc, {input, filter, b}, TensorDesc(input.data_type(), out));
}

}  // namespace dml
