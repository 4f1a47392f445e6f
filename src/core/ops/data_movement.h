// Data movement: DML_OPERATOR_SLICE1 (negative strides too), DML_OPERATOR_JOIN and DML_OPERATOR_SPLIT.
#pragma once
#include <vector>

#include "../graph.h"

namespace dml {

struct SliceDesc : OperatorDesc {
    std::vector<uint32_t> offsets, sizes;
    std::vector<int32_t> strides;
    std::string type_name() const override { return "DML_OPERATOR_SLICE1"; }
};

struct JoinDesc : OperatorDesc {
    uint32_t axis;
    std::string type_name() const override { return "DML_OPERATOR_JOIN"; }
};

struct SplitDesc : OperatorDesc {
    uint32_t axis;
    std::string type_name() const override { return "DML_OPERATOR_SPLIT"; }
};

Expression slice(const Expression& x, std::vector<uint32_t> offsets, std::vector<uint32_t> sizes,
                 std::vector<int32_t> strides);
Expression join(const std::vector<Expression>& inputs, uint32_t axis);
std::vector<Expression> split(const Expression& x, uint32_t axis, const std::vector<uint32_t>& output_sizes);

}  // namespace dml
