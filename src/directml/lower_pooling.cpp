// DML_AVERAGE_POOLING(1)_OPERATOR_DESC and DML_MAX_POOLING2_OPERATOR_DESC.
#include "../core/ops/pooling.h"
#include "lowering.h"

namespace dml::directml {

void register_pooling_lowerings(LoweringTable& t) {
    add_lowering<AveragePoolingDesc>(t, [](LoweringContext& c, const AveragePoolingDesc& d) {
        const PoolingWindow& w = d.window;
        DescStore& s = c.store;
        UINT spatial = UINT(w.window_size.size());
        // The original operator where it suffices: AVERAGE_POOLING1 (dilations) needs feature level 6.2.
        if (d.type_name() == "DML_OPERATOR_AVERAGE_POOLING")
            return c.lowered(DML_OPERATOR_AVERAGE_POOLING,
                             DML_AVERAGE_POOLING_OPERATOR_DESC{c.input(0), c.output(0), spatial, s.array(w.strides),
                                                               s.array(w.window_size), s.array(w.start_padding),
                                                               s.array(w.end_padding), d.include_padding});
        return c.lowered(DML_OPERATOR_AVERAGE_POOLING1,
                         DML_AVERAGE_POOLING1_OPERATOR_DESC{c.input(0), c.output(0), spatial, s.array(w.strides),
                                                            s.array(w.window_size), s.array(w.start_padding),
                                                            s.array(w.end_padding), s.array(w.dilations),
                                                            d.include_padding});
    });
    add_lowering<MaxPoolingDesc>(t, [](LoweringContext& c, const MaxPoolingDesc& d) {
        const PoolingWindow& w = d.window;
        DescStore& s = c.store;
        return c.lowered(DML_OPERATOR_MAX_POOLING2,
                         DML_MAX_POOLING2_OPERATOR_DESC{c.input(0), c.output(0), d.output_indices ? c.output(1) : nullptr,
                                                        UINT(w.window_size.size()), s.array(w.strides),
                                                        s.array(w.window_size), s.array(w.start_padding),
                                                        s.array(w.end_padding), s.array(w.dilations)});
    });
}

}  // namespace dml::directml
