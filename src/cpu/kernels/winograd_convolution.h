// Winograd F(2x2, 3x3), F(4x4, 3x3) and F(2x2, 5x5) for float 3x3 and 5x5 convolutions of stride 1 and dilation 1 (one
// group): each 2x2 (4x4, 2x2) block of outputs from a 4x4 (6x6, 6x6) block of input by 16 (36, 36) products a channel
// pair instead of the direct kernel's 36 (144, 100), 2.25x (4x, 2.78x) fewer multiply-adds. The image is cut into
// blocks of tiles small enough that a block's transformed input and its products stay in the second-level cache: the
// input transform (B^T d B) of a block, then its 16 or 36 products as as many pointwise convolutions on the direct
// kernel's register tiles (the filter transformed, G g G^T, in their layout), then the output transform (A^T m A) with
// the bias and the fused activation, stored into the output's rows.
#pragma once
#include <cstdint>

#include "../../core/ops/activation.h"
#include "../../executor/conv_geometry.h"
#include "../thread_pool.h"
#include "direct_convolution.h"

namespace dml::cpu {

struct WinogradPlan {
    // The tiles past its own whose inputs a tile of `out` outputs and a `taps`-wide filter reads, a tile step (`out`
    // inputs) apart.
    static constexpr int64_t reach(int64_t out, int64_t taps) { return (taps + out - 2) / out; }
    const DirectTile* tile = nullptr;    // the products' register tile
    int64_t out = 0;                     // a tile's outputs a side: 2, or 4 for 3x3 filters
    int64_t taps = 0;                    // the filter's side: 3 or 5
    int64_t tiles_x = 0, tiles_y = 0;    // tiles of an image
    int64_t row = 0;                     // tiles a row as the blocks count them: tiles_x and reach(out, taps) dropped
    int64_t block = 0;                   // the most tiles a block (whole position blocks of `tile`)
    int64_t blocks = 0;                  // blocks an image, of about equal counts of tiles (whole groups of 16)
    int64_t padded_out = 0;              // output channels in whole blocks of the tile
    int64_t parts = 0;                   // blocks in flight at once, each with its own workspace

    WinogradPlan() = default;
    // Empty unless the convolution is one Winograd takes (2-D, float32, 3x3 or 5x5, stride and dilation 1, one
    // group, a direct kernel for the products) and pays for: `outputs` (convolution.cpp's rule) gives the tile's
    // outputs a side, 0 where the direct kernel runs.
    WinogradPlan(const ConvGeometry& g, bool float32, int64_t (*outputs)(const ConvGeometry&));
    explicit operator bool() const { return tile != nullptr; }
    int64_t side() const { return out + taps - 1; }  // a tile's inputs a side
    int64_t points() const { return side() * side(); }

    uint64_t filter_elements(const ConvGeometry& g) const { return uint64_t(points() * padded_out * g.in_channels); }
    // The workspace: the transformed filter where bound at dispatch, its taps gathered, and each part's block.
    uint64_t workspace_elements(const ConvGeometry& g) const;
};

// The transformed filter, in the plan's layout, from taps [out_channels][in_channels][taps x taps] (in the order
// the input is read: flipped where the convolution flips).
void winograd_filter(const float* taps, const ConvGeometry& g, const WinogradPlan& p, float* dst);

// The images of x (strided as g says) into y (packed [batch][out_channels][rows][columns]): filter the plan's
// layout, bias one value an output channel, workspace the plan's workspace_elements (past the filter's part).
void run_winograd(const ConvGeometry& g, const WinogradPlan& p, const FusedActivation& fused, const float* x,
                  const float* filter, const float* bias, float* y, float* workspace, ThreadPool& pool);

}  // namespace dml::cpu
