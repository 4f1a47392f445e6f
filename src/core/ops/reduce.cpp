#include "reduce.h"

#include "../errors.h"
#include "common.h"

namespace dml {

std::string ReduceDesc::type_name() const {
    if (function == ReduceFunction::ArgMax) return "DML_OPERATOR_ARGMAX";
    if (function == ReduceFunction::ArgMin) return "DML_OPERATOR_ARGMIN";
    return "DML_OPERATOR_REDUCE";
}

Expression reduce(const Expression& x, ReduceFunction f, std::vector<uint32_t> axes, DataType output_type) {
    auto desc = std::make_shared<ReduceDesc>();
    desc->function = f;
    std::string op = desc->type_name();
    size_t rank = x.desc.rank();
    if (axes.empty())
        for (uint32_t i = 0; i < rank; ++i) axes.push_back(i);
    desc->axes = normalize_axes(op, axes, rank);
    const bool arg = f == ReduceFunction::ArgMax || f == ReduceFunction::ArgMin;
    switch (f) {
        case ReduceFunction::ArgMax: case ReduceFunction::ArgMin: case ReduceFunction::Max: case ReduceFunction::Min:
        case ReduceFunction::Sum: case ReduceFunction::Multiply:
            require_types(op, "input", x, kAllTypes);
            break;
        case ReduceFunction::L1: case ReduceFunction::SumSquare:
            require_types(op, "input", x,
                          {DataType::Float32, DataType::Float16, DataType::Float64, DataType::UInt32, DataType::Int32,
                           DataType::UInt64, DataType::Int64});
            break;
        default: require_types(op, "input", x, kFloatTypes);
    }
    if (arg && output_type != DataType::UInt32 && output_type != DataType::Int32 && output_type != DataType::UInt64 &&
        output_type != DataType::Int64)
        throw ValueError(op + ": output_dtype must be UINT32, INT32, UINT64 or INT64, got " +
                         std::string(data_type_name(output_type)));
    Sizes out = x.sizes();
    for (uint32_t a : desc->axes) out[a] = 1;
    return add_single(op, desc, {x}, TensorDesc(arg ? output_type : x.data_type(), out));
}

}  // namespace dml
