// The element-wise chain: an internal operator, neither DirectML's nor bound in Python. Compile makes it from a run
// of element-wise nodes (fuse_elementwise_chains.h) for an executor that takes it; the directml executor does not
// (DirectML has no such operator, and its graph compiler fuses on its own).
//
// Input 0 starts a running value, in the compute type (float16 computes as float); each step replaces it with a
// unary function, an activation, or a binary function of it and one input (any of them, broadcast as the element-
// wise operators read theirs); the output stores the last value, rounded once. FLOAT32 and FLOAT16 only.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "../graph.h"
#include "activation.h"
#include "elementwise.h"

namespace dml {

// Bounds that keep a chain's parameters small enough to pass by value to a GPU kernel.
constexpr size_t kMaxChainSteps = 8;
constexpr size_t kMaxChainInputs = 4;
// A binary step's operand that is the running value itself (x * x).
constexpr uint8_t kChainRunning = 0xff;

struct ChainStep {
    enum class Kind : uint8_t { Unary, Binary, Activation } kind = Kind::Unary;
    // Unary: unary(running * scale + bias, parameter) as UnaryDesc computes it, the scale/bias only where `affine`.
    UnaryFunction unary = UnaryFunction::Identity;
    bool affine = false;
    float scale = 1.0f, bias = 0.0f, parameter = 0.0f;
    // Binary: binary(running, input[operand]), or binary(input[operand], running) where `running_second`.
    BinaryFunction binary = BinaryFunction::Add;
    uint8_t operand = 0;
    bool running_second = false;
    // Activation: as ActivationDesc computes it.
    FusedActivation activation;
};

struct ElementwiseChainDesc : OperatorDesc {
    std::vector<ChainStep> steps;  // 1 to kMaxChainSteps
    std::string type_name() const override { return "internal ELEMENT_WISE_CHAIN"; }
};

// Grows a chain by one element-wise node: its steps read the running value from the node's inputs whose bit is set
// in `running` (the first node's: none, as input 0 starts the chain), and its other input from `inputs`, where it is
// added unless already there. False, with nothing changed, where the node is not a step a chain takes (another
// operator, function or type) or the bounds would be passed.
bool append_chain_steps(const Node& node, unsigned running, std::vector<ChainStep>& steps,
                        std::vector<Operand>& inputs);

// The chain node: `steps` over `inputs` (input 0 starts it), producing `output`.
Node elementwise_chain(std::vector<ChainStep> steps, std::vector<Operand> inputs, TensorDesc output);

}  // namespace dml
