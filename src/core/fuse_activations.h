// Compile's one graph rewrite: an element-wise activation applied to a mean-variance normalization's output, where
// nothing else reads that output, becomes the normalization's fused activation. It saves a pass over the tensor
// (GroupNorm then SiLU in every UNet ResNet block). The builders admit only DirectML's fusable list from users, but
// this pass folds any activation function the executor takes in fused position: it asks `executor_takes` about
// each fused node before producing it.
#pragma once
#include <functional>

#include "compiled_graph.h"

namespace dml {

void fuse_activations(CompiledGraph& graph, const std::function<bool(const Node&)>& executor_takes);

}  // namespace dml
