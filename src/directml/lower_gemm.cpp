// DML_GEMM_OPERATOR_DESC.
#include "../core/ops/gemm.h"
#include "lowering.h"

namespace dml::directml {

void register_gemm_lowerings(LoweringTable& t) {
    add_lowering<GemmDesc>(t, [](LoweringContext& c, const GemmDesc& d) {
        return c.lowered(DML_OPERATOR_GEMM,
                         DML_GEMM_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.output(0),
                                                DML_MATRIX_TRANSFORM(d.trans_a), DML_MATRIX_TRANSFORM(d.trans_b),
                                                d.alpha, d.beta, c.fused(d.fused)});
    });
}

}  // namespace dml::directml
