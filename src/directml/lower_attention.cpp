// DML_MULTIHEAD_ATTENTION_OPERATOR_DESC.
#include "../core/ops/attention.h"
#include "lowering.h"

namespace dml::directml {

void register_attention_lowerings(LoweringTable& t) {
    add_lowering<MultiheadAttentionDesc>(t, [](LoweringContext& c, const MultiheadAttentionDesc& d) {
        // The node has the outputs asked for, in DirectML's order: output, then present key and value if asked.
        size_t next = 1;
        const DML_TENSOR_DESC* present_key = d.output_present_key ? c.output(next++) : nullptr;
        const DML_TENSOR_DESC* present_value = d.output_present_value ? c.output(next++) : nullptr;
        return c.lowered(DML_OPERATOR_MULTIHEAD_ATTENTION,
                         DML_MULTIHEAD_ATTENTION_OPERATOR_DESC{
                             c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), c.input(5), c.input(6),
                             c.input(7), c.input(8), c.input(9), c.input(10), c.output(0), present_key, present_value,
                             d.scale, d.mask_filter_value, d.head_count, UINT(d.mask_type)});
    });
}

}  // namespace dml::directml
