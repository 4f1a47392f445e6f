#include "data_movement.h"

#include <cstdlib>

#include "../errors.h"
#include "common.h"

namespace dml {

Expression slice(const Expression& x, std::vector<uint32_t> offsets, std::vector<uint32_t> sizes,
                 std::vector<int32_t> strides) {
    const std::string op = "DML_OPERATOR_SLICE1";
    const Sizes& in = x.sizes();
    const size_t rank = in.size();
    if (offsets.size() != rank || sizes.size() != rank || strides.size() != rank)
        throw ValueError(op + ": offsets, sizes and strides need one value per dimension (" + std::to_string(rank) +
                         ")");
    Sizes out(rank);
    for (size_t i = 0; i < rank; ++i) {
        if (strides[i] == 0) throw ValueError(op + ": strides must not be zero");
        if (sizes[i] == 0) throw ValueError(op + ": window sizes must be positive");
        if (uint64_t(offsets[i]) + sizes[i] > in[i])
            throw ValueError(op + ": the window [" + std::to_string(offsets[i]) + ", " +
                             std::to_string(uint64_t(offsets[i]) + sizes[i]) + ") of dimension " + std::to_string(i) +
                             " exceeds its size " + std::to_string(in[i]));
        out[i] = (sizes[i] - 1) / uint32_t(std::abs(int64_t(strides[i]))) + 1;
    }
    auto desc = std::make_shared<SliceDesc>();
    desc->offsets = std::move(offsets);
    desc->sizes = std::move(sizes);
    desc->strides = std::move(strides);
    return add_single(op, desc, {x}, TensorDesc(x.data_type(), out));
}

Expression join(const std::vector<Expression>& inputs, uint32_t axis) {
    const std::string op = "DML_OPERATOR_JOIN";
    if (inputs.empty()) throw ValueError(op + ": needs at least one input");
    const Expression& first = inputs[0];
    const size_t rank = first.desc.rank();
    if (axis >= rank) throw ValueError(op + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    Sizes out = first.sizes();
    out[axis] = 0;
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
        out[axis] += s[axis];
        ins.push_back(e);
    }
    auto desc = std::make_shared<JoinDesc>();
    desc->axis = axis;
    return first.graph->add_node(desc, std::move(ins), {TensorDesc(first.data_type(), out)})[0];
}

std::vector<Expression> split(const Expression& x, uint32_t axis, const std::vector<uint32_t>& output_sizes) {
    const std::string op = "DML_OPERATOR_SPLIT";
    const size_t rank = x.desc.rank();
    if (axis >= rank) throw ValueError(op + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (output_sizes.empty()) throw ValueError(op + ": needs at least one output size");
    uint64_t total = 0;
    std::vector<TensorDesc> outs;
    for (uint32_t s : output_sizes) {
        if (s == 0) throw ValueError(op + ": output sizes must be positive");
        total += s;
        Sizes o = x.sizes();
        o[axis] = s;
        outs.emplace_back(x.data_type(), o);
    }
    if (total != x.sizes()[axis])
        throw ValueError(op + ": output sizes " + sizes_to_string(output_sizes) + " sum to " + std::to_string(total) +
                         ", not the input's " + std::to_string(x.sizes()[axis]) + " on axis " + std::to_string(axis));
    auto desc = std::make_shared<SplitDesc>();
    desc->axis = axis;
    return x.graph->add_node(desc, {x}, outs);
}

}  // namespace dml
