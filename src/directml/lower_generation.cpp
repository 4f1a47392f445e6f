// Generation and quantization: DML_FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE, RANDOM_GENERATOR and
// ELEMENT_WISE_(DE)QUANTIZE_LINEAR, QUANTIZE and DEQUANTIZE descriptions.
#include <cstring>

#include "../core/ops/generation.h"
#include "lowering.h"

namespace dml::directml {

namespace {

// QUANTIZE / DEQUANTIZE: inputs input, scale, zero point (optional) become the input and the parameter list.
template <class D>
Lowered quantization(LoweringContext& c, DML_OPERATOR_TYPE type, const D& d) {
    std::vector<DML_TENSOR_DESC> parameters;
    for (size_t i = 1; i < c.node.inputs.size(); ++i)
        if (c.node.inputs[i]) parameters.push_back(c.input_value(i));
    UINT count = UINT(parameters.size());
    return c.lowered(type, DML_QUANTIZE_OPERATOR_DESC{c.input(0), UINT(d.quantization_type), count,
                                                      c.store.array(std::move(parameters)), c.output(0)});
}

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
    add_lowering<QuantizeDesc>(t, [](LoweringContext& c, const QuantizeDesc& d) {
        return quantization(c, DML_OPERATOR_QUANTIZE, d);
    });
    add_lowering<DequantizeDesc>(t, [](LoweringContext& c, const DequantizeDesc& d) {
        return quantization(c, DML_OPERATOR_DEQUANTIZE, d);
    });
    add_lowering<DequantizeLinearDesc>(t, [](LoweringContext& c, const DequantizeLinearDesc&) {
        return c.lowered(DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR,
                         DML_ELEMENT_WISE_QUANTIZATION_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.output(0)});
    });
}

}  // namespace dml::directml
