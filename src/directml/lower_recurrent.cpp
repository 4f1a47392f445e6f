// DML_GRU_OPERATOR_DESC.
#include "../core/errors.h"
#include "../core/ops/recurrent.h"
#include "lowering.h"

namespace dml::directml {

void register_recurrent_lowerings(LoweringTable& t) {
    add_lowering<GRUDesc>(t, [](LoweringContext& c, const GRUDesc& d) {
        std::vector<DML_OPERATOR_DESC> activations;
        for (const FusedActivation& f : d.activations) {
            if (!fusable(f))
                throw ValueError("DirectML's GRU takes only activations it can fuse, not " +
                                 activation_type_name(f.function));
            activations.push_back(activation_desc(c.store, f, nullptr, nullptr));
        }
        size_t next = 0;  // the node has the outputs asked for, in DirectML's order
        const DML_TENSOR_DESC* sequence = d.output_sequence ? c.output(next++) : nullptr;
        const DML_TENSOR_DESC* single = d.output_single ? c.output(next++) : nullptr;
        UINT count = UINT(activations.size());
        return c.lowered(DML_OPERATOR_GRU,
                         DML_GRU_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), c.input(5),
                                               sequence, single, count, c.store.array(std::move(activations)),
                                               UINT(d.direction), d.linear_before_reset});
    });
}

}  // namespace dml::directml
