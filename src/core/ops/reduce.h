// DML_OPERATOR_REDUCE (and ARGMAX/ARGMIN): reduces the given axes to size 1, keeping the rank.
#pragma once
#include <vector>

#include "../graph.h"

namespace dml {

enum class ReduceFunction { ArgMax, ArgMin, Average, L1, L2, LogSum, LogSumExp, Max, Min, Multiply, Sum, SumSquare };

struct ReduceDesc : OperatorDesc {
    ReduceFunction function;
    std::vector<uint32_t> axes;  // sorted, unique
    std::string type_name() const override;
};

// Empty axes reduce every axis. ARGMAX/ARGMIN return `output_type` indices (UINT32 by default, as DirectMLX does).
Expression reduce(const Expression& x, ReduceFunction f, std::vector<uint32_t> axes, DataType output_type);

}  // namespace dml
