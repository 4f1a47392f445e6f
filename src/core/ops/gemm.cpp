#include "gemm.h"

#include "../errors.h"
#include "common.h"

namespace dml {

Expression gemm(const Expression& a, const Expression& b, const std::optional<Expression>& c, MatrixTransform trans_a,
                MatrixTransform trans_b, float alpha, float beta, FusedActivation fused) {
    const std::string op = "DML_OPERATOR_GEMM";
    common_graph(op, {&a, &b, c ? &*c : nullptr});
    require_types(op, "a", a, kFloatTypes);
    require_rank(op, "a", a, 4, 4);
    require_rank(op, "b", b, 4, 4);
    if (a.data_type() != b.data_type())
        throw ValueError(op + ": the element types differ: a is " + std::string(data_type_name(a.data_type())) +
                         ", b is " + std::string(data_type_name(b.data_type())));
    const Sizes& as = a.sizes();
    const Sizes& bs = b.sizes();
    uint32_t m = trans_a == MatrixTransform::Transpose ? as[3] : as[2];
    uint32_t k = trans_a == MatrixTransform::Transpose ? as[2] : as[3];
    uint32_t kb = trans_b == MatrixTransform::Transpose ? bs[3] : bs[2];
    uint32_t n = trans_b == MatrixTransform::Transpose ? bs[2] : bs[3];
    if (k != kb)
        throw ValueError(op + ": inner dimensions differ: a " + sizes_to_string(as) + " and b " +
                         sizes_to_string(bs) + " give K = " + std::to_string(k) + " and " + std::to_string(kb));
    if (as[0] != bs[0] || as[1] != bs[1])
        throw ValueError(op + ": batch and channel sizes differ: a " + sizes_to_string(as) + ", b " +
                         sizes_to_string(bs) + " (broadcast explicitly with dml.broadcast)");
    TensorDesc out(a.data_type(), {as[0], as[1], m, n});
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
    std::optional<Expression> cc = c;
    return add_single(op, desc, {a, b, cc}, out);
}

}  // namespace dml
