#include "generation.h"

#include "../errors.h"
#include "common.h"

namespace dml {

namespace {

const std::initializer_list<DataType> kQuantizedTypes = {DataType::Int8, DataType::UInt8};
const std::initializer_list<DataType> kHalfOrFloat = {DataType::Float32, DataType::Float16};

std::string type_string(DataType t) { return std::string(data_type_name(t)); }

// Operators with no tensor input take their graph explicitly.
const std::shared_ptr<Graph>& require_graph(std::string_view op, const std::shared_ptr<Graph>& graph) {
    if (!graph) throw ValueError(std::string(op) + ": needs a Graph");
    return graph;
}

// The linear operators' parameters have the input's sizes exactly (broadcast them with dml.broadcast).
void require_input_sizes(std::string_view op, std::string_view arg, const Expression& x, const Expression& input) {
    if (x.sizes() != input.sizes())
        throw ValueError(std::string(op) + ": " + std::string(arg) + " has sizes " + sizes_to_string(x.sizes()) +
                         " but the input has " + sizes_to_string(input.sizes()) +
                         " (broadcast it explicitly with dml.broadcast)");
}

// QUANTIZE / DEQUANTIZE parameters: the input's rank, each size dividing the input's (a block per entry); the
// zero point has the scale's sizes.
void require_block_shapes(std::string_view op, const Expression& input, const Expression& scale,
                          const std::optional<Expression>& zero_point) {
    bool ok = scale.desc.rank() == input.desc.rank();
    for (size_t d = 0; ok && d < scale.desc.rank(); ++d) ok = input.sizes()[d] % scale.sizes()[d] == 0;
    if (!ok)
        throw ValueError(std::string(op) + ": scale " + sizes_to_string(scale.sizes()) +
                         " must have the input's rank and sizes that divide the input's " +
                         sizes_to_string(input.sizes()));
    if (zero_point && zero_point->sizes() != scale.sizes())
        throw ValueError(std::string(op) + ": zero_point has sizes " + sizes_to_string(zero_point->sizes()) +
                         " but scale has " + sizes_to_string(scale.sizes()));
}

}  // namespace

void require_parameter(std::string_view op, std::string_view arg, const Expression& x,
                       std::initializer_list<DataType> types, const Sizes& full) {
    require_types(op, arg, x, types);
    bool ok = x.desc.rank() == full.size();
    for (size_t d = 0; ok && d < full.size(); ++d) ok = x.sizes()[d] == 1 || x.sizes()[d] == full[d];
    if (!ok)
        throw ValueError(std::string(op) + ": " + std::string(arg) + " has sizes " + sizes_to_string(x.sizes()) +
                         "; expected " + sizes_to_string(Sizes(full.size(), 1u)) + " or " + sizes_to_string(full));
}

DataType quantized_output_type(std::string_view op, std::string_view arg, const std::optional<Expression>& zero_point,
                               std::optional<DataType> output_type) {
    if (zero_point) {
        require_types(op, arg, *zero_point, kQuantizedTypes);
        if (output_type && *output_type != zero_point->data_type())
            throw ValueError(std::string(op) + ": the output type " + type_string(*output_type) +
                             " differs from " + std::string(arg) + "'s " + type_string(zero_point->data_type()));
        return zero_point->data_type();
    }
    DataType t = output_type.value_or(DataType::UInt8);
    if (t != DataType::Int8 && t != DataType::UInt8)
        throw ValueError(std::string(op) + ": the output type must be INT8 or UINT8, got " + type_string(t));
    return t;
}

Expression fill_value_constant(const std::shared_ptr<Graph>& graph, const Sizes& sizes, DataType value_data_type,
                               ScalarUnion value) {
    const std::string op = "DML_OPERATOR_FILL_VALUE_CONSTANT";
    TensorDesc out(value_data_type, sizes);
    auto desc = std::make_shared<FillValueConstantDesc>();
    desc->value_data_type = value_data_type;
    desc->value = value;
    return require_graph(op, graph)->add_node(desc, {}, {out})[0];
}

Expression fill_value_sequence(const std::shared_ptr<Graph>& graph, const Sizes& sizes, DataType value_data_type,
                               ScalarUnion value_start, ScalarUnion value_delta) {
    const std::string op = "DML_OPERATOR_FILL_VALUE_SEQUENCE";
    TensorDesc out(value_data_type, sizes);
    auto desc = std::make_shared<FillValueSequenceDesc>();
    desc->value_data_type = value_data_type;
    desc->value_start = value_start;
    desc->value_delta = value_delta;
    return require_graph(op, graph)->add_node(desc, {}, {out})[0];
}

std::vector<Expression> random_generator(const Expression& input_state, const Sizes& output_sizes, bool output_state,
                                         RandomGeneratorType type) {
    const std::string op = "DML_OPERATOR_RANDOM_GENERATOR";
    auto graph = common_graph(op, {&input_state});
    require_types(op, "input_state", input_state, {DataType::UInt32});
    const Sizes state_sizes = {1, 1, 1, 6};
    if (input_state.sizes() != state_sizes)
        throw ValueError(op + ": a PHILOX_4X32_10 state has sizes [1, 1, 1, 6], got " +
                         sizes_to_string(input_state.sizes()));
    if (output_sizes.size() != 4)
        throw ValueError(op + ": output_sizes must have 4 dimensions, got " + sizes_to_string(output_sizes));
    std::vector<TensorDesc> outputs = {TensorDesc(DataType::UInt32, output_sizes)};
    if (output_state) outputs.emplace_back(DataType::UInt32, state_sizes);
    auto desc = std::make_shared<RandomGeneratorDesc>();
    desc->type = type;
    desc->output_state = output_state;
    return graph->add_node(desc, {input_state}, outputs);
}

Expression quantize_linear(const Expression& input, const Expression& scale, const std::optional<Expression>& zero_point,
                           std::optional<DataType> output_type) {
    const std::string op = "DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR";
    common_graph(op, {&input, &scale, zero_point ? &*zero_point : nullptr});
    require_types(op, "input", input, {DataType::Float32, DataType::Float16, DataType::Int32});
    // INT32 input takes FLOAT32 scales; a float input takes scales of its own type.
    const DataType scale_type = input.data_type() == DataType::Int32 ? DataType::Float32 : input.data_type();
    if (scale.data_type() != scale_type)
        throw ValueError(op + ": a " + type_string(input.data_type()) + " input needs a " + type_string(scale_type) +
                         " scale, got " + type_string(scale.data_type()));
    require_input_sizes(op, "scale", scale, input);
    if (zero_point) require_input_sizes(op, "zero_point", *zero_point, input);
    DataType out = quantized_output_type(op, "zero_point", zero_point, output_type);
    return add_single(op, std::make_shared<QuantizeLinearDesc>(), {input, scale, zero_point}, packed_like(input, out));
}

Expression dequantize_linear(const Expression& input, const Expression& scale,
                             const std::optional<Expression>& zero_point) {
    const std::string op = "DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR";
    common_graph(op, {&input, &scale, zero_point ? &*zero_point : nullptr});
    require_types(op, "input", input,
                  {DataType::Int32, DataType::Int16, DataType::Int8, DataType::UInt32, DataType::UInt16, DataType::UInt8});
    require_types(op, "scale", scale, kHalfOrFloat);
    require_input_sizes(op, "scale", scale, input);
    if (zero_point) {
        require_input_sizes(op, "zero_point", *zero_point, input);
        if (zero_point->data_type() != input.data_type())
            throw ValueError(op + ": the zero point must have the input's type " + type_string(input.data_type()) +
                             ", got " + type_string(zero_point->data_type()));
    }
    return add_single(op, std::make_shared<DequantizeLinearDesc>(), {input, scale, zero_point},
                      packed_like(input, scale.data_type()));
}

Expression quantize(const Expression& input, const Expression& scale, const std::optional<Expression>& zero_point,
                    std::optional<DataType> output_type) {
    const std::string op = "DML_OPERATOR_QUANTIZE";
    common_graph(op, {&input, &scale, zero_point ? &*zero_point : nullptr});
    require_types(op, "input", input, kHalfOrFloat);
    require_types(op, "scale", scale, kHalfOrFloat);
    require_block_shapes(op, input, scale, zero_point);
    DataType out = quantized_output_type(op, "zero_point", zero_point, output_type);
    auto desc = std::make_shared<QuantizeDesc>();
    desc->quantization_type = zero_point ? QuantizationType::ScaleZeroPoint : QuantizationType::Scale;
    return add_single(op, desc, {input, scale, zero_point}, packed_like(input, out));
}

Expression dequantize(const Expression& input, const Expression& scale, const std::optional<Expression>& zero_point) {
    const std::string op = "DML_OPERATOR_DEQUANTIZE";
    common_graph(op, {&input, &scale, zero_point ? &*zero_point : nullptr});
    require_types(op, "input", input, kQuantizedTypes);
    require_types(op, "scale", scale, kHalfOrFloat);
    require_block_shapes(op, input, scale, zero_point);
    if (zero_point) {
        if (zero_point->data_type() != input.data_type())
            throw ValueError(op + ": the zero point must have the input's type " + type_string(input.data_type()) +
                             ", got " + type_string(zero_point->data_type()));
    }
    auto desc = std::make_shared<DequantizeDesc>();
    desc->quantization_type = zero_point ? QuantizationType::ScaleZeroPoint : QuantizationType::Scale;
    return add_single(op, desc, {input, scale, zero_point}, packed_like(input, scale.data_type()));
}

Expression constant_data(const std::shared_ptr<Graph>& graph, TensorDesc desc, std::vector<std::byte> data) {
    const std::string op = "DML_GRAPH_NODE_TYPE_CONSTANT";
    if (!desc.is_packed()) throw ValueError(op + ": constant data is packed");
    if (data.size() != desc.extent_in_bytes())
        throw ValueError(op + ": " + std::to_string(data.size()) + " bytes of data for " + desc.to_string() +
                         ", which holds " + std::to_string(desc.extent_in_bytes()));
    auto node = std::make_shared<ConstantDataDesc>();
    node->data = std::move(data);
    return require_graph(op, graph)->add_node(node, {}, {desc})[0];
}

}  // namespace dml
