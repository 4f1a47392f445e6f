#include "data_movement.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "../errors.h"
#include "common.h"

namespace dml {

namespace {

const std::initializer_list<DataType> kIndexTypes = {DataType::UInt32, DataType::UInt64};

// SLICE1's window rules over a tensor of `in` sizes; returns the most elements the window yields per dimension.
Sizes window_extent(const std::string& op, const Sizes& in, const std::vector<uint32_t>& offsets,
                    const std::vector<uint32_t>& sizes, const std::vector<int32_t>& strides) {
    const size_t rank = in.size();
    if (offsets.size() != rank || sizes.size() != rank || strides.size() != rank)
        throw ValueError(op + ": input_window_offsets, input_window_sizes and input_window_strides need one value "
                              "per dimension (" + std::to_string(rank) + ")");
    Sizes out(rank);
    for (size_t i = 0; i < rank; ++i) {
        if (strides[i] == 0) throw ValueError(op + ": input_window_strides must not be zero");
        if (sizes[i] == 0) throw ValueError(op + ": input_window_sizes must be positive");
        if (uint64_t(offsets[i]) + sizes[i] > in[i])
            throw ValueError(op + ": the window [" + std::to_string(offsets[i]) + ", " +
                             std::to_string(uint64_t(offsets[i]) + sizes[i]) + ") of dimension " + std::to_string(i) +
                             " exceeds its size " + std::to_string(in[i]));
        out[i] = (sizes[i] - 1) / uint32_t(std::abs(int64_t(strides[i]))) + 1;
    }
    return out;
}

void require_axis(const std::string& op, uint32_t axis, size_t rank) {
    if (axis >= rank)
        throw ValueError(op + ": axis " + std::to_string(axis) + " is out of range for a " + std::to_string(rank) +
                         "-D tensor");
}

// A per-dimension list argument that must hold `rank` values.
void require_per_dimension(const std::string& op, const std::string& arg, size_t count, size_t rank) {
    if (count != rank)
        throw ValueError(op + ": " + arg + " needs one value per dimension (" + std::to_string(rank) + "), got " +
                         std::to_string(count));
}

// A size computed from user arguments, checked to fit DirectML's 32-bit sizes.
uint32_t checked_size(const std::string& op, uint64_t size, size_t dim) {
    if (size > UINT32_MAX)
        throw ValueError(op + ": the output size " + std::to_string(size) + " of dimension " + std::to_string(dim) +
                         " exceeds 32 bits");
    return uint32_t(size);
}

// PADDING1's value is a scalar of the tensor's type: an integer tensor takes only integers in its range.
void require_exact_value(const std::string& op, const std::string& arg, double v, DataType type) {
    if (is_float(type)) return;
    const bool is_signed = is_signed_int(type);
    const double bits = double(element_size(type) * 8);
    const double lo = is_signed ? -std::exp2(bits - 1) : 0.0, hi = std::exp2(is_signed ? bits - 1 : bits);
    if (!(std::isfinite(v) && std::trunc(v) == v && v >= lo && v < hi))
        throw ValueError(op + ": " + arg + " " + std::to_string(v) + " is not a value of the tensor's type " +
                         std::string(data_type_name(type)));
}

}  // namespace

Expression slice(const Expression& x, std::vector<uint32_t> offsets, std::vector<uint32_t> sizes,
                 std::vector<int32_t> strides) {
    const std::string op = "DML_OPERATOR_SLICE1";
    Sizes out = window_extent(op, x.sizes(), offsets, sizes, strides);
    auto desc = std::make_shared<SliceDesc>();
    desc->offsets = std::move(offsets);
    desc->sizes = std::move(sizes);
    desc->strides = std::move(strides);
    return add_single(op, desc, {x}, TensorDesc(x.data_type(), out));
}

Expression slice_grad(const Expression& input_gradient, const Sizes& output_gradient_sizes,
                      std::vector<uint32_t> offsets, std::vector<uint32_t> sizes, std::vector<int32_t> strides) {
    const std::string op = "DML_OPERATOR_SLICE_GRAD";
    const Sizes& in = input_gradient.sizes();
    require_per_dimension(op, "output_gradient_sizes", output_gradient_sizes.size(), in.size());
    TensorDesc out(input_gradient.data_type(), output_gradient_sizes);
    Sizes extent = window_extent(op, output_gradient_sizes, offsets, sizes, strides);
    // As for SLICE1, the gradient may cover fewer elements than the window yields, never more.
    for (size_t i = 0; i < in.size(); ++i)
        if (in[i] > extent[i])
            throw ValueError(op + ": input_gradient " + sizes_to_string(in) + " is larger than the window yields " +
                             sizes_to_string(extent) + " in dimension " + std::to_string(i));
    auto desc = std::make_shared<SliceGradDesc>();
    desc->offsets = std::move(offsets);
    desc->sizes = std::move(sizes);
    desc->strides = std::move(strides);
    return add_single(op, desc, {input_gradient}, out);
}

Expression join(const std::vector<Expression>& inputs, uint32_t axis) {
    const std::string op = "DML_OPERATOR_JOIN";
    if (inputs.empty()) throw ValueError(op + ": needs at least one input");
    const Expression& first = inputs[0];
    const size_t rank = first.desc.rank();
    require_axis(op, axis, rank);
    Sizes out = first.sizes();
    uint64_t joined = 0;
    std::vector<std::optional<Expression>> ins;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const Expression& e = inputs[i];
        if (e.graph != first.graph) throw ValueError(op + ": the inputs belong to different graphs");
        if (e.data_type() != first.data_type())
            throw ValueError(op + ": the element types differ: input 0 is " +
                             std::string(data_type_name(first.data_type())) + ", input " + std::to_string(i) + " is " +
                             std::string(data_type_name(e.data_type())));
        Sizes s = e.sizes();
        if (s.size() != rank) throw ValueError(op + ": input " + std::to_string(i) + " has another rank");
        for (size_t d = 0; d < rank; ++d)
            if (d != axis && s[d] != first.sizes()[d])
                throw ValueError(op + ": input " + std::to_string(i) + " " + sizes_to_string(s) +
                                 " differs from input 0 " + sizes_to_string(first.sizes()) + " outside axis " +
                                 std::to_string(axis));
        joined += s[axis];
        ins.push_back(e);
    }
    out[axis] = checked_size(op, joined, axis);
    auto desc = std::make_shared<JoinDesc>();
    desc->axis = axis;
    return first.graph->add_node(desc, std::move(ins), {TensorDesc(first.data_type(), out)})[0];
}

std::vector<Expression> split(const Expression& x, uint32_t axis, const std::vector<uint32_t>& output_sizes) {
    const std::string op = "DML_OPERATOR_SPLIT";
    require_axis(op, axis, x.desc.rank());
    if (output_sizes.empty()) throw ValueError(op + ": needs at least one output size");
    uint64_t total = 0;
    std::vector<TensorDesc> outs;
    for (uint32_t s : output_sizes) {
        if (s == 0) throw ValueError(op + ": output_axis_sizes must be positive");
        total += s;
        Sizes o = x.sizes();
        o[axis] = s;
        outs.emplace_back(x.data_type(), o);
    }
    if (total != x.sizes()[axis])
        throw ValueError(op + ": output_axis_sizes " + sizes_to_string(output_sizes) + " sum to " +
                         std::to_string(total) + ", not the input's " + std::to_string(x.sizes()[axis]) +
                         " on axis " + std::to_string(axis));
    auto desc = std::make_shared<SplitDesc>();
    desc->axis = axis;
    return x.graph->add_node(desc, {x}, outs);
}

Expression padding(const Expression& x, PaddingMode mode, double value, std::vector<uint32_t> start,
                   std::vector<uint32_t> end) {
    const std::string op = "DML_OPERATOR_PADDING1";
    const Sizes& in = x.sizes();
    require_per_dimension(op, "start_padding", start.size(), in.size());
    require_per_dimension(op, "end_padding", end.size(), in.size());
    if (mode == PaddingMode::Constant) require_exact_value(op, "padding_value", value, x.data_type());
    Sizes out(in.size());
    for (size_t i = 0; i < in.size(); ++i) out[i] = checked_size(op, uint64_t(in[i]) + start[i] + end[i], i);
    auto desc = std::make_shared<PaddingDesc>();
    desc->mode = mode;
    desc->value = value;
    desc->start = std::move(start);
    desc->end = std::move(end);
    return add_single(op, desc, {x}, TensorDesc(x.data_type(), out));
}

Expression tile(const Expression& x, std::vector<uint32_t> repeats) {
    const std::string op = "DML_OPERATOR_TILE";
    const Sizes& in = x.sizes();
    require_per_dimension(op, "repeats", repeats.size(), in.size());
    Sizes out(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        if (repeats[i] == 0) throw ValueError(op + ": repeats must be positive, got " + sizes_to_string(repeats));
        out[i] = checked_size(op, uint64_t(in[i]) * repeats[i], i);
    }
    auto desc = std::make_shared<TileDesc>();
    desc->repeats = std::move(repeats);
    return add_single(op, desc, {x}, TensorDesc(x.data_type(), out));
}

namespace {

Expression depth_space(const Expression& x, uint32_t block, DepthSpaceOrder order, bool to_depth) {
    auto desc = std::make_shared<DepthSpaceDesc>();
    desc->to_depth = to_depth;
    desc->block_size = block;
    desc->order = order;
    const std::string op = desc->type_name();
    require_rank(op, "input", x, 4, 4);
    if (block == 0) throw ValueError(op + ": block_size must be positive");
    Sizes s = x.sizes();
    const uint64_t area = uint64_t(block) * block;
    if (to_depth) {
        if (s[2] % block || s[3] % block)
            throw ValueError(op + ": the input's height and width " + sizes_to_string({s[2], s[3]}) +
                             " must be multiples of block_size " + std::to_string(block));
        s = {s[0], checked_size(op, s[1] * area, 1), s[2] / block, s[3] / block};
    } else {
        if (s[1] % area)
            throw ValueError(op + ": the input's channel count " + std::to_string(s[1]) +
                             " must be a multiple of block_size squared (" + std::to_string(area) + ")");
        s = {s[0], uint32_t(s[1] / area), checked_size(op, uint64_t(s[2]) * block, 2),
             checked_size(op, uint64_t(s[3]) * block, 3)};
    }
    return add_single(op, desc, {x}, TensorDesc(x.data_type(), s));
}

}  // namespace

Expression space_to_depth(const Expression& x, uint32_t block_size, DepthSpaceOrder order) {
    return depth_space(x, block_size, order, true);
}

Expression depth_to_space(const Expression& x, uint32_t block_size, DepthSpaceOrder order) {
    return depth_space(x, block_size, order, false);
}

Expression reverse_subsequences(const Expression& x, const Expression& sequence_lengths, uint32_t axis) {
    const std::string op = "DML_OPERATOR_REVERSE_SUBSEQUENCES";
    const size_t rank = x.desc.rank();
    require_axis(op, axis, rank);
    require_types(op, "sequence_lengths", sequence_lengths, kIndexTypes);
    Sizes want = x.sizes();
    want[axis] = 1;
    if (sequence_lengths.sizes() != want)
        throw ValueError(op + ": sequence_lengths must have sizes " + sizes_to_string(want) +
                         " (the input's, 1 on axis " + std::to_string(axis) + "), got " +
                         sizes_to_string(sequence_lengths.sizes()));
    auto desc = std::make_shared<ReverseSubsequencesDesc>();
    desc->axis = axis;
    return add_single(op, desc, {x, sequence_lengths}, packed_like(x));
}

}  // namespace dml
