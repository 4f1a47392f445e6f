// Recurrent networks: DML_OPERATOR_GRU (ONNX GRU semantics: gates z, r, h in that order).
#pragma once
#include <optional>
#include <vector>

#include "../graph.h"
#include "activation.h"

namespace dml {

enum class RecurrentNetworkDirection { Forward, Backward, Bidirectional };
// Which outputs a GRU produces (DirectMLX's GRUOutputOptions).
enum class GRUOutputOptions { Both, Sequence, Single };

// Inputs in DirectML's order: input [1, seq, batch, input_size], weight [1, dirs, 3 * hidden, input_size],
// recurrence [1, dirs, 3 * hidden, hidden], bias [1, 1, dirs, 6 * hidden] (optional), hidden_init
// [1, dirs, batch, hidden] (optional), sequence_lengths UINT32 [1, 1, 1, batch] (optional). Outputs, those asked
// for in this order: the sequence [seq, dirs, batch, hidden] and the last state [1, dirs, batch, hidden].
struct GRUDesc : OperatorDesc {
    std::vector<FusedActivation> activations;  // f then g, per direction (forward first)
    RecurrentNetworkDirection direction = RecurrentNetworkDirection::Forward;
    bool linear_before_reset = false;
    bool output_sequence = true, output_single = true;
    std::string type_name() const override { return "DML_OPERATOR_GRU"; }
};

// Returns {sequence, single}, each present when asked for.
std::pair<std::optional<Expression>, std::optional<Expression>> gru(
    const Expression& input, const Expression& weight, const Expression& recurrence,
    const std::optional<Expression>& bias, const std::optional<Expression>& hidden_init,
    const std::optional<Expression>& sequence_lengths, std::vector<FusedActivation> activations,
    RecurrentNetworkDirection direction, bool linear_before_reset, GRUOutputOptions output_options);

}  // namespace dml
