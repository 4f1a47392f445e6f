// Generation and quantization: DML_FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE, RANDOM_GENERATOR and
// ELEMENT_WISE_(DE)QUANTIZE_LINEAR descriptions.
#include <cstring>

#include "../core/ops/generation.h"
#include "lowering.h"

namespace dml::directml {

namespace {

DML_SCALAR_UNION scalar_of(const ScalarUnion& s) {
    DML_SCALAR_UNION u = {};
    std::memcpy(u.Bytes, s.bytes.data(), sizeof u.Bytes);
    return u;
}

}  // namespace

void register_generation_lowerings(LoweringTable& t) {
    add_lowering<FillValueConstantDesc>(t, [](LoweringContext& c, const FillValueConstantDesc& d) {
        return c.lowered(DML_OPERATOR_FILL_VALUE_CONSTANT,
                         DML_FILL_VALUE_CONSTANT_OPERATOR_DESC{c.output(0), DML_TENSOR_DATA_TYPE(d.value_data_type),
                                                               scalar_of(d.value)});
    });
    add_lowering<FillValueSequenceDesc>(t, [](LoweringContext& c, const FillValueSequenceDesc& d) {
        return c.lowered(DML_OPERATOR_FILL_VALUE_SEQUENCE,
                         DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC{c.output(0), DML_TENSOR_DATA_TYPE(d.value_data_type),
                                                               scalar_of(d.value_start), scalar_of(d.value_delta)});
    });
    add_lowering<RandomGeneratorDesc>(t, [](LoweringContext& c, const RandomGeneratorDesc& d) {
        return c.lowered(DML_OPERATOR_RANDOM_GENERATOR,
                         DML_RANDOM_GENERATOR_OPERATOR_DESC{c.input(0), c.output(0),
                                                            d.output_state ? c.output(1) : nullptr, UINT(d.type)});
    });
    add_lowering<QuantizeLinearDesc>(t, [](LoweringContext& c, const QuantizeLinearDesc&) {
        return c.lowered(DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR,
                         DML_ELEMENT_WISE_QUANTIZATION_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.output(0)});
    });
    add_lowering<DequantizeLinearDesc>(t, [](LoweringContext& c, const DequantizeLinearDesc&) {
        return c.lowered(DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR,
                         DML_ELEMENT_WISE_QUANTIZATION_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.output(0)});
    });
}

}  // namespace dml::directml
