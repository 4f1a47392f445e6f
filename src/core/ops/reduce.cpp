#include "reduce.h"

#include "../errors.h"
#include "common.h"

namespace dml {

namespace {

// The element types DirectML's tensor-support tables list (highest feature level) for each group of functions.
const std::initializer_list<DataType> kFloat16To32 = {DataType::Float32, DataType::Float16};
const std::initializer_list<DataType> kArithmeticTypes = {DataType::Float32, DataType::Float16, DataType::Int64,
                                                          DataType::Int32,   DataType::UInt64,  DataType::UInt32};
const std::initializer_list<DataType> kEveryNonFloat64 = {
    DataType::Float32, DataType::Float16, DataType::Int64,  DataType::Int32,  DataType::Int16,
    DataType::Int8,    DataType::UInt64,  DataType::UInt32, DataType::UInt16, DataType::UInt8};

void require_index_type(std::string_view op, std::string_view arg, DataType t, std::initializer_list<DataType> allowed) {
    for (DataType a : allowed)
        if (a == t) return;
    std::string names;
    for (DataType a : allowed) names += (names.empty() ? "" : ", ") + std::string(data_type_name(a));
    throw ValueError(std::string(op) + ": " + std::string(arg) + " must be " + names + ", got " +
                     std::string(data_type_name(t)));
}

uint32_t checked_axis(std::string_view op, uint32_t axis, const Expression& x) {
    if (axis >= x.desc.rank())
        throw ValueError(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for a " +
                         std::to_string(x.desc.rank()) + "-D tensor");
    return axis;
}

Expression cumulative(const Expression& x, bool product, uint32_t axis, AxisDirection direction, bool exclusive) {
    auto desc = std::make_shared<CumulativeDesc>();
    desc->product = product;
    const std::string op = desc->type_name();
    require_types(op, "input", x, kArithmeticTypes);
    desc->axis = checked_axis(op, axis, x);
    desc->direction = direction;
    desc->exclusive = exclusive;
    return add_single(op, desc, {x}, packed_like(x));
}

}  // namespace

std::string CumulativeDesc::type_name() const {
    return product ? "DML_OPERATOR_CUMULATIVE_PRODUCT" : "DML_OPERATOR_CUMULATIVE_SUMMATION";
}

Expression reduce(const Expression& x, ReduceFunction f, std::vector<uint32_t> axes, DataType output_type) {
    auto desc = std::make_shared<ReduceDesc>();
    desc->function = f;
    const std::string op = desc->type_name();
    const size_t rank = x.desc.rank();
    if (axes.empty())
        for (uint32_t i = 0; i < rank; ++i) axes.push_back(i);
    desc->axes = normalize_axes(op, axes, rank);
    const bool arg = f == ReduceFunction::ArgMax || f == ReduceFunction::ArgMin;
    switch (f) {
        case ReduceFunction::ArgMax: case ReduceFunction::ArgMin: case ReduceFunction::Max: case ReduceFunction::Min:
            require_types(op, "input", x, kEveryNonFloat64);
            break;
        case ReduceFunction::L1: case ReduceFunction::SumSquare: case ReduceFunction::Multiply: case ReduceFunction::Sum:
            require_types(op, "input", x, kArithmeticTypes);
            break;
        default: require_types(op, "input", x, kFloat16To32);  // AVERAGE, L2, LOG_SUM, LOG_SUM_EXP
    }
    if (arg)
        require_index_type(op, "output_dtype", output_type,
                           {DataType::UInt32, DataType::Int32, DataType::UInt64, DataType::Int64});
    Sizes out = x.sizes();
    for (uint32_t a : desc->axes) out[a] = 1;
    return add_single(op, desc, {x}, TensorDesc(arg ? output_type : x.data_type(), out));
}

Expression cumulative_summation(const Expression& x, uint32_t axis, AxisDirection direction, bool exclusive) {
    return cumulative(x, false, axis, direction, exclusive);
}

Expression cumulative_product(const Expression& x, uint32_t axis, AxisDirection direction, bool exclusive) {
    return cumulative(x, true, axis, direction, exclusive);
}

TopKOutputs top_k(const Expression& x, uint32_t axis, uint32_t k, AxisDirection direction, DataType index_type) {
    auto desc = std::make_shared<TopKDesc>();
    const std::string op = desc->type_name();
    require_types(op, "input", x, kEveryNonFloat64);
    desc->axis = checked_axis(op, axis, x);
    const uint32_t n = x.sizes()[axis];
    // DirectML's docs ask for k < n; k == n (a full sort) is what every framework maps onto TOP_K, so it is kept.
    if (k == 0 || k > n)
        throw ValueError(op + ": k must be in [1, " + std::to_string(n) + "] (the size of axis " + std::to_string(axis) +
                         "), got " + std::to_string(k));
    require_index_type(op, "output_dtype", index_type, {DataType::UInt32, DataType::UInt64});
    desc->k = k;
    desc->direction = direction;
    Sizes out = x.sizes();
    out[axis] = k;
    auto outs = x.graph->add_node(desc, {x}, {TensorDesc(x.data_type(), out), TensorDesc(index_type, out)});
    return {outs[0], outs[1]};
}

NonZeroCoordinatesOutputs non_zero_coordinates(const Expression& x) {
    auto desc = std::make_shared<NonZeroCoordinatesDesc>();
    const std::string op = desc->type_name();
    require_types(op, "input", x,
                  {DataType::Float32, DataType::Float16, DataType::Int32, DataType::Int16, DataType::Int8,
                   DataType::UInt32, DataType::UInt16, DataType::UInt8});
    const uint64_t m = x.desc.element_count();
    if (m > UINT32_MAX) throw ValueError(op + ": the input has more elements than UINT32 coordinates can count");
    auto outs = x.graph->add_node(desc, {x},
                                  {TensorDesc(DataType::UInt32, {1}),
                                   TensorDesc(DataType::UInt32, {uint32_t(m), uint32_t(x.desc.rank())})});
    return {outs[0], outs[1]};
}

}  // namespace dml
