// DML_MEAN_VARIANCE_NORMALIZATION1 / 2_OPERATOR_DESC and DML_BATCH_NORMALIZATION_OPERATOR_DESC.
#include "../core/ops/normalization.h"
#include "lowering.h"

namespace dml::directml {

void register_normalization_lowerings(LoweringTable& t) {
    add_lowering<MeanVarianceNormalizationDesc>(t, [](LoweringContext& c, const MeanVarianceNormalizationDesc& d) {
        // UseMean is MEAN_VARIANCE_NORMALIZATION2's (feature level 6.3): MVN1 elsewhere, for older DirectML.
        if (!d.normalize_mean)
            return c.lowered(DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION2,
                             DML_MEAN_VARIANCE_NORMALIZATION2_OPERATOR_DESC{
                                 c.input(0), c.input(1), c.input(2), c.output(0), UINT(d.axes.size()),
                                 c.store.array(d.axes), false, d.normalize_variance, d.epsilon, c.fused(d.fused)});
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
    add_lowering<BatchNormalizationTrainingDesc>(t, [](LoweringContext& c, const BatchNormalizationTrainingDesc& d) {
        return c.lowered(DML_OPERATOR_BATCH_NORMALIZATION_TRAINING,
                         DML_BATCH_NORMALIZATION_TRAINING_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.input(3),
                                                                        c.output(0), c.output(1), c.output(2),
                                                                        d.epsilon, c.fused(d.fused)});
    });
    add_lowering<BatchNormalizationGradDesc>(t, [](LoweringContext& c, const BatchNormalizationGradDesc& d) {
        return c.lowered(d.training ? DML_OPERATOR_BATCH_NORMALIZATION_TRAINING_GRAD
                                    : DML_OPERATOR_BATCH_NORMALIZATION_GRAD,
                         DML_BATCH_NORMALIZATION_GRAD_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.input(3),
                                                                    c.input(4), c.output(0), c.output(1), c.output(2),
                                                                    d.epsilon});
    });
    add_lowering<LocalResponseNormalizationDesc>(t, [](LoweringContext& c, const LocalResponseNormalizationDesc& d) {
        return c.lowered(DML_OPERATOR_LOCAL_RESPONSE_NORMALIZATION,
                         DML_LOCAL_RESPONSE_NORMALIZATION_OPERATOR_DESC{c.input(0), c.output(0), d.cross_channel,
                                                                        d.local_size, d.alpha, d.beta, d.bias});
    });
}

}  // namespace dml::directml
