// The direct convolution kernel: a float convolution read straight from a zero-padded image (split by phases of
// its stride by the caller, so that it reads as one of stride 1), or from the image where it lies with the taps
// that read its padding masked (DirectConvolution::tap_masks), with no im2col and no GEMM packing, a register
// tile of output channels x output positions accumulated in vector registers (what oneDNN's and ONNX Runtime's
// direct kernels do). Output positions are counted over the padded image's row width (in place, the image's), so
// a block of them runs across rows and each tap of the filter is one fixed offset into the plane; the columns past
// the output's width are computed and dropped by the caller's epilogue. Compiled once per instruction set
// (direct_convolution_avx512.cpp, _avx2.cpp) and picked at run time from what the processor supports; this header
// is what the rest of the executor sees.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "pointwise_gemm.h"

namespace dml::cpu {

struct DirectConvolution {
    const float* input;  // padded channels [channels][plane], read up to `block_positions` floats past the last one
    int64_t plane;       // elements of a padded channel plane
    // packed [ceil(out_channels / block_channels)][channels][taps][block_channels]; depthwise, [channels][taps]
    const float* filter;
    const int64_t* tap_offsets;  // each filter tap's offset in a padded plane
    int64_t channels, taps, out_channels;
    int64_t first;      // the padded-plane position of acc's first
    int64_t positions;  // positions to compute from `first`
    float* acc;  // [out_channels rounded up to whole blocks][acc_plane], written for positions in whole blocks
    int64_t acc_plane;  // at least `positions` rounded up to a multiple of block_positions
    // The input is an image read where it lies (a pointwise convolution, one tap at offset 0): the last vector of
    // a plane's positions is loaded masked, reading nothing past `positions` (the memory after the last plane is
    // not the image's).
    bool bounded = false;
    // Where set (DirectKernel::tap_masks), the input is an image read where it lies, its padding not stored: vector
    // v of positions (from v * width) loads tap t's lanes in tap_masks[v * taps + t] alone, zero in the others (the
    // lanes whose tap reads the padding, lie past `positions` or are padded columns), so it reads nothing else.
    const uint16_t* tap_masks = nullptr;
    // Where set (not depthwise), each work item's finished sums go to finish(finish_context, tile, m0, p) instead of
    // acc, while in the cache: tile [block_channels][block_positions] holds output channels m0.. at positions p..
    // (the caller adds the bias, applies the activation, drops the padded columns and stores the output). acc then
    // holds only the partial sums of the channel chunks before the last.
    void (*finish)(const void* context, const float* tile, int64_t m0, int64_t p) = nullptr;
    const void* finish_context = nullptr;
    // Where `out` is set (a float output, no activation or relu, a kernel with DirectKernel::store_lanes), the last
    // chunk stores its sums from the registers instead of through finish: output channel m's vector v of positions
    // (from v * width) is act(sum + bias[m]), its lanes in lane_masks[v] stored packed at out + m * out_plane +
    // lane_offsets[v], which drops the padded columns.
    float* out = nullptr;
    int64_t out_plane = 0;
    const float* bias = nullptr;
    bool relu = false;
    const uint32_t* lane_masks = nullptr;
    const int64_t* lane_offsets = nullptr;
};

// One register tile: output channels x positions a work item, and the loop that runs it over work items [begin,
// end) of channel blocks x position blocks, channel block major. Depthwise (output channel c reads input channel
// c alone; `channels` is 1), a tile is one channel.
struct DirectTile {
    int64_t block_channels, block_positions;
    void (*run)(const DirectConvolution&, size_t begin, size_t end);
    // output channels in the vectors' lanes, the input broadcast (direct_convolution_body.h); it has no masked
    // tail, so it reads past the last position and never runs in place
    bool lanes;

    // `channels` output channels rounded up to whole blocks of the tile.
    int64_t padded(int64_t channels) const { return (channels + block_channels - 1) / block_channels * block_channels; }
};

struct DirectKernel {
    // The most output channels a tile first: a layer runs the first of those that pad its output channels least
    // (a 9-channel layer runs 3-channel tiles, not 16 channels' work).
    std::span<const DirectTile> tiles;
    DirectTile depthwise;
    // Whether it takes pointwise convolutions, which otherwise run as `pointwise_gemm` where set, else OpenBLAS's
    // sgemm. With AVX2, on a 2-core AMD EPYC without AVX-512, a 256-channel 1x1 convolution of 28x28 ran at
    // 0.64-0.66x torch-cpu in the direct kernel (reading the image where it lies) and 1.06-1.08x through sgemm,
    // squeezenet 17.9-18.8 against 16.8 ms (bench_cpu.py --threads 1 --cpu-time, 2026-12-04); with AVX-512 the
    // direct kernel measured 1.16x torch-cpu (bench/README.md).
    bool pointwise;
    // The vector width of the kernel's position tiles where they store their sums from the registers
    // (DirectConvolution::out): AVX-512, whose compressing store drops a vector's padded columns; 0 for AVX2.
    int64_t store_lanes;
    // Whether its position tiles take DirectConvolution::tap_masks (AVX-512's 16-lane masks).
    bool tap_masks;
    // One output row of a float 3x3 depthwise convolution of column stride s = 1 or 2 and column dilation 1, read
    // where the input lies (such layers run by rows, not in this kernel's bands: convolution.cpp), at [s - 1], or
    // null where the instruction set has none: dst[o] = sum over filter rows r and columns kx of w[3 r + kx] *
    // rows[r][s o + kx - pad], a null row (the padding) and columns outside [0, in_width) adding nothing.
    using DepthwiseRows = void (*)(const float* const* rows, const float* w, float* dst, int64_t out_width,
                                   int64_t in_width, int64_t pad);
    DepthwiseRows depthwise_3x3_rows[2];
    // The pointwise GEMM (pointwise_gemm.h), or null: AVX2's (AVX-512 runs pointwise layers in this kernel).
    const PointwiseGemmKernel* pointwise_gemm;

    // The first of the `tiles` that `takes` admits that pads `channels` output channels least; null where it admits
    // none.
    template <class Takes>
    const DirectTile* least_padding(int64_t channels, Takes&& takes) const {
        const DirectTile* best = nullptr;
        for (const DirectTile& t : tiles)
            if (takes(t) && (!best || t.padded(channels) < best->padded(channels))) best = &t;
        return best;
    }
    // The first of `tiles` (lanes tiles only where `lanes`) that pads `channels` output channels least.
    const DirectTile& tile_for(int64_t channels, bool lanes) const {
        return *least_padding(channels, [&](const DirectTile& t) { return lanes || !t.lanes; });
    }
};

// The fastest direct kernel this processor runs, or null (no AVX2 and FMA, or not an x86-64 build).
const DirectKernel* direct_kernel();

}  // namespace dml::cpu
