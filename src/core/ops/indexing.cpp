#include "indexing.h"

#include "../errors.h"
#include "common.h"

namespace dml {

namespace {

const std::initializer_list<DataType> kIndexTypes = {DataType::Int32, DataType::UInt32, DataType::Int64,
                                                     DataType::UInt64};

void require_axis(const std::string& op, uint32_t axis, size_t rank) {
    if (axis >= rank)
        throw ValueError(op + ": axis " + std::to_string(axis) + " is out of range for a " + std::to_string(rank) +
                         "-D tensor");
}

void require_same_rank(const std::string& op, const std::string& arg, const Expression& e, size_t rank) {
    if (e.desc.rank() != rank)
        throw ValueError(op + ": " + arg + " " + sizes_to_string(e.sizes()) + " must have the input's rank " +
                         std::to_string(rank));
}

void require_same_type(const std::string& op, const std::string& arg, const Expression& e, DataType type) {
    if (e.data_type() != type)
        throw ValueError(op + ": " + arg + " has type " + std::string(data_type_name(e.data_type())) +
                         " but the input is " + std::string(data_type_name(type)));
}

// The trailing `count` sizes of a tensor whose leading dimensions must be 1 (DirectML ignores them).
Sizes meaningful(const std::string& op, const std::string& arg, const Sizes& sizes, uint32_t count,
                 const std::string& count_arg) {
    if (count < 1 || count > sizes.size())
        throw ValueError(op + ": " + count_arg + " " + std::to_string(count) + " must lie in [1, " +
                         std::to_string(sizes.size()) + "]");
    for (size_t i = 0; i + count < sizes.size(); ++i)
        if (sizes[i] != 1)
            throw ValueError(op + ": " + arg + " " + sizes_to_string(sizes) + " must be 1 outside its last " +
                             std::to_string(count) + " dimensions (" + count_arg + ")");
    return Sizes(sizes.end() - count, sizes.end());
}

// `sizes` right-aligned to `rank` dimensions: leading 1s added, or leading 1s dropped where there are too many.
Sizes right_aligned(const std::string& op, Sizes sizes, size_t rank) {
    while (sizes.size() > rank) {
        if (sizes.front() != 1)
            throw ValueError(op + ": the output " + sizes_to_string(sizes) + " does not fit in " +
                             std::to_string(rank) + " dimensions");
        sizes.erase(sizes.begin());
    }
    sizes.insert(sizes.begin(), rank - sizes.size(), 1u);
    return sizes;
}

// Sizes must match outside `axis`.
void require_match_except(const std::string& op, const std::string& arg, const Sizes& got, const Sizes& want,
                          uint32_t axis) {
    for (size_t i = 0; i < want.size(); ++i)
        if (i != axis && got[i] != want[i])
            throw ValueError(op + ": " + arg + " " + sizes_to_string(got) + " must match the input " +
                             sizes_to_string(want) + " outside axis " + std::to_string(axis));
}

// GATHER_ND1 / SCATTER_ND's block shape: the index tuples' grid (batch dimensions first), then the input
// dimensions the tuples do not address, right-aligned to the input's rank.
Sizes nd_block_sizes(const std::string& op, const Expression& input, const Expression& indices, uint32_t input_count,
                     uint32_t indices_count, uint32_t batch_count) {
    const size_t rank = input.desc.rank();
    require_same_rank(op, "indices", indices, rank);
    Sizes in = meaningful(op, "input", input.sizes(), input_count, "input_dimension_count");
    Sizes idx = meaningful(op, "indices", indices.sizes(), indices_count, "indices_dimension_count");
    if (batch_count >= input_count || batch_count >= indices_count)
        throw ValueError(op + ": batch_dimension_count " + std::to_string(batch_count) +
                         " must be below input_dimension_count and indices_dimension_count");
    for (size_t i = 0; i < batch_count; ++i)
        if (in[i] != idx[i])
            throw ValueError(op + ": the batch dimensions of input " + sizes_to_string(in) + " and indices " +
                             sizes_to_string(idx) + " differ");
    const uint32_t tuple = idx.back();
    if (tuple < 1 || tuple > input_count - batch_count)
        throw ValueError(op + ": index tuples of " + std::to_string(tuple) + " coordinates (the last dimension of "
                              "indices) must address 1 to " + std::to_string(input_count - batch_count) +
                              " input dimensions");
    Sizes out(idx.begin(), idx.end() - 1);
    out.insert(out.end(), in.begin() + batch_count + tuple, in.end());
    return right_aligned(op, out, rank);
}

}  // namespace

Expression gather(const Expression& input, const Expression& indices, uint32_t axis, uint32_t index_dimensions) {
    const std::string op = "DML_OPERATOR_GATHER";
    const size_t rank = input.desc.rank();
    require_types(op, "indices", indices, kIndexTypes);
    require_same_rank(op, "indices", indices, rank);
    require_axis(op, axis, rank);
    if (index_dimensions > rank)
        throw ValueError(op + ": index_dimensions " + std::to_string(index_dimensions) + " exceeds the rank " +
                         std::to_string(rank));
    Sizes idx = index_dimensions ? meaningful(op, "indices", indices.sizes(), index_dimensions, "index_dimensions")
                                 : Sizes{};
    if (!index_dimensions && indices.desc.element_count() != 1)
        throw ValueError(op + ": with index_dimensions 0, indices must hold one index, got " +
                         sizes_to_string(indices.sizes()));
    const Sizes& in = input.sizes();
    Sizes out(in.begin(), in.begin() + axis);
    out.insert(out.end(), idx.begin(), idx.end());
    out.insert(out.end(), in.begin() + axis + 1, in.end());
    auto desc = std::make_shared<GatherDesc>();
    desc->axis = axis;
    desc->index_dimensions = index_dimensions;
    return add_single(op, desc, {input, indices}, TensorDesc(input.data_type(), right_aligned(op, out, rank)));
}

Expression gather_elements(const Expression& input, const Expression& indices, uint32_t axis) {
    const std::string op = "DML_OPERATOR_GATHER_ELEMENTS";
    require_types(op, "indices", indices, kIndexTypes);
    require_same_rank(op, "indices", indices, input.desc.rank());
    require_axis(op, axis, input.desc.rank());
    require_match_except(op, "indices", indices.sizes(), input.sizes(), axis);
    auto desc = std::make_shared<GatherElementsDesc>();
    desc->axis = axis;
    return add_single(op, desc, {input, indices}, TensorDesc(input.data_type(), indices.sizes()));
}

Expression gather_nd(const Expression& input, const Expression& indices, uint32_t input_dimension_count,
                     uint32_t indices_dimension_count, uint32_t batch_dimension_count) {
    const std::string op = "DML_OPERATOR_GATHER_ND1";
    require_types(op, "indices", indices, kIndexTypes);
    Sizes out = nd_block_sizes(op, input, indices, input_dimension_count, indices_dimension_count,
                               batch_dimension_count);
    auto desc = std::make_shared<GatherNdDesc>();
    desc->input_dimension_count = input_dimension_count;
    desc->indices_dimension_count = indices_dimension_count;
    desc->batch_dimension_count = batch_dimension_count;
    return add_single(op, desc, {input, indices}, TensorDesc(input.data_type(), out));
}

Expression scatter_elements(const Expression& input, const Expression& indices, const Expression& updates,
                            uint32_t axis) {
    const std::string op = "DML_OPERATOR_SCATTER_ELEMENTS";
    require_types(op, "indices", indices, kIndexTypes);
    require_same_rank(op, "indices", indices, input.desc.rank());
    require_axis(op, axis, input.desc.rank());
    require_match_except(op, "indices", indices.sizes(), input.sizes(), axis);
    require_same_type(op, "updates", updates, input.data_type());
    if (updates.sizes() != indices.sizes())
        throw ValueError(op + ": updates " + sizes_to_string(updates.sizes()) + " must have the sizes of indices " +
                         sizes_to_string(indices.sizes()));
    auto desc = std::make_shared<ScatterElementsDesc>();
    desc->axis = axis;
    return add_single(op, desc, {input, indices, updates}, packed_like(input));
}

Expression scatter_nd(const Expression& input, const Expression& indices, const Expression& updates,
                      uint32_t input_dimension_count, uint32_t indices_dimension_count) {
    const std::string op = "DML_OPERATOR_SCATTER_ND";
    require_types(op, "indices", indices, kIndexTypes);
    require_same_type(op, "updates", updates, input.data_type());
    Sizes want = nd_block_sizes(op, input, indices, input_dimension_count, indices_dimension_count, 0);
    if (updates.sizes() != want)
        throw ValueError(op + ": updates " + sizes_to_string(updates.sizes()) + " must have sizes " +
                         sizes_to_string(want) + " (the index tuples' grid, then the input dimensions they leave)");
    auto desc = std::make_shared<ScatterNdDesc>();
    desc->input_dimension_count = input_dimension_count;
    desc->indices_dimension_count = indices_dimension_count;
    return add_single(op, desc, {input, indices, updates}, packed_like(input));
}

Expression one_hot(const Expression& indices, const Expression& values, uint32_t output_length, uint32_t axis) {
    const std::string op = "DML_OPERATOR_ONE_HOT";
    require_types(op, "indices", indices, kIndexTypes);
    const size_t rank = indices.desc.rank();
    require_axis(op, axis, rank);
    if (values.desc.rank() != rank)
        throw ValueError(op + ": values " + sizes_to_string(values.sizes()) + " must have the indices' rank " +
                         std::to_string(rank));
    if (values.desc.element_count() < 2)
        throw ValueError(op + ": values must hold at least two elements (off value, on value)");
    if (indices.sizes()[axis] != 1)
        throw ValueError(op + ": indices " + sizes_to_string(indices.sizes()) + " must have size 1 on axis " +
                         std::to_string(axis));
    if (output_length == 0) throw ValueError(op + ": output_length must be positive");
    Sizes out = indices.sizes();
    out[axis] = output_length;
    auto desc = std::make_shared<OneHotDesc>();
    desc->axis = axis;
    return add_single(op, desc, {indices, values}, TensorDesc(values.data_type(), out));
}

}  // namespace dml
