// Indexing: DML_GATHER, GATHER_ELEMENTS, GATHER_ND1, SCATTER_ELEMENTS, SCATTER_ND and ONE_HOT descriptions.
#include "../core/ops/indexing.h"
#include "lowering.h"

namespace dml::directml {

void register_indexing_lowerings(LoweringTable& t) {
    add_lowering<GatherDesc>(t, [](LoweringContext& c, const GatherDesc& d) {
        return c.lowered(DML_OPERATOR_GATHER, DML_GATHER_OPERATOR_DESC{c.input(0), c.input(1), c.output(0), d.axis,
                                                                       d.index_dimensions});
    });
    add_lowering<GatherElementsDesc>(t, [](LoweringContext& c, const GatherElementsDesc& d) {
        return c.lowered(DML_OPERATOR_GATHER_ELEMENTS,
                         DML_GATHER_OPERATOR_DESC{c.input(0), c.input(1), c.output(0), d.axis, 0});
    });
    add_lowering<GatherNdDesc>(t, [](LoweringContext& c, const GatherNdDesc& d) {
        return c.lowered(DML_OPERATOR_GATHER_ND1,
                         DML_GATHER_ND1_OPERATOR_DESC{c.input(0), c.input(1), c.output(0), d.input_dimension_count,
                                                      d.indices_dimension_count, d.batch_dimension_count});
    });
    add_lowering<ScatterElementsDesc>(t, [](LoweringContext& c, const ScatterElementsDesc& d) {
        return c.lowered(DML_OPERATOR_SCATTER_ELEMENTS,
                         DML_SCATTER_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.output(0), {d.axis, 0}});
    });
    add_lowering<ScatterNdDesc>(t, [](LoweringContext& c, const ScatterNdDesc& d) {
        return c.lowered(DML_OPERATOR_SCATTER_ND,
                         DML_SCATTER_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.output(0),
                                                   {d.input_dimension_count, d.indices_dimension_count}});
    });
    add_lowering<OneHotDesc>(t, [](LoweringContext& c, const OneHotDesc& d) {
        // DML_ONE_HOT's docs: the off value is Values' first element, the on value the next along its fastest-changing
        // dimension of size > 1. DirectML (on lavapipe) reads the next along the last dimension whatever its size
        // ([4, 2, 9] as [1, 1, 3, 1] gave on = off = 4), so it is handed a [1, ..., 1, 2] view that steps there.
        const TensorDesc& values = c.node.inputs.at(1)->desc;
        const Strides steps = values.effective_strides();
        uint32_t on_step = 0;
        for (size_t i = values.rank(); i-- > 0;)
            if (values.sizes[i] > 1) {
                on_step = steps[i];
                break;
            }
        Sizes sizes(values.rank(), 1);
        Strides strides(values.rank(), 0);
        sizes.back() = 2;
        strides.back() = on_step;
        DML_TENSOR_DESC view = c.input_value(1);
        auto buffer = *static_cast<const DML_BUFFER_TENSOR_DESC*>(view.Desc);
        buffer.Sizes = c.store.array(sizes);
        buffer.Strides = c.store.array(strides);
        const DML_TENSOR_DESC* on_off = c.store.add(DML_TENSOR_DESC{DML_TENSOR_TYPE_BUFFER, c.store.add(buffer)});
        // {Indices, Values, Output, Axis}: GATHER's layout.
        return c.lowered(DML_OPERATOR_ONE_HOT, DML_GATHER_OPERATOR_DESC{c.input(0), on_off, c.output(0), d.axis, 0});
    });
}

}  // namespace dml::directml
