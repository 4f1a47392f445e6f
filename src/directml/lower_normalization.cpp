// DML_MEAN_VARIANCE_NORMALIZATION1_OPERATOR_DESC and DML_BATCH_NORMALIZATION_OPERATOR_DESC.
#include "../core/ops/normalization.h"
#include "lowering.h"

namespace dml::directml {

void register_normalization_lowerings(LoweringTable& t) {
    add_lowering<MeanVarianceNormalizationDesc>(t, [](LoweringContext& c, const MeanVarianceNormalizationDesc& d) {
        return c.lowered(DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1,
                         DML_MEAN_VARIANCE_NORMALIZATION1_OPERATOR_DESC{
                             c.input(0), c.input(1), c.input(2), c.output(0), UINT(d.axes.size()),
                             c.store.array(d.axes), d.normalize_variance, d.epsilon, c.fused(d.fused)});
    });
    add_lowering<BatchNormalizationDesc>(t, [](LoweringContext& c, const BatchNormalizationDesc& d) {
        return c.lowered(DML_OPERATOR_BATCH_NORMALIZATION,
                         DML_BATCH_NORMALIZATION_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.input(3),
                                                               c.input(4), c.output(0), d.spatial, d.epsilon,
                                                               c.fused(d.fused)});
    });
}

}  // namespace dml::directml
