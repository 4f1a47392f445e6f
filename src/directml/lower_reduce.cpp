// DML_REDUCE_OPERATOR_DESC.
#include "../core/ops/reduce.h"
#include "lowering.h"

namespace dml::directml {

void register_reduce_lowerings(LoweringTable& t) {
    add_lowering<ReduceDesc>(t, [](LoweringContext& c, const ReduceDesc& d) {
        return c.lowered(DML_OPERATOR_REDUCE, DML_REDUCE_OPERATOR_DESC{UINT(d.function), c.input(0), c.output(0),
                                                                       UINT(d.axes.size()), c.store.array(d.axes)});
    });
    add_lowering<CumulativeDesc>(t, [](LoweringContext& c, const CumulativeDesc& d) {
        return c.lowered(d.product ? DML_OPERATOR_CUMULATIVE_PRODUCT : DML_OPERATOR_CUMULATIVE_SUMMATION,
                         DML_CUMULATIVE_OPERATOR_DESC{c.input(0), c.output(0), d.axis, UINT(d.direction), d.exclusive});
    });
    add_lowering<TopKDesc>(t, [](LoweringContext& c, const TopKDesc& d) {
        return c.lowered(DML_OPERATOR_TOP_K1, DML_TOP_K1_OPERATOR_DESC{c.input(0), c.output(0), c.output(1), d.axis,
                                                                       d.k, UINT(d.direction)});
    });
    add_lowering<NonZeroCoordinatesDesc>(t, [](LoweringContext& c, const NonZeroCoordinatesDesc&) {
        return c.lowered(DML_OPERATOR_NONZERO_COORDINATES,
                         DML_NONZERO_COORDINATES_OPERATOR_DESC{c.input(0), c.output(0), c.output(1)});
    });
}

}  // namespace dml::directml
