// Attention: DML_OPERATOR_MULTIHEAD_ATTENTION.
#pragma once
#include <optional>

#include "../graph.h"

namespace dml {

// How the mask tensor (INT32) marks the key positions whose scores get MaskFilterValue added.
enum class MultiheadAttentionMaskType {
    None,
    KeySequenceLength,               // [1, batch]: keys at or past the length are masked
    KeySequenceEndStart,             // [2, batch]: keys outside [start (row 1), end (row 0)) are masked
    KeyQuerySequenceLengthStartEnd,  // [3 * batch + 2]: the first batch entries are key lengths, as above
    Boolean,                         // [batch, heads, sequence, total sequence]: 0 masks, anything else keeps
};

// Inputs in DirectML's order: query, key, value, stacked_query_key, stacked_key_value, stacked_query_key_value,
// bias, mask, relative_position_bias, past_key, past_value. Outputs, those asked for in this order: the output
// [batch, sequence, heads * value_head_size], present_key [batch, heads, past + kv sequence, head_size] and
// present_value (likewise with value_head_size); the present tensors hold the (biased) keys and values attended to.
struct MultiheadAttentionDesc : OperatorDesc {
    float scale = 1.0f;
    float mask_filter_value = -10000.0f;
    uint32_t head_count = 1;
    MultiheadAttentionMaskType mask_type = MultiheadAttentionMaskType::None;
    bool output_present_key = false, output_present_value = false;
    std::string type_name() const override { return "DML_OPERATOR_MULTIHEAD_ATTENTION"; }
};

struct MultiheadAttentionInputs {
    std::optional<Expression> query, key, value, stacked_query_key, stacked_key_value, stacked_query_key_value, bias,
        mask, relative_position_bias, past_key, past_value;
};

struct MultiheadAttentionOutputs {
    Expression output;
    std::optional<Expression> present_key, present_value;
};

// `scale` defaults to 1 / sqrt(head_size).
MultiheadAttentionOutputs multihead_attention(const MultiheadAttentionInputs& inputs, uint32_t head_count,
                                              std::optional<float> scale, float mask_filter_value,
                                              MultiheadAttentionMaskType mask_type, bool output_present_key,
                                              bool output_present_value);

}  // namespace dml
