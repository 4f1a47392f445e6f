// Data movement: DML_SLICE1, JOIN, SPLIT, PADDING1, TILE, SPACE_TO_DEPTH1 and DEPTH_TO_SPACE1 descriptions.
#include "../core/ops/data_movement.h"
#include "lowering.h"

namespace dml::directml {

void register_data_movement_lowerings(LoweringTable& t) {
    add_lowering<SliceDesc>(t, [](LoweringContext& c, const SliceDesc& d) {
        DescStore& s = c.store;
        return c.lowered(DML_OPERATOR_SLICE1,
                         DML_SLICE1_OPERATOR_DESC{c.input(0), c.output(0), UINT(d.offsets.size()), s.array(d.offsets),
                                                  s.array(d.sizes), s.array(d.strides)});
    });
    add_lowering<JoinDesc>(t, [](LoweringContext& c, const JoinDesc& d) {
        std::vector<DML_TENSOR_DESC> inputs;
        for (size_t i = 0; i < c.node.inputs.size(); ++i) inputs.push_back(c.input_value(i));
        UINT count = UINT(inputs.size());
        return c.lowered(DML_OPERATOR_JOIN,
                         DML_JOIN_OPERATOR_DESC{count, c.store.array(std::move(inputs)), c.output(0), d.axis});
    });
    add_lowering<SplitDesc>(t, [](LoweringContext& c, const SplitDesc& d) {
        std::vector<DML_TENSOR_DESC> outputs;
        for (const TensorDesc& out : c.node.outputs) outputs.push_back(c.store.tensor_value(out));
        UINT count = UINT(outputs.size());
        return c.lowered(DML_OPERATOR_SPLIT,
                         DML_SPLIT_OPERATOR_DESC{c.input(0), count, c.store.array(std::move(outputs)), d.axis});
    });
    add_lowering<PaddingDesc>(t, [](LoweringContext& c, const PaddingDesc& d) {
        DataType type = c.node.outputs[0].data_type;
        return c.lowered(DML_OPERATOR_PADDING1,
                         DML_PADDING1_OPERATOR_DESC{c.input(0), c.output(0), UINT(d.mode), DML_TENSOR_DATA_TYPE(type),
                                                    scalar(type, d.value), UINT(d.start.size()),
                                                    c.store.array(d.start), c.store.array(d.end)});
    });
    add_lowering<TileDesc>(t, [](LoweringContext& c, const TileDesc& d) {
        return c.lowered(DML_OPERATOR_TILE, DML_TILE_OPERATOR_DESC{c.input(0), c.output(0), UINT(d.repeats.size()),
                                                                   c.store.array(d.repeats)});
    });
    add_lowering<DepthSpaceDesc>(t, [](LoweringContext& c, const DepthSpaceDesc& d) {
        return c.lowered(d.to_depth ? DML_OPERATOR_SPACE_TO_DEPTH1 : DML_OPERATOR_DEPTH_TO_SPACE1,
                         DML_DEPTH_SPACE1_OPERATOR_DESC{c.input(0), c.output(0), d.block_size, UINT(d.order)});
    });
    add_lowering<SliceGradDesc>(t, [](LoweringContext& c, const SliceGradDesc& d) {
        DescStore& s = c.store;
        return c.lowered(DML_OPERATOR_SLICE_GRAD,
                         DML_SLICE_GRAD_OPERATOR_DESC{c.input(0), c.output(0), UINT(d.offsets.size()),
                                                      s.array(d.offsets), s.array(d.sizes), s.array(d.strides)});
    });
    add_lowering<ReverseSubsequencesDesc>(t, [](LoweringContext& c, const ReverseSubsequencesDesc& d) {
        return c.lowered(DML_OPERATOR_REVERSE_SUBSEQUENCES,
                         DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC{c.input(0), c.input(1), c.output(0), d.axis});
    });
}

}  // namespace dml::directml
