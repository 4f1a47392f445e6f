// Generation and quantization: fill_value_constant / fill_value_sequence, random_generator, quantize_linear /
// dequantize_linear, quantize / dequantize, and constant_data (a node holding its own data).
#pragma once
#include <array>
#include <cstddef>
#include <cstring>
#include <optional>
#include <vector>

#include "../graph.h"

namespace dml {

// DML_SCALAR_UNION: one value held in the representation of the operator's value type (its first bytes).
struct ScalarUnion {
    std::array<std::byte, 8> bytes{};

    template <class T> static ScalarUnion of(T v) {
        static_assert(sizeof(T) <= 8);
        ScalarUnion s;
        std::memcpy(s.bytes.data(), &v, sizeof(T));
        return s;
    }
    template <class T> T as() const {
        T v;
        std::memcpy(&v, bytes.data(), sizeof(T));
        return v;
    }
};

struct FillValueConstantDesc : OperatorDesc {
    DataType value_data_type = DataType::Float32;
    ScalarUnion value;
    std::string type_name() const override { return "DML_OPERATOR_FILL_VALUE_CONSTANT"; }
};

// Element i (in row-major order) of the output is value_start + i * value_delta.
struct FillValueSequenceDesc : OperatorDesc {
    DataType value_data_type = DataType::Float32;
    ScalarUnion value_start, value_delta;
    std::string type_name() const override { return "DML_OPERATOR_FILL_VALUE_SEQUENCE"; }
};

enum class RandomGeneratorType { Philox4x32_10 };

// Input: the UINT32 {1,1,1,6} state (128-bit counter in elements 0-3, low word first, then the 64-bit key).
// Outputs: the random bits, then the state advanced by ceil(count / 4) when output_state is set.
struct RandomGeneratorDesc : OperatorDesc {
    RandomGeneratorType type = RandomGeneratorType::Philox4x32_10;
    bool output_state = true;
    std::string type_name() const override { return "DML_OPERATOR_RANDOM_GENERATOR"; }
};

// Inputs of the linear ones: input, scale, zero point (optional), all of the output's sizes.
struct QuantizeLinearDesc : OperatorDesc {
    std::string type_name() const override { return "DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR"; }
};
struct DequantizeLinearDesc : OperatorDesc {
    std::string type_name() const override { return "DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR"; }
};

// DML_OPERATOR_QUANTIZE / DEQUANTIZE take their parameters as a list whose meaning QuantizationType gives: the
// scale, then the zero point for SCALE_ZERO_POINT. A parameter may be smaller than the input in any dimension it
// divides: each entry then covers a block of input elements (block-wise quantization).
enum class QuantizationType { None, Scale, ScaleZeroPoint };
struct QuantizeDesc : OperatorDesc {
    QuantizationType quantization_type = QuantizationType::Scale;
    std::string type_name() const override { return "DML_OPERATOR_QUANTIZE"; }
};
struct DequantizeDesc : OperatorDesc {
    QuantizationType quantization_type = QuantizationType::Scale;
    std::string type_name() const override { return "DML_OPERATOR_DEQUANTIZE"; }
};

// A node that outputs data recorded in the graph (DirectML's DML_CONSTANT_DATA_GRAPH_NODE_DESC): packed bytes.
struct ConstantDataDesc : OperatorDesc {
    std::vector<std::byte> data;
    std::string type_name() const override { return "DML_GRAPH_NODE_TYPE_CONSTANT"; }
};

Expression fill_value_constant(const std::shared_ptr<Graph>& graph, const Sizes& sizes, DataType value_data_type,
                               ScalarUnion value);
Expression fill_value_sequence(const std::shared_ptr<Graph>& graph, const Sizes& sizes, DataType value_data_type,
                               ScalarUnion value_start, ScalarUnion value_delta);
// Returns the values and, when output_state is set, the updated state.
std::vector<Expression> random_generator(const Expression& input_state, const Sizes& output_sizes, bool output_state,
                                         RandomGeneratorType type);
// The output type is the zero point's; without one, `output_type` (UINT8 when not given).
Expression quantize_linear(const Expression& input, const Expression& scale, const std::optional<Expression>& zero_point,
                           std::optional<DataType> output_type);
// The output type is the scale's.
Expression dequantize_linear(const Expression& input, const Expression& scale,
                             const std::optional<Expression>& zero_point);
Expression quantize(const Expression& input, const Expression& scale, const std::optional<Expression>& zero_point,
                    std::optional<DataType> output_type);
Expression dequantize(const Expression& input, const Expression& scale, const std::optional<Expression>& zero_point);
Expression constant_data(const std::shared_ptr<Graph>& graph, TensorDesc desc, std::vector<std::byte> data);

// Shared with the quantized GEMM and convolution builders:
// A scale or zero point of one of `types` with `full`'s rank and, in each dimension, size 1 or full's size (per
// tensor or per row / column / channel).
void require_parameter(std::string_view op, std::string_view arg, const Expression& x,
                       std::initializer_list<DataType> types, const Sizes& full);
// The output type of a quantizing operator: the zero point's (which `output_type` must agree with), else
// `output_type`, else UINT8.
DataType quantized_output_type(std::string_view op, std::string_view arg, const std::optional<Expression>& zero_point,
                               std::optional<DataType> output_type);

}  // namespace dml
