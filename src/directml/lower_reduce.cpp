// DML_REDUCE_OPERATOR_DESC.
#include "../core/ops/reduce.h"
#include "lowering.h"

namespace dml::directml {

void register_reduce_lowerings(LoweringTable& t) {
    add_lowering<ReduceDesc>(t, [](LoweringContext& c, const ReduceDesc& d) {
        return c.lowered(DML_OPERATOR_REDUCE, DML_REDUCE_OPERATOR_DESC{UINT(d.function), c.input(0), c.output(0),
                                                                       UINT(d.axes.size()), c.store.array(d.axes)});
    });
}

}  // namespace dml::directml
