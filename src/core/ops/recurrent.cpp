#include "recurrent.h"

#include "../errors.h"
#include "common.h"

namespace dml {

std::pair<std::optional<Expression>, std::optional<Expression>> gru(
    const Expression& input, const Expression& weight, const Expression& recurrence,
    const std::optional<Expression>& bias, const std::optional<Expression>& hidden_init,
    const std::optional<Expression>& sequence_lengths, std::vector<FusedActivation> activations,
    RecurrentNetworkDirection direction, bool linear_before_reset, GRUOutputOptions output_options) {
    const std::string op = "DML_OPERATOR_GRU";
    auto graph = common_graph(op, {&input, &weight, &recurrence, bias ? &*bias : nullptr,
                                   hidden_init ? &*hidden_init : nullptr,
                                   sequence_lengths ? &*sequence_lengths : nullptr});
    require_types(op, "input", input, {DataType::Float32, DataType::Float16});
    require_rank(op, "input", input, 4, 4);
    const DataType type = input.data_type();
    const uint32_t dirs = direction == RecurrentNetworkDirection::Bidirectional ? 2 : 1;
    const uint32_t seq = input.sizes()[1], batch = input.sizes()[2], input_size = input.sizes()[3];
    if (input.sizes()[0] != 1)
        throw ValueError(op + ": input must be [1, seq_length, batch_size, input_size], got " +
                         sizes_to_string(input.sizes()));
    require_rank(op, "recurrence", recurrence, 4, 4);
    const uint32_t hidden = recurrence.sizes()[3];
    auto check = [&](const char* arg, const Expression& x, const Sizes& want) {
        if (x.data_type() != type)
            throw ValueError(op + ": " + arg + " has type " + std::string(data_type_name(x.data_type())) +
                             ", the input " + std::string(data_type_name(type)));
        if (x.sizes() != want)
            throw ValueError(op + ": " + arg + " must be " + sizes_to_string(want) + ", got " + sizes_to_string(x.sizes()));
    };
    check("weight", weight, {1, dirs, 3 * hidden, input_size});
    check("recurrence", recurrence, {1, dirs, 3 * hidden, hidden});
    if (bias) check("bias", *bias, {1, 1, dirs, 6 * hidden});
    if (hidden_init) check("hidden_init", *hidden_init, {1, dirs, batch, hidden});
    if (sequence_lengths) {
        require_types(op, "sequence_lengths", *sequence_lengths, {DataType::UInt32});
        if (sequence_lengths->sizes() != Sizes{1, 1, 1, batch})
            throw ValueError(op + ": sequence_lengths must be [1, 1, 1, " + std::to_string(batch) + "], got " +
                             sizes_to_string(sequence_lengths->sizes()));
    }
    if (activations.size() != 2 * dirs)
        throw ValueError(op + ": needs " + std::to_string(2 * dirs) + " activations (f and g per direction), got " +
                         std::to_string(activations.size()));
    for (const FusedActivation& f : activations)
        if (f.is_none()) throw ValueError(op + ": an activation must not be FusedActivation.none()");

    auto desc = std::make_shared<GRUDesc>();
    desc->activations = std::move(activations);
    desc->direction = direction;
    desc->linear_before_reset = linear_before_reset;
    desc->output_sequence = output_options != GRUOutputOptions::Single;
    desc->output_single = output_options != GRUOutputOptions::Sequence;
    std::vector<TensorDesc> outputs;
    if (desc->output_sequence) outputs.emplace_back(type, Sizes{seq, dirs, batch, hidden});
    if (desc->output_single) outputs.emplace_back(type, Sizes{1, dirs, batch, hidden});
    auto outs = graph->add_node(desc, {input, weight, recurrence, bias, hidden_init, sequence_lengths}, outputs);
    std::pair<std::optional<Expression>, std::optional<Expression>> result;
    size_t next = 0;
    if (desc->output_sequence) result.first = outs[next++];
    if (desc->output_single) result.second = outs[next++];
    return result;
}

}  // namespace dml
