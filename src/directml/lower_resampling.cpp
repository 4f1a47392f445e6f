// Resampling: DML_RESAMPLE2 / 3, RESAMPLE_GRAD1, UPSAMPLE_2D and VALUE_SCALE_2D descriptions.
#include "../core/ops/resampling.h"
#include "lowering.h"

namespace dml::directml {

namespace {

DML_RESAMPLE2_OPERATOR_DESC resample(LoweringContext& c, const ResampleParams& p) {
    return {c.input(0),           c.output(0),           UINT(p.mode),
            UINT(p.rounding),     UINT(p.scales.size()), c.store.array(p.scales),
            c.store.array(p.input_offsets), c.store.array(p.output_offsets)};
}

}  // namespace

void register_resampling_lowerings(LoweringTable& t) {
    add_lowering<ResampleDesc>(t, [](LoweringContext& c, const ResampleDesc& d) {
        // Antialiased is RESAMPLE3's (feature level 6.4): RESAMPLE2 elsewhere, for older DirectML.
        if (d.params.antialiased)
            return c.lowered(DML_OPERATOR_RESAMPLE3, DML_RESAMPLE3_OPERATOR_DESC{resample(c, d.params), true});
        return c.lowered(DML_OPERATOR_RESAMPLE2, resample(c, d.params));
    });
    add_lowering<ResampleGradDesc>(t, [](LoweringContext& c, const ResampleGradDesc& d) {
        return c.lowered(DML_OPERATOR_RESAMPLE_GRAD1, resample(c, d.params));
    });
    add_lowering<Upsample2dDesc>(t, [](LoweringContext& c, const Upsample2dDesc& d) {
        return c.lowered(DML_OPERATOR_UPSAMPLE_2D, DML_UPSAMPLE_2D_OPERATOR_DESC{c.input(0), c.output(0), d.scale_width,
                                                                                 d.scale_height, UINT(d.mode)});
    });
    add_lowering<ValueScale2dDesc>(t, [](LoweringContext& c, const ValueScale2dDesc& d) {
        return c.lowered(DML_OPERATOR_VALUE_SCALE_2D,
                         DML_VALUE_SCALE_2D_OPERATOR_DESC{c.input(0), c.output(0), d.scale, UINT(d.bias.size()),
                                                          c.store.array(d.bias)});
    });
}

}  // namespace dml::directml
