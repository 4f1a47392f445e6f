// A pointwise (1x1, stride 1, unpadded) float convolution as a GEMM of our own: out[m, p] = act(sum over k of
// filter[m, k] x input[k, p] + bias[m]), the filter packed once at initialize into panels of `rows` output channels
// ([panel][k][rows], as the direct kernel's filter), a tile's positions read as `columns` of each input channel's
// row where they lie or from a copy in panels ([panel][k][columns]: the caller says which), the bias and a relu
// applied in the registers before the one store. OpenBLAS's sgemm, which AVX2's pointwise layers otherwise ran,
// packs the filter again at every call and left bias and activation to a second pass over the output. Compiled for
// AVX2 (pointwise_gemm_avx2.cpp), reached through DirectKernel::pointwise_gemm.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dml::cpu {

struct PointwiseGemm {
    const float* filter;   // [ceil(channels / rows)][depth][rows], the last panel's extra channels zero
    const float* input;    // [depth] rows of `positions` floats, `input_row` apart
    int64_t input_row;
    // workspace: [ceil(positions / columns)][depth][columns], the last panel's extra zero; in place, the partial
    // last panel alone
    float* packed;
    float* out;            // [channels] rows of `positions` floats, `out_row` apart
    int64_t out_row;
    const float* bias;     // [channels]
    int64_t channels, depth, positions;
    bool relu;             // else the stored sums are sum + bias (the caller applies any other activation)
    // Whole position panels read from `input`, only a partial last one packed; and the work items numbered
    // position block major (the threads split the positions), else channel block major (they split the channels,
    // each reading the whole image, copied into panels).
    bool in_place;
    // The work items of the products: blocks of `block_panels[0]` channel panels x `block_panels[1]` position panels.
    int64_t block_panels[2];
};

struct PointwiseGemmKernel {
    int64_t rows, columns;  // a register tile: output channels x positions
    // Copies the image's position panels [begin, end) into `packed`.
    void (*pack)(const PointwiseGemm&, size_t begin, size_t end);
    // Runs work items [begin, end); every panel they read from `packed` is packed.
    void (*run)(const PointwiseGemm&, size_t begin, size_t end);

    // Panels of `rows` channels and of `columns` positions.
    int64_t channel_panels(int64_t channels) const { return (channels + rows - 1) / rows; }
    int64_t position_panels(int64_t positions) const { return (positions + columns - 1) / columns; }
};

}  // namespace dml::cpu
