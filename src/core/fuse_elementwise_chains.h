// Compile's chain rewrite: a maximal run of element-wise nodes (unary functions, activations, binary arithmetic;
// FLOAT32 or FLOAT16), each reading the one before it and every intermediate read only by the next node (whole,
// element for element: no other reader, not a graph output), all of one output's sizes and type, becomes one
// ElementwiseChainDesc node (ops/elementwise_chain.h) where the last one was. x * sigmoid(x) written as two nodes,
// y + y * 0.5, mul then add then an activation: one pass over memory instead of one per node, each intermediate
// neither written nor read back. Runs past the chain's bounds are cut into several chains. The executor is asked
// (`executor_takes`) about each chain node before it replaces anything: one that does not take the internal
// operator (directml) keeps the nodes as they were.
#pragma once
#include <functional>

#include "compiled_graph.h"

namespace dml {

void fuse_elementwise_chains(CompiledGraph& graph, const std::function<bool(const Node&)>& executor_takes);

}  // namespace dml
