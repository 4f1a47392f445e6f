// Activations: DML_ACTIVATION_*_OPERATOR_DESC, PARAMETERIZED_RELU and the SOFTMAX1 family.
#include "../core/errors.h"
#include "lowering.h"

namespace dml::directml {

void register_activation_lowerings(LoweringTable& t) {
    add_lowering<ActivationDesc>(t, [](LoweringContext& c, const ActivationDesc& d) {
        DML_OPERATOR_DESC op = activation_desc(c.store, d.activation, c.input(0), c.output(0));
        return Lowered{op, {}};
    });
    add_lowering<ParameterizedReluDesc>(t, [](LoweringContext& c, const ParameterizedReluDesc&) {
        return c.lowered(DML_OPERATOR_ACTIVATION_PARAMETERIZED_RELU,
                         DML_ACTIVATION_PARAMETERIZED_RELU_OPERATOR_DESC{c.input(0), c.input(1), c.output(0)});
    });
    add_lowering<SoftmaxDesc>(t, [](LoweringContext& c, const SoftmaxDesc& d) {
        DML_OPERATOR_TYPE type = d.function == SoftmaxFunction::Softmax      ? DML_OPERATOR_ACTIVATION_SOFTMAX1
                                 : d.function == SoftmaxFunction::LogSoftmax ? DML_OPERATOR_ACTIVATION_LOG_SOFTMAX1
                                                                             : DML_OPERATOR_ACTIVATION_HARDMAX1;
        return c.lowered(type, DML_ACTIVATION_SOFTMAX1_OPERATOR_DESC{c.input(0), c.output(0), UINT(d.axes.size()),
                                                                     c.store.array(d.axes)});
    });
}

}  // namespace dml::directml
