#include "elementwise_chain.h"

#include <algorithm>

namespace dml {

namespace {

// The chain input that is `op`, added where it is not yet one; nullopt where that passes kMaxChainInputs.
std::optional<uint8_t> chain_input(const Operand& op, std::vector<Operand>& inputs) {
    auto same = [&](const Operand& o) { return o.value == op.value && o.desc == op.desc; };
    auto it = std::find_if(inputs.begin(), inputs.end(), same);
    if (it != inputs.end()) return uint8_t(it - inputs.begin());
    if (inputs.size() == kMaxChainInputs) return std::nullopt;
    inputs.push_back(op);
    return uint8_t(inputs.size() - 1);
}

}  // namespace

bool append_chain_steps(const Node& node, unsigned running, std::vector<ChainStep>& steps,
                        std::vector<Operand>& inputs) {
    if (node.outputs.size() != 1 || node.inputs.empty()) return false;
    const DataType type = node.outputs[0].data_type;
    if (type != DataType::Float32 && type != DataType::Float16) return false;
    for (const auto& in : node.inputs)
        if (!in || in->desc.data_type != type) return false;
    std::vector<Operand> grown = inputs;  // committed once the node fits
    if (running == 0) {  // the chain's first node: its input 0 starts it
        if (!grown.empty()) return false;
        grown.push_back(*node.inputs[0]);
        running = 1;
    }
    std::vector<ChainStep> added;
    if (const auto* u = dynamic_cast<const UnaryDesc*>(node.desc.get())) {
        if (running != 1 || u->function == UnaryFunction::BitNot || u->function == UnaryFunction::LogicalNot)
            return false;
        ChainStep s{.kind = ChainStep::Kind::Unary, .unary = u->function, .parameter = u->parameter};
        if (u->scale_bias) s.affine = true, s.scale = u->scale_bias->scale, s.bias = u->scale_bias->bias;
        added.push_back(s);
    } else if (const auto* a = dynamic_cast<const ActivationDesc*>(node.desc.get())) {
        if (running != 1) return false;
        added.push_back({.kind = ChainStep::Kind::Activation, .activation = a->activation});
    } else if (const auto* b = dynamic_cast<const BinaryDesc*>(node.desc.get())) {
        if (int(b->function) >= int(BinaryFunction::LogicalAnd)) return false;
        ChainStep s{.kind = ChainStep::Kind::Binary, .binary = b->function, .operand = kChainRunning};
        if (running != 3) {
            s.running_second = running == 2;
            std::optional<uint8_t> k = chain_input(*node.inputs[s.running_second ? 0 : 1], grown);
            if (!k) return false;
            s.operand = *k;
        }
        added.push_back(s);
        if (!b->fused.is_none()) added.push_back({.kind = ChainStep::Kind::Activation, .activation = b->fused});
    } else {
        return false;
    }
    if (steps.size() + added.size() > kMaxChainSteps) return false;
    steps.insert(steps.end(), added.begin(), added.end());
    inputs = std::move(grown);
    return true;
}

Node elementwise_chain(std::vector<ChainStep> steps, std::vector<Operand> inputs, TensorDesc output) {
    auto desc = std::make_shared<ElementwiseChainDesc>();
    desc->steps = std::move(steps);
    std::vector<std::optional<Operand>> operands(inputs.begin(), inputs.end());
    return Node{std::move(desc), std::move(operands), {std::move(output)}};
}

}  // namespace dml
