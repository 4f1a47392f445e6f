// Compile's epilogue rewrites, executor-neutral (they produce DirectML operators as users could write them):
//   - an element-wise activation applied to the output of a GEMM, a convolution, an ADD, a batch normalization or a
//     mean-variance normalization, where nothing else reads that output, becomes the producer's fused activation
//     (GroupNorm then SiLU in every UNet ResNet block). The builders admit only DirectML's fusable list from users,
//     but this folds any activation the executor takes in fused position;
//   - an ADD of a GEMM without C (and nothing else reading the GEMM) and another tensor of the output's sizes
//     becomes that GEMM with the tensor as C (beta 1), taking the ADD's fused activation: a linear layer's bias,
//     the residual add of a transformer's projections; likewise an ADD of a convolution without bias and a
//     per-channel tensor (broadcast over the rest) becomes the convolution's bias. The producer then runs where
//     the ADD ran, so that the addend is computed before it.
// Each saves a pass over the tensor, and the GEMM and convolution libraries apply them in their epilogues. The
// executor is asked (`executor_takes`) about each node before it is produced.
#pragma once
#include <functional>

#include "compiled_graph.h"

namespace dml {

void fuse_epilogues(CompiledGraph& graph, const std::function<bool(const Node&)>& executor_takes);

}  // namespace dml
