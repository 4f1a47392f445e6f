// Indexing: DML_OPERATOR_GATHER, GATHER_ELEMENTS, GATHER_ND1, SCATTER_ELEMENTS, SCATTER_ND and ONE_HOT.
// Index tensors are INT32, UINT32, INT64 or UINT64; negative values of the signed types count from the end of
// their dimension. DirectML leaves indices still out of range undefined; here they never touch memory: a gather
// reads 0 for them, a scatter skips them and one_hot leaves the sequence at its off value.
#pragma once
#include <vector>

#include "../graph.h"

namespace dml {

struct GatherDesc : OperatorDesc {
    uint32_t axis, index_dimensions;
    std::string type_name() const override { return "DML_OPERATOR_GATHER"; }
};

struct GatherElementsDesc : OperatorDesc {
    uint32_t axis;
    std::string type_name() const override { return "DML_OPERATOR_GATHER_ELEMENTS"; }
};

struct GatherNdDesc : OperatorDesc {
    uint32_t input_dimension_count, indices_dimension_count, batch_dimension_count;
    std::string type_name() const override { return "DML_OPERATOR_GATHER_ND1"; }
};

struct ScatterElementsDesc : OperatorDesc {
    uint32_t axis;
    std::string type_name() const override { return "DML_OPERATOR_SCATTER_ELEMENTS"; }
};

struct ScatterNdDesc : OperatorDesc {
    uint32_t input_dimension_count, indices_dimension_count;
    std::string type_name() const override { return "DML_OPERATOR_SCATTER_ND"; }
};

struct OneHotDesc : OperatorDesc {
    uint32_t axis;
    std::string type_name() const override { return "DML_OPERATOR_ONE_HOT"; }
};

// output[a..., j..., b...] = input[a..., indices[j...], b...] over the trailing `index_dimensions` of indices.
Expression gather(const Expression& input, const Expression& indices, uint32_t axis, uint32_t index_dimensions);
// output[i, j, ...] = input[.., indices[i, j, ...] on `axis`, ..]; the output has the indices' sizes.
Expression gather_elements(const Expression& input, const Expression& indices, uint32_t axis);
// Whole sub-blocks of input addressed by the index tuples in the last dimension of indices, per batch.
Expression gather_nd(const Expression& input, const Expression& indices, uint32_t input_dimension_count,
                     uint32_t indices_dimension_count, uint32_t batch_dimension_count);
// input with updates written where indices (on `axis`) place them; later updates win.
Expression scatter_elements(const Expression& input, const Expression& indices, const Expression& updates,
                            uint32_t axis);
// input with sub-blocks of updates written where the index tuples place them; later tuples win.
Expression scatter_nd(const Expression& input, const Expression& indices, const Expression& updates,
                      uint32_t input_dimension_count, uint32_t indices_dimension_count);
// indices (size 1 on `axis`) spread along `axis` to output_length: values' on value at the index, off elsewhere.
Expression one_hot(const Expression& indices, const Expression& values, uint32_t output_length, uint32_t axis);

}  // namespace dml
