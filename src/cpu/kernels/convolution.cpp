// Convolution. Each node's kernel settles its geometry (executor/conv_geometry.h, shared with CUDA), algorithm and
// workspace at compile, and packs a filter that is a weight once, at initialize. Forward convolutions: 2-D float32 3x3
// and 5x5 ones of stride and dilation 1 and one group, with enough channels and outputs, run Winograd F(2x2, 3x3),
// F(4x4, 3x3) or F(2x2, 5x5) (winograd_convolution.h, its products on the direct kernel's tiles; winograd_outputs says
// where). The other 2-D float ones run the direct kernel (direct_convolution.h) where the processor has AVX2 or
// AVX-512, by bands of output rows (1x1 ones on float planes read where they lie, or for many output channels copied to
// aligned planes; strided ones split by phases of the stride, unless they are depthwise or their taps skip a phase). Of
// the others, depthwise ones (a filter per channel) run a loop over output rows, 1x1 ones one GEMM over the stored
// image, and the rest im2col + BLAS GEMM over tiles of output positions, so that the column buffer stays under
// kColumnBytes whatever the image size (im2col of a whole 720x720 image took gigabytes). Backward (transposed)
// convolutions: GEMM + col2im per image. The integer convolutions run the same paths in double, exactly (every product
// and partial sum of 8-bit operands is an integer below 2^53).
#include "../../core/ops/convolution.h"

#include <algorithm>
#include <cstring>

#include "../../executor/conv_geometry.h"
#include "../../executor/scalar_math.h"
#include "../../executor/type_visits.h"
#include "../../platform/platform.h"
#include "blas_gemm.h"
#include "direct_convolution.h"
#include "isa.h"
#include "kernel.h"
#include "quantization.h"
#include "vector_math.h"
#include "winograd_convolution.h"

namespace dml::cpu {

namespace {

// The column buffers of all threads together: large enough that each tile's GEMM has hundreds of columns, small
// enough to stay in the caches.
constexpr uint64_t kColumnBytes = uint64_t(8) << 20;

// Floats of one band of output rows of the direct kernel, its padded input rows (a group's input channels) and
// its accumulators (a group's output channels): small enough to stay in the second-level cache while every
// block of output channels reads the band: half of it, from 64K floats (what the AMD EPYCs of the earlier sessions
// ran, with 0.5 and 1 MiB) to 256K. A band is a stage of the layer's job, at whose end the threads meet, so larger
// bands cost two threads less: on a 2-core Xeon with 2 MiB, two threads, 256K floats against 64K (one process,
// interleaved, median) ran superres in 26.3 against 31.2 ms, squeezenet 5.26 against 5.41 ms, candy 402 against
// 422 ms; one thread alike (bench/README.md).
int64_t direct_band_floats() {
    static const int64_t floats =
        std::clamp<int64_t>(int64_t(platform::second_level_cache_bytes() / 2 / sizeof(float)), int64_t(64) << 10,
                            int64_t(256) << 10);
    return floats;
}

// A direct convolution of fewer products (multiply-adds) runs on one thread: waking a worker and meeting it cost
// more than the work saves. On a 2-core Xeon, two threads, mnist (whose layers have 0.16M and 0.63M products, 4-11
// us) ran in 0.045 and 0.076 ms against 0.059 and 0.090 ms (two runs, median, one process, interleaved); squeezenet,
// whose smallest layer has 1.6M, ran alike with 2M as the limit (bench/README.md).
constexpr int64_t kAloneProducts = int64_t(1) << 20;

// The pointwise GEMM's work items (pointwise_gemm.h): blocks of up to 16 panels of output channels (96 on AVX2: with
// a depth slice of 256 input channels, 96 KiB of filter, which stays in the second-level cache while the block's
// position panels pass) x up to 8 panels of positions (128 on AVX2).
constexpr int64_t kPointwiseBlockPanels[2] = {16, 8};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Floats of a filter in blocks of `mr` output channels (pack_filter_blocks).
uint64_t filter_block_elements(const ConvGeometry& g, int64_t mr) {
    return uint64_t(g.groups * ceil_div(g.group_out, mr) * mr) * g.group_in * g.kernel_size();
}

// A pointwise convolution of this many output channels (products an input element) or more copies its image to
// planes that start on a cache line, rather than reading it where it lies, so that its vectors of positions load
// whole lines: on a 2-core Xeon, one thread, squeezenet's 512 -> 1000 of 13x13 ran 7 % faster in the network, the
// copy included, and its 64 -> 256 slower (bench/README.md).
constexpr int64_t kAlignedPointwiseChannels = 512;

// Winograd F(2x2, 3x3) (winograd_convolution.h) runs the 3x3 convolutions it takes where they have this many input
// channels and output tiles (2x2 outputs) or more, the direct kernel the others. On a 2-core Xeon with AVX-512, one
// thread, a one-node graph each (median of 20, direct / Winograd / ONNX Runtime's node, ms): 64 -> 64 of 224x224
// 19.2 / 13.4 / 20.6, 64 -> 32 of 224x224 10.3 / 8.5 / 11.9, 32 -> 9 of 224x224 2.45 / 2.15 / 4.04, 128 -> 128 of
// 180x180 47.5 / 31.8 / 49.1, squeezenet's 16 -> 64 of 55x55 0.305 / 0.285 / 0.344, 32 -> 128 of 27x27 0.283 /
// 0.244 / 0.312, 48 -> 192 of 13x13 (49 tiles) 0.159 / 0.146 / 0.172, 64 -> 256 of 13x13 0.300 / 0.256 / 0.305; it
// lost with fewer input channels (12 -> 64 of 55x55 0.234 / 0.246, 8 -> 64 0.167 / 0.203: the transforms weigh more
// against fewer products) and on a 7x7 image (16 tiles: 64 -> 64 0.034 / 0.044). On the AVX2 kernels
// (DIRECTML_CPU_ISA=avx2) the larger layers ran in 0.57-0.67x the direct kernel's time (bench/README.md).
constexpr int64_t kWinogradChannels = 16, kWinogradTiles = 49;

// F(2x2, 5x5) needs as many output channels too, and 512 channel pairs (input times output channels): a tile's
// products grow with the pairs, its transforms with the channels. One thread, as above (direct / Winograd / PyTorch's
// oneDNN, ms): 64 -> 64 of 56x56 3.33 / 1.90 / 3.38, 32 -> 32 of 112x112 3.66 / 2.34 / 3.98, 128 -> 128 of 28x28
// 3.62 / 1.90 / 3.32, 16 -> 32 of 56x56 0.434 / 0.338 / 0.528, 32 -> 16 of 56x56 0.512 / 0.443 / 0.597, 16 -> 64 of
// 14x14 (49 tiles) 0.067 / 0.060 / 0.130; it lost on 16 -> 16 of 28x28 (0.075 / 0.082), 64 -> 8 of 56x56 (0.575 /
// 0.634), 32 -> 9 (0.345 / 0.386), 32 -> 32 of 9x9 (25 tiles: 0.044 / 0.051) and with 4 input channels (4 -> 32 of
// 56x56 0.143 / 0.217). On the AVX2 kernels the layers above ran in 0.56-0.79x the direct kernel's time.
constexpr int64_t kWinograd5x5ChannelPairs = 512;

// 3x3 ones run F(4x4, 3x3) instead of F(2x2, 3x3) where both output sides are 20 or more and there are at most
// 16384 channel pairs, or the sides are 40 or more: its 4x4 tiles pad a small image more (a 13x13 output to 16x16)
// and the products' whole position blocks of the register tile (48 on AVX-512) pad fewer tiles more, which weighs
// more where a block's products and filter fill the second-level cache. One thread, AVX-512, a one-node graph each
// (median of 9-15, direct / F(2x2) / F(4x4), ms): squeezenet's 16 -> 64 of 55x55 0.424 / 0.400 / 0.307, 32 -> 128
// of 27x27 0.387 / 0.327 / 0.261, 64 -> 64 of 56x56 1.71 / 1.14 / 0.88, of 224x224 25.2 / 18.9 / 16.0, of 20x20
// 0.216 / 0.172 / 0.158, 128 -> 128 of 28x28 1.54 / 0.97 / 0.79, 16 -> 64 of 20x20 0.065 / 0.061 / 0.050, 160 ->
// 160 of 40x40 8.36 / 5.03 / 4.01, 256 -> 256 of 40x40 12.9 / 7.69 / 6.23; F(4x4) lost on 13x13 (48 -> 192 0.190 /
// 0.242 for F(2x2) / F(4x4), 64 -> 256 0.341 / 0.424), 64 -> 64 of 14x14 (0.101 / 0.125) and 28x28 with more
// channel pairs (160 -> 160 1.54 / 1.61, 128 -> 256 1.98 / 2.10, 256 -> 256 4.27 / 4.71). On the AVX2 kernels it
// ran in 0.67-0.83x F(2x2)'s time from 20x20 up (64 -> 64 of 20x20 0.277 / 0.225) and 1.07x on 14x14
// (bench/README.md). Its worst error, 1.0-3.4e-6 of the largest output on these layers (4.1-5.0e-6 with 256 input
// channels), is 2-5x the direct kernel's (F(2x2)'s: 0.4-0.5x).
constexpr int64_t kWinograd4x4Side = 20, kWinograd4x4ChannelPairs = 16384, kWinograd4x4WideSide = 40;

int64_t winograd_outputs(const ConvGeometry& g) {
    const int64_t tiles = (g.out[1] + 1) / 2 * ((g.out[2] + 1) / 2), pairs = g.in_channels * g.out_channels;
    if (g.in_channels < kWinogradChannels || tiles < kWinogradTiles) return 0;
    if (g.kernel[1] == 5)
        return g.out_channels >= kWinogradChannels && pairs >= kWinograd5x5ChannelPairs ? 2 : 0;
    const int64_t side = std::min(g.out[1], g.out[2]);
    return side >= kWinograd4x4Side && (pairs <= kWinograd4x4ChannelPairs || side >= kWinograd4x4WideSide) ? 4 : 2;
}

}  // namespace

#if defined(DML_X86_DISPATCH)
extern const DirectKernel kDirectAvx512, kDirectAvx2;
#endif

const DirectKernel* direct_kernel() {
#if defined(DML_X86_DISPATCH)
    switch (cpu_isa()) {
        case Isa::Avx512: return &kDirectAvx512;
        case Isa::Avx2: return &kDirectAvx2;
        case Isa::Generic: return nullptr;
    }
#endif
    return nullptr;
}

namespace {

// The instruction set's row kernel for a depthwise convolution computed in float (DirectKernel::depthwise_3x3_rows),
// or null: 3x3 filters of column stride 1 or 2 and column dilation 1. Such layers run by output rows (`depthwise`),
// reading the input where it lies; on AVX2 those of stride 1 ran 1.1-1.8x faster so than in the direct kernel's bands,
// which copy the input padded first (bench/README.md, twenty-seventh session).
DirectKernel::DepthwiseRows depthwise_rows_kernel(const ConvGeometry& g, bool float_compute) {
    const DirectKernel* k = direct_kernel();
    if (!k || !float_compute || !g.depthwise() || g.kernel[0] != 1 || g.kernel[1] != 3 || g.kernel[2] != 3 ||
        g.dilation[2] != 1 || (g.stride[2] != 1 && g.stride[2] != 2))
        return nullptr;
    return k->depthwise_3x3_rows[g.stride[2] - 1];
}

// A convolution the direct kernel runs: its filter taps and the bands of output rows, each band reading the
// zero-padded input rows it needs (its own rows and the filter's reach below them), so that neither the padded
// input nor the accumulators grow with the image. A depthwise one runs as one band of all channels at a time
// (each its own group), the others group by group. A pointwise one (1x1, stride 1, no padding) on float rows
// that lie packed, where the kernel takes those (DirectKernel::pointwise), reads the image where it lies (a copy in
// aligned planes from kAlignedPointwiseChannels), as one band: its tile is a GEMM's with the filter packed once. So
// does one of stride 1 on float rows that lie packed where the kernel takes tap masks (AVX-512): its bands read the
// image's rows with the taps that fall in the padding masked, and copy nothing.
// A strided one reads its band split by phases of the stride: phase (a, b) of a channel holds the padded input's
// rows a, a + sy, ... and of those the columns b, b + sx, ..., so that each tap reads one phase at a fixed offset
// from the output position, as a stride-1 convolution does (a 3x3 filter of stride 2 reads 4 phases, by 4, 2, 2
// and 1 of its taps).
struct DirectPlan {
    const DirectKernel* kernel = nullptr;
    const DirectTile* tile = nullptr;
    bool depthwise = false;
    bool in_place = false;               // the input's planes are read where they lie, unpadded
    int64_t row = 0, plane = 0;          // a phase's row width, and a channel's plane of all its phases in a band
    int64_t phase_rows = 0, phase_plane = 0;  // rows of a phase in a band, and its floats (a zero tail after them)
    int64_t block_channels = 0;          // output channels a filter block (1 depthwise)
    int64_t channel_blocks = 0;          // of a group's output channels
    int64_t band_channels = 0;           // output channels a band computes
    int64_t band_rows = 0, acc_plane = 0;  // output rows a band, and its accumulator plane (whole blocks)
    std::vector<int64_t> tap_offsets;
    // Position tiles that store their sums from the registers (DirectKernel::store_lanes): each vector's lanes that
    // hold output columns, and the output position of its first (DirectConvolution::lane_masks, lane_offsets).
    std::vector<uint32_t> lane_masks;
    std::vector<int64_t> lane_offsets;
    // In place, not pointwise: the taps' lanes that read the image, band by band (DirectConvolution::tap_masks),
    // band b's from tap_masks + band_masks[b]; the bands whose rows all read inside the image share one table.
    std::vector<uint16_t> tap_masks;
    std::vector<int64_t> band_masks;

    DirectPlan() = default;
    DirectPlan(const ConvGeometry& g, DataType type) {
        const DirectKernel* k = direct_kernel();
        if (!k) return;
        // a strided depthwise one keeps its loop over rows: gathering its phases cost more than its 9 taps a
        // position (0.8 -> 2.5 ms for 96 channels of 112x112, stride 2)
        const bool strided = g.stride[1] != 1 || g.stride[2] != 1;
        // in place, a band's positions run over rows of the input's width, which must hold the output's
        const bool packed =
            type == DataType::Float32 && g.x_stride[4] == 1 && g.x_stride[3] == g.in[2] && !g.depthwise();
        in_place = packed && (g.pointwise() ? g.group_out < kAlignedPointwiseChannels
                                            : k->tap_masks && !strided && g.out[2] <= g.in[2]);
        const bool eligible = g.forward && (!g.pointwise() || (packed && k->pointwise)) &&
                              !(strided && g.depthwise()) && !depthwise_rows_kernel(g, type != DataType::Float64) &&
                              type != DataType::Float64 && g.in[0] == 1 &&
                              g.kernel[0] == 1 && g.out[0] == 1 && every_phase_read(g, 1) && every_phase_read(g, 2);
        if (!eligible) return;
        kernel = k;
        depthwise = g.depthwise();
        const int64_t sy = g.stride[1], sx = g.stride[2];
        // A lanes tile only where it measured faster (AVX2 on a 2-core EPYC, one thread, against the 4x3 tile):
        // 64 -> 64 channels 3x3 at 224x224 62 -> 52 ms, at 56x56 3.6 -> 3.2 ms, 128 -> 128 at 28x28 3.8 -> 3.3 ms;
        // it lost on 64 -> 32 at 224x224 (38 -> 44 ms), on 3 -> 64 of stride 2 (0.9 -> 2.6 ms) and on layers of
        // fewer than 512 channel-taps. It reads past its last position, so never in place.
        const bool lanes = !in_place && g.group_out % 64 == 0 && g.group_in * g.kernel[1] * g.kernel[2] >= 512 &&
                           g.out[1] * g.out[2] >= 784;
        tile = depthwise ? &k->depthwise : &k->tile_for(g.group_out, lanes);
        if (in_place && !g.pointwise()) in_place = few_masked_products(g, *tile);
        // In place, a row is the input's. Otherwise phase b's row j holds padded column sx * j + b: zeros before
        // the input's columns, the input's, zeros after. A row is long enough for the input's columns and for the
        // columns the last outputs read past them, which run on into the next row's leading zeros: those serve both
        // (13 + 1 columns for a 3x3 convolution of stride 1 on a 13-wide image, not 13 + 2).
        row = in_place ? g.in[2] : g.out[2];
        for (int64_t kx = 0; kx < g.kernel[2] && !in_place; ++kx) {
            const int64_t b = kx * g.dilation[2] % sx, last = g.out[2] - 1 + kx * g.dilation[2] / sx;
            row = std::max({row, leading_zeros(g, b), input_end(g, b), last - leading_zeros(g, b) + 1});
        }
        block_channels = tile->block_channels;
        channel_blocks = (g.group_out + block_channels - 1) / block_channels;
        band_channels = depthwise ? g.out_channels : channel_blocks * block_channels;
        const int64_t reach = (g.kernel[1] - 1) * g.dilation[1] / sy;  // a phase's rows a band reads past its own
        // a depthwise band counts its accumulators alone: halving its rows for its input measured slower (each
        // band pads the filter's reach again)
        const int64_t band_input = depthwise ? 0 : g.group_in * sy * sx;
        band_rows = g.pointwise() ? g.out[1]
                             : std::clamp<int64_t>(direct_band_floats() / ((band_channels + band_input) * row),
                                                   std::min<int64_t>(2 * reach, g.out[1]), g.out[1]);
        phase_rows = band_rows + reach;
        // the last row's reads past the input's edge run into the tail, as the other rows' run into the next's
        // a whole number of cache lines, so that every channel's plane starts on one (the workspace's planes do)
        phase_plane = (phase_rows * row + leading_zeros(g, 0) + 15) / 16 * 16;
        plane = in_place ? g.x_stride[1] : sy * sx * phase_plane;
        acc_plane = (band_rows * row + tile->block_positions - 1) / tile->block_positions * tile->block_positions;
        for (int64_t y = 0; y < g.kernel[1]; ++y)
            for (int64_t x = 0; x < g.kernel[2]; ++x) {
                const int64_t ty = y * g.dilation[1], tx = x * g.dilation[2];
                tap_offsets.push_back(in_place ? (ty - g.pad[1]) * row + tx - g.pad[2]
                                               : (ty % sy * sx + tx % sx) * phase_plane + ty / sy * row + tx / sx);
            }
        if (const int64_t lanes = k->store_lanes; lanes && !depthwise && !tile->lanes) {
            for (int64_t v = 0; v < acc_plane / lanes; ++v) {
                uint32_t mask = 0;
                int64_t offset = 0;
                for (int64_t l = lanes - 1; l >= 0; --l)
                    if (const int64_t q = v * lanes + l; q % row < g.out[2]) {
                        mask |= 1u << l;
                        offset = q / row * g.out[2] + q % row;
                    }
                lane_masks.push_back(mask);
                lane_offsets.push_back(offset);
            }
        }
        if (in_place && !g.pointwise()) plan_tap_masks(g);
    }
    explicit operator bool() const { return kernel != nullptr; }

    // Whether reading in place pays: the blocks of positions (over the input's rows) that meet an edge of a row (a
    // lane whose taps read the padding, or a padded column) load their vectors masked, which on the 2-core Xeon ran
    // 20 % slower than whole loads (a C++ loop of the 8 x 3 tile: 138-167 against 174-220 GFLOPS), while the band
    // copy it saves costs the same for every input element, whatever the layer's products an element: in place
    // where the masked blocks' share of the first 64 rows times the products an input element (output channels in
    // whole tiles x taps) is at most 128 (bench/README.md, eighteenth session).
    static bool few_masked_products(const ConvGeometry& g, const DirectTile& tile) {
        const int64_t width = g.in[2], left = g.pad[2];
        const int64_t right = width - ((g.kernel[2] - 1) * g.dilation[2] - g.pad[2]);  // the first column read past
        int64_t blocks = 0, edges = 0;
        for (int64_t p = 0; p < 64 * width; p += tile.block_positions, ++blocks)
            for (int64_t q = p; q < p + tile.block_positions; ++q)
                if (const int64_t x = q % width; x < left || x >= std::min(right, g.out[2])) {
                    ++edges;
                    break;
                }
        const int64_t channels = (g.group_out + tile.block_channels - 1) / tile.block_channels * tile.block_channels;
        return edges * channels * g.kernel_size() <= 128 * blocks;
    }

    // tap_masks and band_masks: a lane reads through tap (y, x) where it holds an output column, within the band's
    // positions, and its tap falls inside the image.
    void plan_tap_masks(const ConvGeometry& g) {
        constexpr int64_t lanes = 16;  // DirectKernel::tap_masks
        int64_t shared = -1;
        for (int64_t r0 = 0; r0 < g.out[1]; r0 += band_rows) {
            const int64_t rows = std::min(band_rows, g.out[1] - r0), positions = (rows - 1) * row + g.out[2];
            const bool inside = rows == band_rows && r0 >= g.pad[1] &&
                                r0 + rows - 1 + (g.kernel[1] - 1) * g.dilation[1] - g.pad[1] < g.in[1];
            if (inside && shared >= 0) {
                band_masks.push_back(shared);
                continue;
            }
            band_masks.push_back(int64_t(tap_masks.size()));
            if (inside) shared = band_masks.back();
            for (int64_t v = 0; v < acc_plane / lanes; ++v)
                for (int64_t y = 0; y < g.kernel[1]; ++y)
                    for (int64_t x = 0; x < g.kernel[2]; ++x) {
                        uint32_t mask = 0;
                        for (int64_t l = 0; l < lanes; ++l) {
                            const int64_t q = v * lanes + l, iy = r0 + q / row + y * g.dilation[1] - g.pad[1];
                            const int64_t ix = q % row + x * g.dilation[2] - g.pad[2];
                            if (q < positions && q % row < g.out[2] && iy >= 0 && iy < g.in[1] && ix >= 0 &&
                                ix < g.in[2])
                                mask |= 1u << l;
                        }
                        tap_masks.push_back(uint16_t(mask));
                    }
        }
    }
    uint64_t filter_elements(const ConvGeometry& g) const { return filter_block_elements(g, block_channels); }
    // the last blocks read past the last plane
    uint64_t input_elements(const ConvGeometry& g) const {
        return in_place ? 0 : uint64_t(g.in_channels * plane + tile->block_positions);
    }
    uint64_t acc_elements() const { return uint64_t(band_channels * acc_plane); }

    // Whether the taps of dimension d (1: rows, 2: columns) read every phase of its stride: a 1x1 filter of
    // stride 2 would read a quarter of the phases gathered, and runs im2col instead.
    static bool every_phase_read(const ConvGeometry& g, int d) {
        std::vector<bool> read(g.stride[d], false);
        for (int64_t k = 0; k < g.kernel[d]; ++k) read[k * g.dilation[d] % g.stride[d]] = true;
        return std::find(read.begin(), read.end(), false) == read.end();
    }
    // Phase b's first column that holds the input (the padding's columns before it), and the end of its columns.
    static int64_t leading_zeros(const ConvGeometry& g, int64_t b) {
        return std::max<int64_t>(0, (g.pad[2] - b + g.stride[2] - 1) / g.stride[2]);
    }
    static int64_t input_end(const ConvGeometry& g, int64_t b) {
        return std::max<int64_t>(0, (g.pad[2] + g.in[2] - b + g.stride[2] - 1) / g.stride[2]);
    }
};

// The pointwise GEMM that runs this convolution (pointwise_gemm.h), or null: forward float 1x1 ones of stride 1 with
// no padding that neither Winograd nor the direct kernel runs, where the instruction set has one, on images of a
// panel's positions or more (fewer leave most of a tile's lanes idle, and run OpenBLAS's sgemm).
const PointwiseGemmKernel* pointwise_gemm_for(const ConvGeometry& g, DataType type, const DirectPlan& direct,
                                              const WinogradPlan& winograd) {
    const DirectKernel* k = direct_kernel();
    if (!k || !k->pointwise_gemm || !g.forward || !g.pointwise() || type != DataType::Float32 || direct || winograd)
        return nullptr;
    return g.out_spatial() >= k->pointwise_gemm->columns ? k->pointwise_gemm : nullptr;
}

// The pointwise GEMM splits the larger operand between the threads: the filter's channel blocks where it has more
// floats, the image's position blocks otherwise. Split by positions, each thread reads its own positions' rows where
// they lie (in place: only a partial last panel packed); split by channels, every thread reads the whole image,
// copied into panels once. On the 2-core EPYC, two threads, against the image packed either way: squeezenet's 1x1
// layers split by positions 1.0-1.3x, its last layer (split by channels) 0.8x in place (bench/README.md).
bool pointwise_in_place(const ConvGeometry& g) { return g.group_out < g.out_spatial(); }

// Where each scratch array lives in a convolution's workspace, in elements of the compute type.
struct ConvWorkspace {
    uint64_t filter = 0, input = 0, col = 0, acc = 0, total = 0;  // offsets, and the whole size
    uint64_t col_elements = 0;

    // `pack_input`: the image is gathered (a strided view, or float16 widened); `accumulator`: the output's type
    // is not the compute type, so GEMMs accumulate apart.
    ConvWorkspace(const ConvGeometry& g, uint64_t filter_elements, uint64_t element_size, bool pack_input,
                  bool accumulator, const DirectPlan& direct = {}, const WinogradPlan& winograd = {},
                  const PointwiseGemmKernel* pointwise = nullptr) {
        if (winograd) {
            total = winograd.workspace_elements(g);
            return;
        }
        if (pointwise) {  // the filter in blocks, the gathered image, one group's image panels
            input = (filter_block_elements(g, pointwise->rows) + 15) / 16 * 16;
            col = input + (pack_input ? (uint64_t(g.in_channels) * g.in_spatial() + 15) / 16 * 16 : 0);
            const int64_t panels = pointwise_in_place(g) ? 1 : pointwise->position_panels(g.out_spatial());
            total = acc = col + uint64_t(panels * pointwise->columns) * g.group_in;
            return;
        }
        if (direct) {  // the filter in the direct layout, the padded image, one band's accumulators
            input = (direct.filter_elements(g) + 15) / 16 * 16;  // the planes from a cache line
            col = input + direct.input_elements(g);
            total = acc = col + direct.acc_elements();
            return;
        }
        const uint64_t K = g.kernel_size();
        if (!g.forward)
            col_elements = uint64_t(g.group_out) * K * g.in_spatial();
        else if (!g.pointwise() && !g.depthwise())  // at least one column of one tile
            col_elements = std::max(kColumnBytes / element_size, uint64_t(g.group_in) * K);
        input = filter_elements;
        col = input + (pack_input ? uint64_t(g.in_channels) * g.in_spatial() : 0);
        acc = col + col_elements;
        total = acc + (accumulator ? uint64_t(g.out_channels) * g.out_spatial() : 0);
    }
};

// Whether image n of view `d` lies packed at d's n-th image offset (every stride but the batch's is packed).
bool image_packed(const TensorDesc& d) {
    const Strides s = d.effective_strides(), p = packed_strides(d.sizes);
    return std::equal(s.begin() + 1, s.end(), p.begin() + 1);
}

// Whether each channel's plane of view `d` lies packed (its channels and images at any distance).
bool planes_packed(const TensorDesc& d) {
    const Strides s = d.effective_strides(), p = packed_strides(d.sizes);
    return std::equal(s.begin() + 2, s.end(), p.begin() + 2);
}

// Image n of the strided input as packed [C, spatial] compute-type values f(value, channel).
template <class T, class C, class F>
void gather_image(const T* src, const ConvGeometry& g, uint32_t n, C* dst, F f, ThreadPool& pool) {
    const uint64_t I = g.in_spatial();
    pool.parallel_for(g.in_channels, 1, [&](size_t b, size_t e) {
        for (size_t c = b; c < e; ++c) {
            const T* plane = src + int64_t(n) * g.x_stride[0] + int64_t(c) * g.x_stride[1];
            C* out = dst + c * I;
            for (int64_t z = 0; z < g.in[0]; ++z)
                for (int64_t y = 0; y < g.in[1]; ++y)
                    for (int64_t x = 0; x < g.in[2]; ++x)
                        *out++ = f(plane[z * g.x_stride[2] + y * g.x_stride[3] + x * g.x_stride[4]], uint32_t(c));
        }
    });
}

// The filter packed as [rows = filter dimension 0, cols = everything else] of f(value, row), flipped spatially in
// convolution mode.
// `place(row, col, tap)` gives another layout: the destination index of each element.
template <class T, class C, class F>
void pack_filter(const T* src, const ConvGeometry& g, C* dst, F f) {
    const int64_t cols = g.forward ? g.group_in : g.group_out, K = g.kernel_size();
    pack_filter(src, g, dst, f, [&](int64_t a, int64_t b, int64_t k) { return (a * cols + b) * K + k; });
}

template <class T, class C, class F, class Place>
void pack_filter(const T* src, const ConvGeometry& g, C* dst, F f, Place place) {
    const int64_t rows = g.forward ? g.out_channels : g.in_channels, cols = g.forward ? g.group_in : g.group_out;
    for (int64_t a = 0; a < rows; ++a)
        for (int64_t b = 0; b < cols; ++b) {
            int64_t k = 0;
            for (int64_t z = 0; z < g.kernel[0]; ++z)
                for (int64_t y = 0; y < g.kernel[1]; ++y)
                    for (int64_t x = 0; x < g.kernel[2]; ++x)
                        dst[place(a, b, k++)] = f(src[a * g.w_stride[0] + b * g.w_stride[1] + g.tap(0, z) * g.w_stride[2] +
                                                      g.tap(1, y) * g.w_stride[3] + g.tap(2, x) * g.w_stride[4]],
                                                  uint32_t(a));
        }
}

// The filter in blocks of `mr` output channels, the direct kernel's and the pointwise GEMM's layout: per group,
// [channel block][input channel][tap][mr], the last block padded with zero filters (filter_block_elements).
template <class T>
void pack_filter_blocks(const T* src, const ConvGeometry& g, int64_t mr, float* dst) {
    const int64_t K = g.kernel_size(), blocks = ceil_div(g.group_out, mr);
    std::fill(dst, dst + filter_block_elements(g, mr), 0.0f);
    pack_filter(src, g, dst, [](T v, uint32_t) { return float(compute_t<T>(v)); }, [&](int64_t m, int64_t c, int64_t k) {
        const int64_t group = m / g.group_out, local = m % g.group_out;
        return (((group * blocks + local / mr) * g.group_in + c) * K + k) * mr + local % mr;
    });
}

// dst[i] = the float of src[i * stride] for i in [0, n), the stride a constant S where not 0, so that the loads
// vectorize (a stride of 2, a stride-2 convolution's phase, is two loads and a permutation).
template <int64_t S, class T>
DML_VECTOR_CLONES void widen_strided(float* dst, const T* src, int64_t n, int64_t stride) {
    for (int64_t i = 0; i < n; ++i) dst[i] = float(compute_t<T>(src[i * (S ? S : stride)]));
}

// The padded input rows of a band of output rows from r0 (its rows, then the filter's reach) of image n of the
// strided input, into the direct kernel's band planes [in_channels][phase][phase_plane]: items [begin, end) of
// in_channels x phases (a stride-2 layer of 3 channels is 12 items, not 3, for the threads to share evenly).
template <class T>
void pad_band(const T* src, const ConvGeometry& g, const DirectPlan& d, uint32_t n, int64_t r0, float* dst,
              size_t begin, size_t end) {
    const int64_t sy = g.stride[1], sx = g.stride[2], xs = g.x_stride[4];
    for (size_t item = begin; item < end; ++item) {
        const int64_t c = int64_t(item) / (sy * sx), a = int64_t(item) % (sy * sx) / sx, b = int64_t(item) % sx;
        const T* image = src + int64_t(n) * g.x_stride[0] + c * g.x_stride[1];
        float* phase = dst + c * d.plane + (a * sx + b) * d.phase_plane;
        const int64_t lo = DirectPlan::leading_zeros(g, b), hi = DirectPlan::input_end(g, b);
        const int64_t x0 = lo * sx + b - g.pad[2];  // the input column of phase column lo
        // rows that lie one after the other, in the input as in the phase (no padded columns, stride 1): one run
        const bool runs = lo == 0 && hi == d.row && sx * xs == 1 && g.x_stride[3] == d.row && sy == 1;
        for (int64_t i = 0; i < d.phase_rows; ++i) {
            const int64_t y = (r0 + i) * sy + a - g.pad[1];
            float* o = phase + i * d.row;
            if (y < 0 || y >= g.in[1]) {
                std::fill(o, o + d.row, 0.0f);
                continue;
            }
            const T* r = image + y * g.x_stride[3] + x0 * xs;
            if (runs) {  // this row and the image's rows after it, to the band's last
                const int64_t count = std::min(d.phase_rows - i, g.in[1] - y);
                widen_strided<1>(o, r, count * d.row, 1);
                i += count - 1;
                continue;
            }
            std::fill(o, o + lo, 0.0f);
            const int64_t step = sx * xs;
            if (step == 1) widen_strided<1>(o + lo, r, hi - lo, 1);
            else if (step == 2) widen_strided<2>(o + lo, r, hi - lo, 2);
            else widen_strided<0>(o + lo, r, hi - lo, step);
            std::fill(o + hi, o + d.row, 0.0f);
        }
        std::fill(phase + d.phase_rows * d.row, phase + d.phase_plane, 0.0f);
    }
}

// Tap k of dimension d: the input coordinate output o reads is o * stride + shift, inside the input for the
// output positions [lo, hi).
struct TapRange {
    int64_t shift, lo, hi;
    TapRange(const ConvGeometry& g, int d, int64_t k) {
        const int64_t s = g.stride[d];
        shift = k * g.dilation[d] - g.pad[d];
        lo = std::min(g.out[d], shift >= 0 ? 0 : (-shift + s - 1) / s);
        hi = std::max(lo, g.in[d] - shift <= 0 ? 0 : std::min(g.out[d], (g.in[d] - 1 - shift) / s + 1));
    }
};

// The input coordinate output o reads through tap k of dimension d, or -1 outside the input.
inline int64_t input_at(const ConvGeometry& g, int d, int64_t o, int64_t k) {
    const int64_t i = o * g.stride[d] + k * g.dilation[d] - g.pad[d];
    return i >= 0 && i < g.in[d] ? i : -1;
}

// Columns [begin, end) of the column matrix of one group's packed input: col[c * K + k, o - begin] is the value
// tap k of output o reads in channel c, 0 in the padding.
template <class C>
void im2col(const ConvGeometry& g, const C* in, C* col, uint64_t begin, uint64_t end) {
    const int64_t K = g.kernel_size(), width = int64_t(end - begin), sx = g.stride[2];
    for (int64_t row = 0; row < g.group_in * K; ++row) {
        const int64_t c = row / K, k = row % K;
        const int64_t kz = k / (g.kernel[1] * g.kernel[2]), ky = (k / g.kernel[2]) % g.kernel[1], kx = k % g.kernel[2];
        const C* plane = in + c * g.in_spatial();
        const TapRange t(g, 2, kx);
        C* dst = col + row * width;
        for (int64_t o = int64_t(begin); o < int64_t(end);) {  // one output row (or its part in the tile) a step
            const int64_t ox0 = o % g.out[2], oy = (o / g.out[2]) % g.out[1], oz = o / (g.out[2] * g.out[1]);
            const int64_t ox1 = std::min(g.out[2], ox0 + (int64_t(end) - o));
            const int64_t iz = input_at(g, 0, oz, kz), iy = input_at(g, 1, oy, ky);
            const int64_t a = std::clamp(t.lo, ox0, ox1), b = std::clamp(t.hi, a, ox1);
            if (iz < 0 || iy < 0) {
                std::fill(dst, dst + (ox1 - ox0), C(0));
            } else {
                const C* src = plane + (iz * g.in[1] + iy) * g.in[2];
                std::fill(dst, dst + (a - ox0), C(0));
                if (sx == 1 && b > a) std::memcpy(dst + (a - ox0), src + a + t.shift, sizeof(C) * (b - a));
                else if (sx != 1)
                    for (int64_t ox = a; ox < b; ++ox) dst[ox - ox0] = src[ox * sx + t.shift];
                std::fill(dst + (b - ox0), dst + (ox1 - ox0), C(0));
            }
            dst += ox1 - ox0;
            o += ox1 - ox0;
        }
    }
}

// Backward: col [group_out * K, in_spatial] scatters into out [group_out, out_spatial]. Contributions landing
// outside the output (beyond a caller-chosen output size) are dropped.
template <class C>
void col2im(const ConvGeometry& g, const C* col, C* out, ThreadPool& pool) {
    const int64_t K = g.kernel_size(), I = g.in_spatial(), O = g.out_spatial();
    // One output channel per task, so no two tasks add into the same element.
    pool.parallel_for(g.group_out, 1, [&](size_t begin, size_t end) {
        for (size_t m = begin; m < end; ++m) {
            C* plane = out + m * O;
            for (int64_t k = 0; k < K; ++k) {
                int64_t kz = k / (g.kernel[1] * g.kernel[2]), ky = (k / g.kernel[2]) % g.kernel[1], kx = k % g.kernel[2];
                const C* src = col + (int64_t(m) * K + k) * I;
                for (int64_t iz = 0; iz < g.in[0]; ++iz) {
                    int64_t oz = iz * g.stride[0] + kz * g.dilation[0] - g.pad[0];
                    for (int64_t iy = 0; iy < g.in[1]; ++iy) {
                        int64_t oy = iy * g.stride[1] + ky * g.dilation[1] - g.pad[1];
                        for (int64_t ix = 0; ix < g.in[2]; ++ix) {
                            int64_t ox = ix * g.stride[2] + kx * g.dilation[2] - g.pad[2];
                            C v = src[(iz * g.in[1] + iy) * g.in[2] + ix];
                            if (oz >= 0 && oz < g.out[0] && oy >= 0 && oy < g.out[1] && ox >= 0 && ox < g.out[2])
                                plane[(oz * g.out[1] + oy) * g.out[2] + ox] += v;
                        }
                    }
                }
            }
        }
    });
}

// dst[i] += w * src[i * stride] for i in [0, n), the stride a constant S where not 0, so that the loads vectorize
// (a stride of 2 is two loads and a permutation).
template <int64_t S, class C>
DML_VECTOR_CLONES void add_scaled(C* dst, const C* src, C w, int64_t n, int64_t stride) {
    for (int64_t i = 0; i < n; ++i) dst[i] += w * src[i * (S ? S : stride)];
}

// Depthwise: acc[c, o] = sum over taps k of filter[c, k] input[c, position of tap k], one output row per task: the
// instruction set's row kernel where it has one (depthwise_rows_kernel), else each tap adds a scaled input row into
// the output row (a vector loop for strides 1 and 2).
template <class C>
void depthwise(const ConvGeometry& g, const C* filter, const C* input, C* acc, ThreadPool& pool) {
    const int64_t K = g.kernel_size(), I = g.in_spatial(), O = g.out_spatial(), rows = g.out[0] * g.out[1];
    const int64_t sx = g.stride[2];
    const auto row_kernel = depthwise_rows_kernel(g, std::is_same_v<C, float>);
    pool.parallel_for(uint64_t(g.out_channels) * rows, std::max<int64_t>(1, 2048 / g.out[2]), [&](size_t b, size_t e) {
        for (size_t r = b; r < e; ++r) {
            const int64_t c = r / rows, oz = (r % rows) / g.out[1], oy = r % g.out[1];
            const C* plane = input + c * I;
            const C* w = filter + c * K;
            C* dst = acc + c * O + (oz * g.out[1] + oy) * g.out[2];
            if constexpr (std::is_same_v<C, float>) {
                if (const int64_t iz = input_at(g, 0, oz, 0); row_kernel && iz >= 0) {
                    const float* in_rows[3];
                    for (int64_t ky = 0; ky < 3; ++ky) {
                        const int64_t iy = input_at(g, 1, oy, ky);
                        in_rows[ky] = iy < 0 ? nullptr : plane + (iz * g.in[1] + iy) * g.in[2];
                    }
                    row_kernel(in_rows, w, dst, g.out[2], g.in[2], g.pad[2]);
                    continue;
                }
            }
            std::fill(dst, dst + g.out[2], C(0));
            for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
                const int64_t iz = input_at(g, 0, oz, kz);
                if (iz < 0) continue;
                for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
                    const int64_t iy = input_at(g, 1, oy, ky);
                    if (iy < 0) continue;
                    const C* src = plane + (iz * g.in[1] + iy) * g.in[2];
                    for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                        const C wv = w[(kz * g.kernel[1] + ky) * g.kernel[2] + kx];
                        const TapRange t(g, 2, kx);
                        C* d = dst + t.lo;
                        const C* x = src + t.lo * sx + t.shift;
                        if (sx == 1) add_scaled<1>(d, x, wv, t.hi - t.lo, 1);
                        else if (sx == 2) add_scaled<2>(d, x, wv, t.hi - t.lo, 2);
                        else add_scaled<0>(d, x, wv, t.hi - t.lo, sx);
                    }
                }
            }
        }
    });
}

// One image: packed input [in_channels, I] and filter (pack_filter's layout) into acc [out_channels, O].
template <class C>
void convolve_image(const ConvGeometry& g, const ConvWorkspace& ws, const C* filter, const C* input, C* col, C* acc,
                    ThreadPool& pool) {
    if (g.depthwise()) return depthwise(g, filter, input, acc, pool);
    const int64_t I = g.in_spatial(), O = g.out_spatial(), K = g.kernel_size();
    const int gi = int(g.group_in), go = int(g.group_out);
    for (int64_t group = 0; group < g.groups; ++group) {
        const C* in_g = input + group * gi * I;
        C* acc_g = acc + group * go * O;
        if (!g.forward) {
            // col[go*K, I] = filter_g^T [go*K, gi] x in_g[gi, I], then scattered into the output
            blas_gemm<C>(pool, true, false, int(go * K), int(I), gi, C(1), filter + group * gi * go * K, int(go * K),
                         in_g, int(I), C(0), col, int(I));
            std::fill(acc_g, acc_g + int64_t(go) * O, C(0));
            col2im(g, col, acc_g, pool);
            continue;
        }
        // out_g[go, O] = filter_g[go, gi*K] x col[gi*K, O]
        const C* filter_g = filter + group * go * gi * K;
        if (g.pointwise()) {
            blas_gemm<C>(pool, false, false, go, int(O), gi, C(1), filter_g, gi, in_g, int(O), C(0), acc_g, int(O));
            continue;
        }
        // By tiles of output positions, dealt to the threads in turn; each thread has its own column buffer.
        const uint64_t rows = uint64_t(gi) * K;
        const uint64_t parts = std::clamp<uint64_t>(ws.col_elements / rows, 1, pool.size());
        const uint64_t tile = std::min<uint64_t>((O + parts - 1) / parts, ws.col_elements / (rows * parts));
        const uint64_t tiles = (O + tile - 1) / tile;
        pool.parallel_for(parts, 1, [&](size_t part_begin, size_t part_end) {
            for (size_t p = part_begin; p < part_end; ++p)
                for (uint64_t t = p; t < tiles; t += parts) {
                    const uint64_t begin = t * tile, end = std::min<uint64_t>(O, begin + tile);
                    C* cols = col + p * rows * tile;
                    im2col(g, in_g, cols, begin, end);
                    gemm_on_thread<C>(false, false, go, int(end - begin), int(rows), C(1), filter_g, int(rows), cols,
                                      int(end - begin), C(0), acc_g + begin, int(O));
                }
        });
    }
}

// o[i] = T(act(a[i] + bias)), the activation a constant so the loop vectorizes.
template <ActivationFunction A, class T, class C>
DML_VECTOR_CLONES void finish_row(const FusedActivation& fused, const C* a, T* o, int64_t cols, C bias) {
    for (int64_t i = 0; i < cols; ++i) o[i] = T(activate<A>(fused, C(a[i] + bias)));
}

// out[m, r, i] = T(act(acc[m, r, i] + bias[m])) over channels [begin, end) x [rows, cols]; in place when acc is the
// output. acc and out rows lie at their own pitches.
template <class T, class C>
void finish(const FusedActivation& fused, const C* acc, int64_t acc_plane, int64_t acc_row, T* out, int64_t out_plane,
            const C* bias, size_t begin, size_t end, int64_t rows, int64_t cols) {
    with_activation(fused.function, [&]<ActivationFunction A>() {
        for (size_t m = begin; m < end; ++m)
            for (int64_t r = 0; r < rows; ++r)
                finish_row<A>(fused, acc + m * acc_plane + r * acc_row, out + m * out_plane + r * cols, cols, bias[m]);
    });
}

// What the direct kernel's finish needs to store one band: the output of channels [0, channels) at `out` (the
// band's first row of its first channel), the band's positions over padded rows of `row` columns.
struct BandOutput {
    const FusedActivation* fused;
    const float* bias;
    void* out;
    int64_t out_plane, out_width, row, positions, channels, block_channels, block_positions;
};

// The direct kernel's finish: a tile of channels m0.. x positions p.. (over padded rows) stored as
// T(act(sum + bias)) into the band's output rows, the padded columns and the padded channels dropped.
template <ActivationFunction A, class T>
DML_VECTOR_CLONES void finish_tile(const void* context, const float* tile, int64_t m0, int64_t p) {
    const BandOutput& b = *static_cast<const BandOutput*>(context);
    const int64_t block = b.block_positions, end = std::min(p + block, b.positions);
    const int64_t channels = std::min(b.channels - m0, b.block_channels);
    for (int64_t q = p; q < end;) {  // one output row's part a step
        const int64_t r = q / b.row, c = q % b.row, n = std::min(b.row - c, end - q);
        const int64_t cols = std::min(b.out_width - c, n);
        for (int64_t i = 0; i < channels; ++i) {
            const float* sums = tile + i * block + (q - p);
            T* o = static_cast<T*>(b.out) + (m0 + i) * b.out_plane + r * b.out_width + c;
            const float bias = b.bias[m0 + i];
            for (int64_t k = 0; k < cols; ++k) o[k] = T(activate<A>(*b.fused, sums[k] + bias));
        }
        q += n;
    }
}

class ConvolutionKernel final : public CpuKernel {
public:
    explicit ConvolutionKernel(const Node& node)
        : desc_(static_cast<const ConvolutionDesc&>(*node.desc)),
          geometry_(desc_, node.inputs[0]->desc, node.inputs[1]->desc, node.outputs[0]),
          type_(node.outputs[0].data_type),
          element_size_(type_ == DataType::Float64 ? 8 : 4),
          filter_elements_(node.inputs[1]->desc.element_count()),
          input_packed_(type_ != DataType::Float16 && image_packed(node.inputs[0]->desc)),
          planes_packed_(type_ == DataType::Float32 && planes_packed(node.inputs[0]->desc)),
          winograd_(geometry_, type_ == DataType::Float32, winograd_outputs),
          direct_(winograd_ ? DirectPlan() : DirectPlan(geometry_, type_)),
          pointwise_(pointwise_gemm_for(geometry_, type_, direct_, winograd_)),
          // the filter's place is kept for filters bound at dispatch (settled before initialize says which)
          workspace_(geometry_, filter_elements_, element_size_, pointwise_ ? !planes_packed_ : !input_packed_,
                     type_ == DataType::Float16, direct_, winograd_, pointwise_) {}

    uint64_t workspace_size() const override { return workspace_.total * element_size_; }
    uint64_t persistent_size() const override { return packed_filter_.size(); }

    void initialize(const std::vector<TensorArg>& constants) override {
        packed_filter_.clear();
        const TensorArg& w = constants[1];
        if (!w) return;
        visit_float([&]<class T, class C>() {
            if (winograd_) {
                std::vector<float> taps(filter_elements_);
                packed_filter_.resize(winograd_.filter_elements(geometry_) * sizeof(float));
                pack_filter<T, float>(w.as<T>(), geometry_, taps.data(), [](T v, uint32_t) { return float(v); });
                return winograd_filter(taps.data(), geometry_, winograd_,
                                       reinterpret_cast<float*>(packed_filter_.data()));
            }
            if (pointwise_) {
                packed_filter_.resize(filter_block_elements(geometry_, pointwise_->rows) * sizeof(float));
                return pack_filter_blocks<T>(w.as<T>(), geometry_, pointwise_->rows,
                                             reinterpret_cast<float*>(packed_filter_.data()));
            }
            if (direct_) {
                packed_filter_.resize(direct_.filter_elements(geometry_) * sizeof(float));
                return pack_filter_blocks<T>(w.as<T>(), geometry_, direct_.block_channels,
                                             reinterpret_cast<float*>(packed_filter_.data()));
            }
            packed_filter_.resize(filter_elements_ * sizeof(C));
            pack_filter<T, C>(w.as<T>(), geometry_, reinterpret_cast<C*>(packed_filter_.data()),
                              [](T v, uint32_t) { return C(v); });
        });
    }

    void run(const KernelArgs& args) const override {
        visit_float([&]<class T, class C>() { run_typed<T, C>(args); });
    }

private:
    // f<T, C>() for the node's float type T and its compute type C.
    template <class F> void visit_float(F&& f) const {
        visit_data_type(type_, [&]<class T>() {
            if constexpr (std::is_floating_point_v<compute_t<T>>) f.template operator()<T, compute_t<T>>();
        });
    }

    // The direct kernel's path: bands of output rows, each band's padded input gathered, then its accumulators
    // computed and finished (bias, activation, the output's type, the padded columns dropped) while in the cache.
    // The whole layer is one parallel_stages job, so the workers wake once a layer, not twice a band.
    template <class T>
    void run_direct(const KernelArgs& args, const float* bias) const {
        const ConvGeometry& g = geometry_;
        const DirectPlan& d = direct_;
        float* ws = reinterpret_cast<float*>(args.workspace);
        const float* filter = reinterpret_cast<const float*>(packed_filter_.data());
        if (packed_filter_.empty()) {
            pack_filter_blocks<T>(args.inputs[1].as<T>(), g, d.block_channels, ws);
            filter = ws;
        }
        float* padded = ws + workspace_.input;
        float* acc = ws + workspace_.col;
        if (!d.in_place) std::fill(padded + g.in_channels * d.plane, acc, 0.0f);  // what the last blocks overread
        const int64_t O = g.out_spatial(), block = d.tile->block_positions;
        const int64_t group_filter = d.channel_blocks * d.block_channels * g.group_in * g.kernel_size();
        void (*finish_tile_t)(const void*, const float*, int64_t, int64_t) = nullptr;
        with_activation(desc_.fused.function, [&]<ActivationFunction A>() { finish_tile_t = finish_tile<A, T>; });
        // the tiles store float sums from their registers with no activation or relu (the others through finish_tile)
        const ActivationFunction act = desc_.fused.function;
        const bool registers = std::is_same_v<T, float> && !d.lane_masks.empty() &&
                               (act == ActivationFunction::None || act == ActivationFunction::Identity ||
                                act == ActivationFunction::Relu);
        std::vector<ThreadPool::Stage> stages;
        // a layer of few products runs on the calling thread alone (ThreadPool::parallel_stages: one chunk a stage)
        const int64_t products = int64_t(g.batch) * g.out_channels * O * g.group_in * g.kernel_size();
        const size_t grain = products < kAloneProducts ? SIZE_MAX : 1;
        // Output channels [m0, m0 + channels) of image n, rows [r0, r0 + rows): the kernel, which finishes each
        // tile into the output (depthwise: the epilogue after it, over acc), as stages.
        auto band = [&](T* image, int64_t m0, const float* input, const float* filter_block, int64_t r0, int64_t rows,
                        int64_t channels) {
            T* out = image + m0 * O + r0 * g.out[2];
            const int64_t positions = (rows - 1) * d.row + g.out[2];
            auto tiles = [=, this, &g, &d](size_t b, size_t e) {
                DirectConvolution a{input, d.plane, filter_block, d.tap_offsets.data(), g.group_in, g.kernel_size(),
                                    channels, d.in_place ? r0 * d.row : 0, positions, acc, d.acc_plane};
                a.bounded = d.in_place;
                if (!d.tap_masks.empty()) a.tap_masks = d.tap_masks.data() + d.band_masks[r0 / d.band_rows];
                // where the output's rows follow each other as the band's do, the finish stores runs of a plane
                const int64_t width = d.row == g.out[2] ? positions : g.out[2];
                const BandOutput output{&desc_.fused, bias + m0, out, O, width, d.row == g.out[2] ? width : d.row,
                                        positions, channels, d.block_channels, block};
                if (!d.depthwise) a.finish = finish_tile_t, a.finish_context = &output;
                if (registers) {
                    a.out = reinterpret_cast<float*>(out), a.out_plane = O, a.bias = bias + m0;
                    a.relu = act == ActivationFunction::Relu;
                    a.lane_masks = d.lane_masks.data(), a.lane_offsets = d.lane_offsets.data();
                }
                d.tile->run(a, b, e);
            };
            const int64_t items = (d.depthwise ? channels : d.channel_blocks) * ((positions + block - 1) / block);
            stages.push_back({size_t(items), grain, tiles});
            if (d.depthwise)
                stages.push_back({size_t(channels), grain, [=, this, &g, &d](size_t b, size_t e) {
                                      finish<T, float>(desc_.fused, acc, d.acc_plane, d.row, out, O, bias + m0, b, e,
                                                       rows, g.out[2]);
                                  }});
        };
        const T* x = args.inputs[0].as<T>();
        for (uint32_t n = 0; n < g.batch; ++n) {
            T* image = args.outputs[0].as<T>() + uint64_t(n) * g.out_channels * O;
            for (int64_t r0 = 0; r0 < g.out[1]; r0 += d.band_rows) {
                const int64_t rows = std::min(d.band_rows, g.out[1] - r0);
                const float* input = padded;
                if (d.in_place)  // float (DirectPlan)
                    input = reinterpret_cast<const float*>(x + int64_t(n) * g.x_stride[0]);
                else
                    stages.push_back({size_t(g.in_channels * g.stride[1] * g.stride[2]), grain,
                                      [=, &g, &d](size_t b, size_t e) {
                                          pad_band<T>(x, g, d, n, r0, padded, b, e);
                                      }});
                if (d.depthwise) {
                    band(image, 0, input, filter, r0, rows, g.out_channels);
                    continue;
                }
                for (int64_t group = 0; group < g.groups; ++group)
                    band(image, group * g.group_out, input + group * g.group_in * d.plane,
                         filter + group * group_filter, r0, rows, g.group_out);
            }
        }
        args.pool.parallel_stages(stages);
    }

    // The pointwise GEMM's path: a group's image panels copied, then its work items, two stages of one job an
    // image. Bias and relu go in the registers; any other activation is a pass over the output after.
    void run_pointwise(const KernelArgs& args, const float* bias) const {
        const ConvGeometry& g = geometry_;
        const PointwiseGemmKernel& k = *pointwise_;
        float* ws = reinterpret_cast<float*>(args.workspace);
        const float* filter = reinterpret_cast<const float*>(packed_filter_.data());
        if (packed_filter_.empty()) {
            pack_filter_blocks<float>(args.inputs[1].as<float>(), g, k.rows, ws);
            filter = ws;
        }
        const ActivationFunction act = desc_.fused.function;
        const bool registers =
            act == ActivationFunction::None || act == ActivationFunction::Identity || act == ActivationFunction::Relu;
        const int64_t I = g.in_spatial(), O = g.out_spatial();
        const int64_t channel_panels = k.channel_panels(g.group_out), position_panels = k.position_panels(O);
        const bool in_place = pointwise_in_place(g);
        // blocks halved along the split until the threads have a few items each to balance
        int64_t block[2] = {kPointwiseBlockPanels[0], kPointwiseBlockPanels[1]};
        auto count = [&] { return ceil_div(channel_panels, block[0]) * ceil_div(position_panels, block[1]); };
        for (int64_t& b = block[in_place ? 1 : 0]; b > 1 && count() < int64_t(4 * args.pool.size());)
            b = ceil_div(b, 2);
        const size_t items = size_t(count());
        const int64_t products = int64_t(g.batch) * g.out_channels * O * g.group_in;
        const size_t grain = products < kAloneProducts ? SIZE_MAX : 1;
        std::vector<PointwiseGemm> gemms(g.groups);  // what each group's stages read
        for (uint32_t n = 0; n < g.batch; ++n) {
            // the channels' planes where they lie, any distance apart, or gathered
            const float* image = args.inputs[0].as<float>() + int64_t(n) * g.x_stride[0];
            int64_t channel = g.x_stride[1];
            if (!planes_packed_) {
                gather_image<float, float>(args.inputs[0].as<float>(), g, n, ws + workspace_.input,
                                           [](float v, uint32_t) { return v; }, args.pool);
                image = ws + workspace_.input, channel = I;
            }
            float* out = args.outputs[0].as<float>() + uint64_t(n) * g.out_channels * O;
            std::vector<ThreadPool::Stage> stages;
            for (int64_t group = 0; group < g.groups; ++group) {
                gemms[group] = {filter + group * channel_panels * k.rows * g.group_in,
                                image + group * g.group_in * channel,
                                channel,
                                ws + workspace_.col,
                                out + group * g.group_out * O,
                                O,
                                registers ? bias + group * g.group_out : nullptr,
                                g.group_out,
                                g.group_in,
                                O,
                                act == ActivationFunction::Relu,
                                in_place,
                                {block[0], block[1]}};
                const PointwiseGemm* gemm = &gemms[group];
                const int64_t first_packed = in_place ? O / k.columns : 0;  // the panels packed: those from it
                if (first_packed < position_panels)
                    stages.push_back({size_t(position_panels - first_packed), grain,
                                      [&k, gemm, first_packed](size_t b, size_t e) {
                                          k.pack(*gemm, first_packed + b, first_packed + e);
                                      }});
                stages.push_back({items, grain, [&k, gemm](size_t b, size_t e) { k.run(*gemm, b, e); }});
            }
            args.pool.parallel_stages(stages);
            if (!registers)
                args.pool.parallel_for(g.out_channels, 1, [&](size_t b, size_t e) {
                    finish<float, float>(desc_.fused, out, O, O, out, O, bias, b, e, 1, O);
                });
        }
    }

    template <class T, class C>
    void run_typed(const KernelArgs& args) const {
        const ConvGeometry& g = geometry_;
        const TensorArg &x = args.inputs[0], &w = args.inputs[1], &bias = args.inputs[2], &y = args.outputs[0];
        C* ws = reinterpret_cast<C*>(args.workspace);
        auto widen = [](T v, uint32_t) { return C(v); };
        std::vector<C> bias_values(g.out_channels, C(0));
        if (bias) {
            const int64_t stride = bias.desc->effective_strides()[1];
            for (int64_t m = 0; m < g.out_channels; ++m) bias_values[m] = C(bias.as<T>()[m * stride]);
        }
        if constexpr (std::is_same_v<T, float>)
            if (winograd_) {
                const float* filter = reinterpret_cast<const float*>(packed_filter_.data());
                if (packed_filter_.empty()) {  // the taps after the transformed filter's place
                    float* taps = ws + winograd_.filter_elements(g);
                    pack_filter<T, float>(w.as<T>(), g, taps, widen);
                    winograd_filter(taps, g, winograd_, ws);
                    filter = ws;
                }
                return run_winograd(g, winograd_, desc_.fused, x.as<T>(), filter, bias_values.data(), y.as<T>(), ws,
                                    args.pool);
            }
        if constexpr (std::is_same_v<T, float>)
            if (pointwise_) return run_pointwise(args, bias_values.data());
        if constexpr (std::is_same_v<C, float>)
            if (direct_) return run_direct<T>(args, bias_values.data());
        const C* filter = reinterpret_cast<const C*>(packed_filter_.data());
        if (packed_filter_.empty()) {
            pack_filter<T, C>(w.as<T>(), g, ws, widen);
            filter = ws;
        }
        const bool epilogue = bias || !desc_.fused.is_none() || !std::is_same_v<T, C>;
        const int64_t O = g.out_spatial();
        for (uint32_t n = 0; n < g.batch; ++n) {
            const C* input = ws + workspace_.input;
            if constexpr (std::is_same_v<T, C>)
                if (input_packed_) input = x.as<T>() + int64_t(n) * g.x_stride[0];
            if (!input_packed_) gather_image<T, C>(x.as<T>(), g, n, ws + workspace_.input, widen, args.pool);
            T* out = y.as<T>() + uint64_t(n) * g.out_channels * O;
            C* acc = std::is_same_v<T, C> ? reinterpret_cast<C*>(out) : ws + workspace_.acc;
            convolve_image(g, workspace_, filter, input, ws + workspace_.col, acc, args.pool);
            if (epilogue)
                args.pool.parallel_for(g.out_channels, 1, [&](size_t b, size_t e) {
                    finish<T, C>(desc_.fused, acc, O, O, out, O, bias_values.data(), b, e, 1, O);
                });
        }
    }

    const ConvolutionDesc& desc_;
    ConvGeometry geometry_;
    DataType type_;
    uint64_t element_size_, filter_elements_;
    bool input_packed_;  // the input's images are read where they lie
    bool planes_packed_;  // float, and each channel's plane lies packed (where the pointwise GEMM reads it)
    WinogradPlan winograd_;  // empty unless Winograd runs this convolution
    DirectPlan direct_;      // empty unless the direct kernel runs this convolution
    const PointwiseGemmKernel* pointwise_;  // null unless the pointwise GEMM runs it
    ConvWorkspace workspace_;
    std::vector<std::byte> packed_filter_;  // a weight filter in pack_filter's layout; empty when bound at dispatch
};

// The exact convolution (input - input_zero_point) * (filter - filter_zero_point) of every image, handed to
// store(acc, n) as [out_channels, O] doubles. Inputs input, input_zero_point, filter, filter_zero_point sit at the
// given positions.
template <class Desc, class Store>
void integer_convolution(const KernelArgs& args, size_t x_at, size_t xz_at, size_t w_at, size_t wz_at, Store store) {
    const ConvolutionWindow& d = args.desc<Desc>();
    const TensorArg &x = args.inputs[x_at], &w = args.inputs[w_at], &wz = args.inputs[wz_at];
    const ConvGeometry g(d, false, true, *x.desc, *w.desc, *args.outputs[0].desc);
    const ConvWorkspace layout(g, w.desc->element_count(), sizeof(double), true, true);
    double* ws = reinterpret_cast<double*>(args.workspace);
    const double input_zero = parameter<double>(args.inputs[xz_at], 1, 0, 0.0);
    std::vector<double> filter_zero(g.out_channels);
    for (uint32_t m = 0; m < g.out_channels; ++m) filter_zero[m] = parameter<double>(wz, 1, m, 0.0);
    visit_data_type(w.desc->data_type, [&]<class T>() {
        pack_filter<T, double>(w.as<T>(), g, ws, [&](T v, uint32_t m) { return double(v) - filter_zero[m]; });
    });
    for (uint32_t n = 0; n < g.batch; ++n) {
        visit_data_type(x.desc->data_type, [&]<class T>() {
            gather_image<T, double>(x.as<T>(), g, n, ws + layout.input,
                                    [&](T v, uint32_t) { return double(v) - input_zero; }, args.pool);
        });
        convolve_image(g, layout, ws, ws + layout.input, ws + layout.col, ws + layout.acc, args.pool);
        store(ws + layout.acc, n);
    }
}

void run_convolution_integer(const KernelArgs& args) {
    const TensorDesc& y = *args.outputs[0].desc;
    const uint64_t image = y.element_count() / y.sizes[0];
    int32_t* out = args.outputs[0].as<int32_t>();
    integer_convolution<ConvolutionIntegerDesc>(args, 0, 1, 2, 3, [&](const double* acc, uint32_t n) {
        for (uint64_t i = 0; i < image; ++i) out[n * image + i] = wrap_int32(acc[i]);
    });
}

// Inputs: input, input_scale, input_zero_point, filter, filter_scale, filter_zero_point, bias, output_scale,
// output_zero_point. The real value of channel m is (acc + bias[m]) * input_scale * filter_scale[m].
void run_quantized_linear_convolution(const KernelArgs& args) {
    const TensorArg &bias = args.inputs[6], &y = args.outputs[0];
    const uint32_t M = y.desc->sizes[1];
    const uint64_t O = y.desc->element_count() / (uint64_t(y.desc->sizes[0]) * M);
    const double input_scale = parameter<double>(args.inputs[1], 1, 0, 0.0);
    const double out_scale = parameter<double>(args.inputs[7], 1, 0, 0.0);
    const double out_zero = parameter<double>(args.inputs[8], 1, 0, 0.0);
    std::vector<double> scale(M), bias_values(M);
    for (uint32_t m = 0; m < M; ++m) {
        scale[m] = input_scale * parameter<double>(args.inputs[4], 1, m, 0.0);
        bias_values[m] = parameter<double>(bias, 1, m, 0.0);
    }
    visit_data_type(y.desc->data_type, [&]<class Q>() {
        if constexpr (std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t>) {
            Q* out = y.as<Q>();
            integer_convolution<QuantizedLinearConvolutionDesc>(args, 0, 2, 3, 5, [&](const double* acc, uint32_t n) {
                Q* o = out + uint64_t(n) * M * O;
                for (uint32_t m = 0; m < M; ++m)
                    for (uint64_t i = 0; i < O; ++i) {
                        const double real = (acc[m * O + i] + bias_values[m]) * scale[m];
                        o[m * O + i] = quantize_rounded<Q>(real / out_scale, out_zero);
                    }
            });
        }
    });
}

// Integer convolutions: input at 0, filter at `filter_at`.
template <class Desc, size_t filter_at>
uint64_t integer_convolution_workspace(const Node& node) {
    const ConvolutionWindow& d = static_cast<const Desc&>(*node.desc);
    const TensorDesc &x = node.inputs[0]->desc, &w = node.inputs[filter_at]->desc;
    const ConvGeometry g(d, false, true, x, w, node.outputs[0]);
    return ConvWorkspace(g, w.element_count(), sizeof(double), true, true).total * sizeof(double);
}

}  // namespace

void register_convolution_kernels(KernelTable& t) {
    add_kernel<ConvolutionDesc, ConvolutionKernel>(t);
    add_kernel<ConvolutionIntegerDesc>(
        t, {run_convolution_integer, integer_convolution_workspace<ConvolutionIntegerDesc, 2>});
    add_kernel<QuantizedLinearConvolutionDesc>(
        t, {run_quantized_linear_convolution, integer_convolution_workspace<QuantizedLinearConvolutionDesc, 3>});
}

}  // namespace dml::cpu
