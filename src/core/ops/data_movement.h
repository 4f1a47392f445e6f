// Data movement: DML_OPERATOR_SLICE1 (negative strides too) and SLICE_GRAD, JOIN, SPLIT, PADDING1, TILE,
// SPACE_TO_DEPTH1 / DEPTH_TO_SPACE1 and REVERSE_SUBSEQUENCES. None of them converts elements, so every data type
// moves through them.
#pragma once
#include <vector>

#include "../graph.h"

namespace dml {

struct SliceDesc : OperatorDesc {
    std::vector<uint32_t> offsets, sizes;
    std::vector<int32_t> strides;
    std::string type_name() const override { return "DML_OPERATOR_SLICE1"; }
};

// The window fields mean what they mean for SLICE1; the output is the zero-filled forward input.
struct SliceGradDesc : SliceDesc {
    std::string type_name() const override { return "DML_OPERATOR_SLICE_GRAD"; }
};

struct JoinDesc : OperatorDesc {
    uint32_t axis;
    std::string type_name() const override { return "DML_OPERATOR_JOIN"; }
};

struct SplitDesc : OperatorDesc {
    uint32_t axis;
    std::string type_name() const override { return "DML_OPERATOR_SPLIT"; }
};

// Numbered as DML_PADDING_MODE.
enum class PaddingMode { Constant, Edge, Reflection, Symmetric, Wrap };

struct PaddingDesc : OperatorDesc {
    PaddingMode mode;
    double value;  // PADDING1 carries it in the tensor's type; the builder checked it is exact there
    std::vector<uint32_t> start, end;
    std::string type_name() const override { return "DML_OPERATOR_PADDING1"; }
};

struct TileDesc : OperatorDesc {
    std::vector<uint32_t> repeats;
    std::string type_name() const override { return "DML_OPERATOR_TILE"; }
};

// Numbered as DML_DEPTH_SPACE_ORDER.
enum class DepthSpaceOrder { DepthColumnRow, ColumnRowDepth };

struct DepthSpaceDesc : OperatorDesc {
    bool to_depth;  // SPACE_TO_DEPTH1, else DEPTH_TO_SPACE1
    uint32_t block_size;
    DepthSpaceOrder order;
    std::string type_name() const override {
        return to_depth ? "DML_OPERATOR_SPACE_TO_DEPTH1" : "DML_OPERATOR_DEPTH_TO_SPACE1";
    }
};

struct ReverseSubsequencesDesc : OperatorDesc {
    uint32_t axis;
    std::string type_name() const override { return "DML_OPERATOR_REVERSE_SUBSEQUENCES"; }
};

Expression slice(const Expression& x, std::vector<uint32_t> offsets, std::vector<uint32_t> sizes,
                 std::vector<int32_t> strides);
// The gradient of slice: input_gradient's elements placed where slice read them in a zero tensor of
// output_gradient_sizes.
Expression slice_grad(const Expression& input_gradient, const Sizes& output_gradient_sizes,
                      std::vector<uint32_t> offsets, std::vector<uint32_t> sizes, std::vector<int32_t> strides);
Expression join(const std::vector<Expression>& inputs, uint32_t axis);
std::vector<Expression> split(const Expression& x, uint32_t axis, const std::vector<uint32_t>& output_sizes);
Expression padding(const Expression& x, PaddingMode mode, double value, std::vector<uint32_t> start,
                   std::vector<uint32_t> end);
Expression tile(const Expression& x, std::vector<uint32_t> repeats);
Expression space_to_depth(const Expression& x, uint32_t block_size, DepthSpaceOrder order);
Expression depth_to_space(const Expression& x, uint32_t block_size, DepthSpaceOrder order);
Expression reverse_subsequences(const Expression& x, const Expression& sequence_lengths, uint32_t axis);

}  // namespace dml
