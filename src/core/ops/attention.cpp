#include "attention.h"

#include <cmath>

#include "../errors.h"
#include "common.h"

namespace dml {

namespace {

// The last `rank` sizes of x, which may have up to `max_rank` dimensions as long as the leading ones are 1.
Sizes trailing_sizes(const std::string& op, const char* arg, const Expression& x, size_t rank, size_t max_rank) {
    const Sizes& s = x.sizes();
    bool ok = s.size() >= rank && s.size() <= max_rank;
    for (size_t d = 0; ok && d + rank < s.size(); ++d) ok = s[d] == 1;
    if (!ok)
        throw ValueError(op + ": " + arg + " must have " + std::to_string(rank) + " dimensions (up to " +
                         std::to_string(max_rank) + " with leading 1s), got " + sizes_to_string(s));
    return Sizes(s.end() - rank, s.end());
}

void require_sizes(const std::string& op, const char* arg, const Sizes& got, const Sizes& want) {
    if (got != want)
        throw ValueError(op + ": " + arg + " must be " + sizes_to_string(want) + ", got " + sizes_to_string(got));
}

}  // namespace

MultiheadAttentionOutputs multihead_attention(const MultiheadAttentionInputs& in, uint32_t head_count,
                                              std::optional<float> scale, float mask_filter_value,
                                              MultiheadAttentionMaskType mask_type, bool output_present_key,
                                              bool output_present_value) {
    const std::string op = "DML_OPERATOR_MULTIHEAD_ATTENTION";
    const std::optional<Expression>* all[] = {&in.query, &in.key, &in.value, &in.stacked_query_key,
                                              &in.stacked_key_value, &in.stacked_query_key_value, &in.bias, &in.mask,
                                              &in.relative_position_bias, &in.past_key, &in.past_value};
    std::shared_ptr<Graph> graph;
    std::optional<DataType> type;
    for (auto* x : all) {
        if (!*x) continue;
        if (graph && (*x)->graph != graph) throw ValueError(op + ": the operands belong to different graphs");
        graph = (*x)->graph;
        if (x == &in.mask) continue;
        if (!type) type = (*x)->data_type();
        if ((*x)->data_type() != *type)
            throw ValueError(op + ": the float tensors' element types differ (" +
                             std::string(data_type_name(*type)) + " and " +
                             std::string(data_type_name((*x)->data_type())) + ")");
    }
    // Exactly one query, key and value, whether stacked or not.
    const int queries = bool(in.query) + bool(in.stacked_query_key) + bool(in.stacked_query_key_value);
    const int keys = bool(in.key) + bool(in.stacked_query_key) + bool(in.stacked_key_value) +
                     bool(in.stacked_query_key_value);
    const int values = bool(in.value) + bool(in.stacked_key_value) + bool(in.stacked_query_key_value);
    if (queries != 1 || keys != 1 || values != 1)
        throw ValueError(op + ": needs exactly one query, key and value (query / stacked_query_key / "
                              "stacked_query_key_value, key / stacked_query_key / stacked_key_value / "
                              "stacked_query_key_value, value / stacked_key_value / stacked_query_key_value); got " +
                         std::to_string(queries) + ", " + std::to_string(keys) + " and " + std::to_string(values));
    if (type != DataType::Float32 && type != DataType::Float16)
        throw ValueError(op + ": the tensors must be FLOAT32 or FLOAT16, got " + std::string(data_type_name(*type)));
    if (head_count == 0) throw ValueError(op + ": head_count must be positive");
    const uint32_t H = head_count;

    // Query: batch B, sequence S, head size.
    uint32_t B, S, head_size;
    auto stacked = [&](const char* arg, const Expression& x, uint32_t count) {
        Sizes s = trailing_sizes(op, arg, x, 5, 5);
        if (s[2] != H || s[3] != count)
            throw ValueError(op + ": " + arg + " must be [batch, sequence, " + std::to_string(H) + " (heads), " +
                             std::to_string(count) + ", head_size], got " + sizes_to_string(s));
        return s;
    };
    auto split_heads = [&](const char* arg, uint32_t hidden) {
        if (hidden % H != 0)
            throw ValueError(op + ": " + arg + "'s hidden size " + std::to_string(hidden) +
                             " is not a multiple of head_count " + std::to_string(H));
        return hidden / H;
    };
    if (in.query) {
        Sizes q = trailing_sizes(op, "query", *in.query, 3, 5);
        B = q[0], S = q[1], head_size = split_heads("query", q[2]);
    } else {
        Sizes q = in.stacked_query_key ? stacked("stacked_query_key", *in.stacked_query_key, 2)
                                       : stacked("stacked_query_key_value", *in.stacked_query_key_value, 3);
        B = q[0], S = q[1], head_size = q[4];
    }
    const uint32_t hidden = H * head_size;
    // Key and value: sequence kv_S, value head size.
    uint32_t kv_S = S, value_head_size = head_size;
    if (in.key) {
        Sizes k = trailing_sizes(op, "key", *in.key, 3, 5);
        kv_S = k[1];
        require_sizes(op, "key", k, {B, kv_S, hidden});
    } else if (in.stacked_key_value) {
        Sizes kv = stacked("stacked_key_value", *in.stacked_key_value, 2);
        kv_S = kv[1];
        require_sizes(op, "stacked_key_value", kv, {B, kv_S, H, 2, head_size});
    }
    if (in.value) {
        Sizes v = trailing_sizes(op, "value", *in.value, 3, 5);
        value_head_size = split_heads("value", v[2]);
        require_sizes(op, "value", v, {B, kv_S, H * value_head_size});
    }
    const uint32_t value_hidden = H * value_head_size;
    if (in.bias) require_sizes(op, "bias", trailing_sizes(op, "bias", *in.bias, 1, 5), {2 * hidden + value_hidden});
    if (bool(in.past_key) != bool(in.past_value))
        throw ValueError(op + ": past_key and past_value come together");
    uint32_t past = 0;
    if (in.past_key) {
        Sizes pk = trailing_sizes(op, "past_key", *in.past_key, 4, 5);
        past = pk[2];
        require_sizes(op, "past_key", pk, {B, H, past, head_size});
        require_sizes(op, "past_value", trailing_sizes(op, "past_value", *in.past_value, 4, 5),
                      {B, H, past, value_head_size});
    }
    const uint32_t total = past + kv_S;
    if (in.relative_position_bias)
        require_sizes(op, "relative_position_bias",
                      trailing_sizes(op, "relative_position_bias", *in.relative_position_bias, 4, 5), {B, H, S, total});

    if (bool(in.mask) != (mask_type != MultiheadAttentionMaskType::None))
        throw ValueError(op + (in.mask ? ": a mask needs a mask_type other than NONE" : ": mask_type needs a mask"));
    if (in.mask) {
        require_types(op, "mask", *in.mask, {DataType::Int32});
        switch (mask_type) {
            case MultiheadAttentionMaskType::KeySequenceLength:
                require_sizes(op, "mask", trailing_sizes(op, "mask", *in.mask, 2, 5), {1, B});
                break;
            case MultiheadAttentionMaskType::KeySequenceEndStart:
                require_sizes(op, "mask", trailing_sizes(op, "mask", *in.mask, 2, 5), {2, B});
                break;
            case MultiheadAttentionMaskType::KeyQuerySequenceLengthStartEnd:
                require_sizes(op, "mask", trailing_sizes(op, "mask", *in.mask, 1, 5), {3 * B + 2});
                break;
            default:
                require_sizes(op, "mask", trailing_sizes(op, "mask", *in.mask, 4, 5), {B, H, S, total});
                break;
        }
    }

    auto desc = std::make_shared<MultiheadAttentionDesc>();
    desc->scale = scale ? *scale : 1.0f / std::sqrt(float(head_size));
    desc->mask_filter_value = mask_filter_value;
    desc->head_count = H;
    desc->mask_type = mask_type;
    desc->output_present_key = output_present_key;
    desc->output_present_value = output_present_value;
    std::vector<TensorDesc> outputs = {TensorDesc(*type, {B, S, value_hidden})};
    if (output_present_key) outputs.emplace_back(*type, Sizes{B, H, total, head_size});
    if (output_present_value) outputs.emplace_back(*type, Sizes{B, H, total, value_head_size});
    std::vector<std::optional<Expression>> inputs;
    for (auto* x : all) inputs.push_back(*x);
    auto outs = graph->add_node(desc, inputs, outputs);
    MultiheadAttentionOutputs result{outs[0], std::nullopt, std::nullopt};
    size_t next = 1;
    if (output_present_key) result.present_key = outs[next++];
    if (output_present_value) result.present_value = outs[next++];
    return result;
}

}  // namespace dml
