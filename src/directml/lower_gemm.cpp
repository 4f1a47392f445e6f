// DML_GEMM_OPERATOR_DESC.
#include "../core/ops/gemm.h"
#include "lowering.h"

namespace dml::directml {

void register_gemm_lowerings(LoweringTable& t) {
    add_lowering<GemmDesc>(t, [](LoweringContext& c, const GemmDesc& d) {
        return c.lowered(DML_OPERATOR_GEMM,
                         DML_GEMM_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.output(0),
                                                DML_MATRIX_TRANSFORM(d.trans_a), DML_MATRIX_TRANSFORM(d.trans_b),
                                                d.alpha, d.beta, c.after(d.fused)});
    });
    add_lowering<MatrixMultiplyIntegerDesc>(t, [](LoweringContext& c, const MatrixMultiplyIntegerDesc&) {
        return c.lowered(DML_OPERATOR_MATRIX_MULTIPLY_INTEGER,
                         DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.input(3),
                                                                   c.output(0)});
    });
    add_lowering<QuantizedLinearMatrixMultiplyDesc>(t, [](LoweringContext& c, const QuantizedLinearMatrixMultiplyDesc&) {
        return c.lowered(DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY,
                         DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY_OPERATOR_DESC{c.input(0), c.input(1), c.input(2),
                                                                            c.input(3), c.input(4), c.input(5),
                                                                            c.input(6), c.input(7), c.output(0)});
    });
}

}  // namespace dml::directml
