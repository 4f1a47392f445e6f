// Reductions and scans: DML_OPERATOR_REDUCE (every DML_REDUCE_FUNCTION), CUMULATIVE_SUMMATION / PRODUCT, TOP_K1
// and NONZERO_COORDINATES.
#pragma once
#include <cmath>
#include <type_traits>
#include <vector>

#include "../graph.h"

namespace dml {

enum class ReduceFunction { ArgMax, ArgMin, Average, L1, L2, LogSum, LogSumExp, Max, Min, Multiply, Sum, SumSquare };
// DML_AXIS_DIRECTION: the traversal order of a scan, and which end of the order top-k keeps.
enum class AxisDirection { Increasing, Decreasing };

// Whether `v` replaces the running extreme `best` of a MAX/MIN/ARGMAX/ARGMIN scan (also max pooling's and ROI
// align's): only a strictly better value does, so the first extreme wins a tie; a number replaces NaN and NaN
// replaces nothing, so NaN is ignored unless every element is NaN (a GPU's max/min behaves so), whatever the order.
template <class C>
bool replaces_extreme(C v, C best, bool largest) {
    if constexpr (std::is_floating_point_v<C>)
        if (std::isnan(best)) return !std::isnan(v);
    return largest ? v > best : v < best;
}

struct ReduceDesc : OperatorDesc {
    ReduceFunction function;
    std::vector<uint32_t> axes;  // sorted, unique
    std::string type_name() const override { return "DML_OPERATOR_REDUCE"; }
};

struct CumulativeDesc : OperatorDesc {
    bool product = false;  // CUMULATIVE_PRODUCT, else CUMULATIVE_SUMMATION
    uint32_t axis = 0;
    AxisDirection direction = AxisDirection::Increasing;
    bool exclusive = false;  // the running tally is written before the current element joins it
    std::string type_name() const override;
};

struct TopKDesc : OperatorDesc {
    uint32_t axis = 0, k = 1;
    AxisDirection direction = AxisDirection::Decreasing;
    std::string type_name() const override { return "DML_OPERATOR_TOP_K1"; }
};

struct NonZeroCoordinatesDesc : OperatorDesc {
    std::string type_name() const override { return "DML_OPERATOR_NONZERO_COORDINATES"; }
};

// Empty axes reduce every axis. ARGMAX/ARGMIN return `output_type` indices (UINT32 by default, as DirectMLX does).
Expression reduce(const Expression& x, ReduceFunction f, std::vector<uint32_t> axes, DataType output_type);
Expression cumulative_summation(const Expression& x, uint32_t axis, AxisDirection direction, bool exclusive);
Expression cumulative_product(const Expression& x, uint32_t axis, AxisDirection direction, bool exclusive);

struct TopKOutputs {
    Expression values, indices;
};
// `k` replaces the size of `axis` in both outputs (DirectML's rule; DirectMLX resizes the last axis instead).
TopKOutputs top_k(const Expression& x, uint32_t axis, uint32_t k, AxisDirection direction, DataType index_type);

struct NonZeroCoordinatesOutputs {
    Expression count;        // UINT32 [1]
    Expression coordinates;  // UINT32 [element count, rank]; rows past `count` are zero
};
NonZeroCoordinatesOutputs non_zero_coordinates(const Expression& x);

}  // namespace dml
