// multihead_attention and its mask type.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include "../core/ops/attention.h"
#include "module.h"

namespace dml::binding {

namespace py {  // the Python result types, named as the core's result structs are
DML_OUTPUTS(MultiheadAttentionOutputs);
}  // namespace py

void bind_attention(nb::module_& m) {
    using MT = MultiheadAttentionMaskType;
    nb::enum_<MT>(m, "MultiheadAttentionMaskType", "DML_MULTIHEAD_ATTENTION_MASK_TYPE.")
        .value("NONE", MT::None)
        .value("KEY_SEQUENCE_LENGTH", MT::KeySequenceLength)
        .value("KEY_SEQUENCE_END_START", MT::KeySequenceEndStart)
        .value("KEY_QUERY_SEQUENCE_LENGTH_START_END", MT::KeyQuerySequenceLengthStartEnd)
        .value("BOOLEAN", MT::Boolean);
    Outputs<py::MultiheadAttentionOutputs> attention_outputs(m, "output present_key present_value",
                                                         {"present_key", "present_value"});

    using E = std::optional<Expression>;
    def(m, "multihead_attention",
          [attention_outputs](E query, E key, E value, E stacked_query_key, E stacked_key_value,
                              E stacked_query_key_value, E bias, E mask, E relative_position_bias, E past_key,
                              E past_value, uint32_t head_count, std::optional<float> scale, float mask_filter_value,
                              MT mask_type, bool output_present_key, bool output_present_value) {
              MultiheadAttentionInputs in{query, key, value, stacked_query_key, stacked_key_value,
                                          stacked_query_key_value, bias, mask, relative_position_bias, past_key,
                                          past_value};
              auto r = multihead_attention(in, head_count, scale, mask_filter_value, mask_type, output_present_key,
                                           output_present_value);
              return attention_outputs(r.output, or_none(r.present_key), or_none(r.present_value));
          },
          "query"_a = nb::none(), "key"_a = nb::none(), "value"_a = nb::none(), "stacked_query_key"_a = nb::none(),
          "stacked_key_value"_a = nb::none(), "stacked_query_key_value"_a = nb::none(), "bias"_a = nb::none(),
          "mask"_a = nb::none(), "relative_position_bias"_a = nb::none(), "past_key"_a = nb::none(),
          "past_value"_a = nb::none(), nb::kw_only(), "head_count"_a, "scale"_a = nb::none(),
          "mask_filter_value"_a = -10000.0f, "mask_type"_a = MT::None, "output_present_key"_a = false,
          "output_present_value"_a = false,
          "softmax(scale * Q K^T + relative_position_bias + mask) V per head (DML_OPERATOR_MULTIHEAD_ATTENTION); "
          "scale defaults to 1 / sqrt(head_size). Returns (output, present_key, present_value), None for a present "
          "tensor not asked for.");
}

}  // namespace dml::binding
