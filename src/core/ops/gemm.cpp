#include "gemm.h"

#include "../errors.h"
#include "common.h"
#include "generation.h"

namespace dml {

namespace {

const std::initializer_list<DataType> kIntegerOperandTypes = {DataType::Int8, DataType::UInt8};

// A [B, C, M, K] x B [B, C, K, N] (after the transposes): the output sizes [B, C, M, N].
Sizes product_sizes(const std::string& op, const Expression& a, const Expression& b, bool trans_a, bool trans_b) {
    require_rank(op, "a", a, 4, 4);
    require_rank(op, "b", b, 4, 4);
    const Sizes& as = a.sizes();
    const Sizes& bs = b.sizes();
    uint32_t m = trans_a ? as[3] : as[2], k = trans_a ? as[2] : as[3];
    uint32_t kb = trans_b ? bs[3] : bs[2], n = trans_b ? bs[2] : bs[3];
    if (k != kb)
        throw ValueError(op + ": inner dimensions differ: a " + sizes_to_string(as) + " and b " + sizes_to_string(bs) +
                         " give K = " + std::to_string(k) + " and " + std::to_string(kb));
    if (as[0] != bs[0] || as[1] != bs[1])
        throw ValueError(op + ": batch and channel sizes differ: a " + sizes_to_string(as) + ", b " +
                         sizes_to_string(bs) + " (broadcast explicitly with dml.broadcast)");
    return {as[0], as[1], m, n};
}

// A zero point of the operand's own type, per tensor or per entry along `full`.
void require_zero_point(const std::string& op, const char* arg, const std::optional<Expression>& zp,
                        const Expression& operand, const Sizes& full) {
    if (!zp) return;
    require_parameter(op, arg, *zp, {operand.data_type()}, full);
}

}  // namespace

Expression gemm(const Expression& a, const Expression& b, const std::optional<Expression>& c, MatrixTransform trans_a,
                MatrixTransform trans_b, float alpha, float beta, FusedActivation fused) {
    const std::string op = "DML_OPERATOR_GEMM";
    common_graph(op, {&a, &b, c ? &*c : nullptr});
    require_types(op, "a", a, kFloatTypes);
    if (a.data_type() != b.data_type())
        throw ValueError(op + ": the element types differ: a is " + std::string(data_type_name(a.data_type())) +
                         ", b is " + std::string(data_type_name(b.data_type())));
    TensorDesc out(a.data_type(), product_sizes(op, a, b, trans_a == MatrixTransform::Transpose,
                                                trans_b == MatrixTransform::Transpose));
    if (c) {
        if (c->data_type() != a.data_type())
            throw ValueError(op + ": c has type " + std::string(data_type_name(c->data_type())) + ", a has " +
                             std::string(data_type_name(a.data_type())));
        if (c->sizes() != out.sizes)
            throw ValueError(op + ": c has sizes " + sizes_to_string(c->sizes()) + " but the output is " +
                             sizes_to_string(out.sizes) + " (broadcast c explicitly with dml.broadcast)");
    }
    check_fused_activation(op, fused, a.data_type());
    auto desc = std::make_shared<GemmDesc>();
    desc->trans_a = trans_a;
    desc->trans_b = trans_b;
    desc->alpha = alpha;
    desc->beta = beta;
    desc->fused = fused;
    return add_single(op, desc, {a, b, c}, out);
}

Expression matrix_multiply_integer(const Expression& a, const Expression& b,
                                   const std::optional<Expression>& a_zero_point,
                                   const std::optional<Expression>& b_zero_point) {
    const std::string op = "DML_OPERATOR_MATRIX_MULTIPLY_INTEGER";
    common_graph(op, {&a, &b, a_zero_point ? &*a_zero_point : nullptr, b_zero_point ? &*b_zero_point : nullptr});
    require_types(op, "a", a, kIntegerOperandTypes);
    require_types(op, "b", b, kIntegerOperandTypes);
    Sizes out = product_sizes(op, a, b, false, false);
    require_zero_point(op, "a_zero_point", a_zero_point, a, {1, 1, out[2], 1});
    require_zero_point(op, "b_zero_point", b_zero_point, b, {1, 1, 1, out[3]});
    return add_single(op, std::make_shared<MatrixMultiplyIntegerDesc>(), {a, a_zero_point, b, b_zero_point},
                      TensorDesc(DataType::Int32, out));
}

Expression quantized_linear_matrix_multiply(const Expression& a, const Expression& a_scale, const Expression& b,
                                            const Expression& b_scale, const Expression& output_scale,
                                            const std::optional<Expression>& a_zero_point,
                                            const std::optional<Expression>& b_zero_point,
                                            const std::optional<Expression>& output_zero_point,
                                            std::optional<DataType> output_type) {
    const std::string op = "DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY";
    common_graph(op, {&a, &a_scale, &b, &b_scale, &output_scale, a_zero_point ? &*a_zero_point : nullptr,
                      b_zero_point ? &*b_zero_point : nullptr, output_zero_point ? &*output_zero_point : nullptr});
    require_types(op, "a", a, kIntegerOperandTypes);
    require_types(op, "b", b, kIntegerOperandTypes);
    Sizes out = product_sizes(op, a, b, false, false);
    const Sizes per_row = {1, 1, out[2], 1}, per_column = {1, 1, 1, out[3]};
    require_parameter(op, "a_scale", a_scale, {DataType::Float32}, per_row);
    require_parameter(op, "b_scale", b_scale, {DataType::Float32}, per_column);
    require_parameter(op, "output_scale", output_scale, {DataType::Float32}, per_row);
    require_zero_point(op, "a_zero_point", a_zero_point, a, per_row);
    require_zero_point(op, "b_zero_point", b_zero_point, b, per_column);
    DataType type = quantized_output_type(op, "output_zero_point", output_zero_point, output_type);
    if (output_zero_point) require_parameter(op, "output_zero_point", *output_zero_point, {type}, per_row);
    return add_single(op, std::make_shared<QuantizedLinearMatrixMultiplyDesc>(),
                      {a, a_scale, a_zero_point, b, b_scale, b_zero_point, output_scale, output_zero_point},
                      TensorDesc(type, out));
}

}  // namespace dml
