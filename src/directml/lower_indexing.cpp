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
        // {Indices, Values, Output, Axis}: GATHER's layout.
        return c.lowered(DML_OPERATOR_ONE_HOT, DML_GATHER_OPERATOR_DESC{c.input(0), c.input(1), c.output(0), d.axis, 0});
    });
}

}  // namespace dml::directml
