// Compile's one graph rewrite: an element-wise activation applied to a mean-variance normalization's output, where
// nothing else reads that output, becomes the normalization's fused activation. It saves a pass over the tensor
// (GroupNorm then SiLU in every UNet ResNet block). Any activation function folds here, as both executors apply
// every one, while the builders admit only DirectML's fusable list from users.
#pragma once
#include "../executor/device.h"

namespace dml {

void fuse_activations(CompiledGraph& graph);

}  // namespace dml
