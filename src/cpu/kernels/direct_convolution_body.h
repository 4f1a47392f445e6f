// The direct convolution's loop, one copy per instruction set: included by direct_convolution_<isa>.cpp, each
// compiled with its own target flags, after defining its vector traits V (reg, width, zero, load, broadcast, fma,
// store, first/load_first: a mask of a vector's first n lanes, and a load of those lanes alone, zero in the
// others, stores_lanes: whether it has add, relu and store_lanes, a store of the lanes of a mask, packed,
// tap_masks: whether load_first takes a 16-bit lane mask, as DirectConvolution::tap_masks holds them, and registers:
// how many vector registers the instruction set has).
// Everything here is in an unnamed namespace and calls nothing out of line (but the caller's finish, through its
// pointer), so that no function compiled for one instruction set can be merged by the linker into a caller built
// for another.
#pragma once
#include "direct_convolution.h"

namespace dml::cpu {
namespace {

// The finished sums of a work item, from its registers to the output (DirectConvolution::out).
template <class V, int MR, int N>
[[gnu::always_inline]] inline void store_item(const DirectConvolution& a, const typename V::reg (&acc)[MR][N],
                                              int64_t mb, int64_t p) {
    const int64_t m0 = mb * MR;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
        if (m0 + i == a.out_channels) return;  // the last block's padding channels
        const typename V::reg bias = V::broadcast(a.bias + m0 + i);
        float* out = a.out + (m0 + i) * a.out_plane;
#pragma GCC unroll 8
        for (int j = 0; j < N; ++j) {
            const int64_t first = p + j * V::width, v = first / V::width;
            uint32_t mask = a.lane_masks[v];
            if (first + V::width > a.positions) mask &= first >= a.positions ? 0 : (1u << (a.positions - first)) - 1;
            typename V::reg x = V::add(acc[i][j], bias);
            if (a.relu) x = V::relu(x);
            V::store_lanes(out + a.lane_offsets[v], mask, x);
        }
    }
}

// How a work item loads its input vectors: whole, the last one masked (it holds fewer than V::width of a bounded
// input's positions), or each with its tap's lanes of DirectConvolution::tap_masks.
enum class Loads { whole, last, taps };

// One work item over channels [c0, c1): MR output channels from mb * MR x N vectors of positions from p, held in
// registers, started from zero (c0 == 0) or from acc, left in acc or, after the last channel, handed to a.finish
// as a tile of `pitch` floats a channel. Taps: the filter's taps where fixed at compile (0: a.taps).
template <class V, int MR, int N, Loads L = Loads::whole, int Taps = 0>
[[gnu::always_inline]] inline void direct_item(const DirectConvolution& a, int64_t mb, int64_t p, int64_t c0,
                                               int64_t c1, float* tile, int64_t pitch) {
    const auto last = V::first(L == Loads::last ? a.positions - p - (N - 1) * V::width : V::width);
    const float* w = a.filter + (mb * a.channels + c0) * a.taps * MR;
    float* out = a.acc + mb * MR * a.acc_plane + p;
    typename V::reg acc[MR][N];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < N; ++j) acc[i][j] = c0 == 0 ? V::zero() : V::load(out + i * a.acc_plane + j * V::width);
    const int64_t taps = Taps ? Taps : a.taps;
    const uint16_t* masks = L == Loads::taps ? a.tap_masks + p / V::width * taps : nullptr;
    auto load = [&](const float* x, int j, int64_t t) __attribute__((always_inline)) {
        if constexpr (L == Loads::taps) return V::load_first(x, masks[j * taps + t]);
        else return L == Loads::last && j == N - 1 ? V::load_first(x, last) : V::load(x);
    };
    // One tap (pointwise layers, Winograd's products): the first channel block asks the second-level cache for
    // the next position block's input lines of each channel as it reads this block's, and the first position
    // block for the next channel block's filter. A layer of many input planes reads as many streams, more than
    // the hardware prefetchers follow, and a large filter is read from memory when other work ran between
    // inferences. On a 2-core Xeon, one thread, squeezenet in the network: its 128 -> 16 of 55x55 118-142 ->
    // 99-113 us; with ONNX Runtime and PyTorch run between inferences, its 512 -> 1000 of 13x13 1320-1341 ->
    // 1166-1170 us and its Winograd layers of 13x13 15-20 % faster. Every channel block prefetching the input
    // slowed the 1x1 layers of 128 to 512 planes by 10-20 % (bench/README.md).
    constexpr int64_t block = int64_t(N) * V::width, lines = (block + 15) / 16 + 1;
    const bool input_ahead = Taps == 1 && mb == 0 && p + 2 * block <= a.positions;
    const bool filter_ahead = Taps == 1 && p == 0 && (mb + 1) * MR < a.out_channels;
    for (int64_t c = c0; c < c1; ++c) {
        const float* in = a.input + c * a.plane + a.first + p;
        if (input_ahead)
#pragma GCC unroll 8
            for (int64_t l = 0; l < lines; ++l) __builtin_prefetch(in + block + l * 16, 0, 2);
        if (filter_ahead) __builtin_prefetch(w + a.channels * MR, 0, 2);  // the next block's, this channel's
#pragma GCC unroll 9
        for (int64_t t = 0; t < taps; ++t, w += MR) {
            const float* x = in + a.tap_offsets[t];
            typename V::reg v[N];
#pragma GCC unroll 8
            for (int j = 0; j < N; ++j) v[j] = load(x + j * V::width, j, t);
#pragma GCC unroll 8
            for (int i = 0; i < MR; ++i) {
                const typename V::reg b = V::broadcast(w + i);
#pragma GCC unroll 8
                for (int j = 0; j < N; ++j) acc[i][j] = V::fma(b, v[j], acc[i][j]);
            }
        }
    }
    if constexpr (V::stores_lanes)
        if (a.out && c1 == a.channels) return store_item<V, MR, N>(a, acc, mb, p);
    if (a.finish && c1 == a.channels) {
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
            for (int j = 0; j < N; ++j) V::store(tile + i * pitch + j * V::width, acc[i][j]);
        a.finish(a.finish_context, tile, mb * MR, p);
        return;
    }
    // every block's MR rows have their acc plane (the last block's past out_channels are dropped later)
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < N; ++j) V::store(out + i * a.acc_plane + j * V::width, acc[i][j]);
}

// The last position block, with `vectors` <= N vectors holding positions: a tile of that many, not N (a 13x13
// image's 181 padded positions are 3 blocks of 48 and 3 vectors), its last vector masked where the input is
// bounded and the positions end inside it (with tap masks, the masks end them).
template <class V, int MR, int N, int Taps, bool TapMasks>
[[gnu::always_inline]] inline void direct_tail(const DirectConvolution& a, int64_t vectors, int64_t mb, int64_t p,
                                               int64_t c0, int64_t c1, float* tile, int64_t pitch) {
    if constexpr (N > 0) {
        if (vectors < N) return direct_tail<V, MR, N - 1, Taps, TapMasks>(a, vectors, mb, p, c0, c1, tile, pitch);
        if constexpr (TapMasks) return direct_item<V, MR, N, Loads::taps, Taps>(a, mb, p, c0, c1, tile, pitch);
        if (a.bounded && p + N * V::width > a.positions)
            return direct_item<V, MR, N, Loads::last, Taps>(a, mb, p, c0, c1, tile, pitch);
        direct_item<V, MR, N, Loads::whole, Taps>(a, mb, p, c0, c1, tile, pitch);
    }
}

// One work item of a tile with output channels in the vectors' lanes (MB vectors of them) at Q x NP positions from
// p, NP positions in registers at a time: it loads its filter as vectors and broadcasts the input a position at a
// time, so it never loads a vector across a cache line (a position-vector tile loads most of its input unaligned: a
// 3x3 filter's taps are a column apart). Its partial sums in acc lie as its registers do, [mb][acc_plane][MB *
// width]; it hands a.finish a tile of Q x NP floats a channel, as the other tiles do (Q > 1: finishing 6
// positions a channel at a time cost more than the transposition). Never on a bounded input: it reads up to
// Q x NP positions past the last.
template <class V, int MB, int NP, int Q>
[[gnu::always_inline]] inline void lanes_item(const DirectConvolution& a, int64_t mb, int64_t p, int64_t c0,
                                              int64_t c1, float* tile) {
    constexpr int64_t MR = int64_t(MB) * V::width, pitch = int64_t(NP) * Q;
    const bool last = a.finish && c1 == a.channels;
    for (int q = 0; q < Q; ++q) {
        const float* w = a.filter + (mb * a.channels + c0) * a.taps * MR;
        float* partial = a.acc + (mb * a.acc_plane + p + q * NP) * MR;
        typename V::reg acc[MB][NP];
#pragma GCC unroll 8
        for (int i = 0; i < MB; ++i)
#pragma GCC unroll 8
            for (int j = 0; j < NP; ++j) acc[i][j] = c0 == 0 ? V::zero() : V::load(partial + j * MR + i * V::width);
        for (int64_t c = c0; c < c1; ++c) {
            const float* in = a.input + c * a.plane + a.first + p + q * NP;
            for (int64_t t = 0; t < a.taps; ++t, w += MR) {
                const float* x = in + a.tap_offsets[t];
                typename V::reg f[MB];
#pragma GCC unroll 8
                for (int i = 0; i < MB; ++i) f[i] = V::load(w + i * V::width);
#pragma GCC unroll 8
                for (int j = 0; j < NP; ++j) {
                    const typename V::reg b = V::broadcast(x + j);
#pragma GCC unroll 8
                    for (int i = 0; i < MB; ++i) acc[i][j] = V::fma(f[i], b, acc[i][j]);
                }
            }
        }
        alignas(64) float lanes[V::width];
#pragma GCC unroll 8
        for (int i = 0; i < MB; ++i)
#pragma GCC unroll 8
            for (int j = 0; j < NP; ++j) {
                if (!last) {
                    V::store(partial + j * MR + i * V::width, acc[i][j]);
                    continue;
                }
                V::store(lanes, acc[i][j]);
                for (int l = 0; l < V::width; ++l) tile[(i * V::width + l) * pitch + q * NP + j] = lanes[l];
            }
    }
    if (last) a.finish(a.finish_context, tile, mb * MR, p);
}

// item(mb, p, c0, c1, tile) for this call's work items [begin, end) of a tile of MR output channels x `block`
// positions, computing acc[m, p] = sum over channels c and taps t of filter[m, c, t] * input[c, first + p +
// tap_offsets[t]]. The channels are taken in chunks of equal size whose filter block stays in the first-level
// cache, each chunk over all of the work items, adding to what the chunks before it left in acc; the last hands
// each tile to a.finish where set. The work items run channel block major (a block's filter read from that cache
// for every position block), unless the chunk's filter of all the blocks fits there as well: then position block
// major, so that each position block's input is read from the second-level cache once, not once a channel block
// (on a 2-core Xeon, squeezenet's 1x1 layers of 16 to 128 input channels ran 5-12 % faster; bench/README.md).
template <int64_t MR, int64_t block, class Item>
[[gnu::always_inline]] inline void channel_chunks(const DirectConvolution& a, size_t begin, size_t end, Item&& item) {
    constexpr int64_t chunk_floats = 4096;  // 16 KiB of filter
    const int64_t position_blocks = (a.positions + block - 1) / block;
    const int64_t most = chunk_floats / (MR * a.taps) > 0 ? chunk_floats / (MR * a.taps) : 1;
    const int64_t chunks = (a.channels + most - 1) / most, chunk = (a.channels + chunks - 1) / chunks;
    const int64_t channel_blocks = (a.out_channels + MR - 1) / MR;
    const bool position_major = channel_blocks * MR * chunk * a.taps <= 2 * chunk_floats;
    alignas(64) float tile[MR * block];
    for (int64_t c0 = 0; c0 < a.channels; c0 += chunk) {
        const int64_t c1 = a.channels - c0 < chunk ? a.channels : c0 + chunk;
        for (size_t i = begin; i < end; ++i) {
            const int64_t mb = position_major ? int64_t(i) % channel_blocks : int64_t(i) / position_blocks;
            const int64_t pb = position_major ? int64_t(i) / channel_blocks : int64_t(i) % position_blocks;
            item(mb, pb * block, c0, c1, tile);
        }
    }
}

// Whether every tap of the N vectors of positions from p loads all its lanes (DirectConvolution::tap_masks): most
// blocks of an image, away from its edges.
template <class V, int N>
[[gnu::always_inline]] inline bool every_lane(const DirectConvolution& a, int64_t p) {
    const uint16_t* masks = a.tap_masks + p / V::width * a.taps;
    uint16_t all = 0xffff;
    for (int64_t i = 0; i < N * a.taps; ++i) all &= masks[i];
    return all == 0xffff;
}

// Tiles of MR output channels x NV vectors of positions, of Taps filter taps (0: any), loaded with tap masks where
// they need them.
template <class V, int MR, int NV, int Taps, bool TapMasks>
void direct_rows_of(const DirectConvolution& a, size_t begin, size_t end) {
    constexpr int64_t block = int64_t(NV) * V::width;
    channel_chunks<MR, block>(a, begin, end, [&](int64_t mb, int64_t p, int64_t c0, int64_t c1, float* tile)
                                                 __attribute__((always_inline)) {
        const int64_t vectors = (a.positions - p + V::width - 1) / V::width;
        if (p + block > a.positions)
            return direct_tail<V, MR, NV, Taps, TapMasks>(a, vectors, mb, p, c0, c1, tile, block);
        if constexpr (TapMasks)
            if (!every_lane<V, NV>(a, p))
                return direct_item<V, MR, NV, Loads::taps, Taps>(a, mb, p, c0, c1, tile, block);
        direct_item<V, MR, NV, Loads::whole, Taps>(a, mb, p, c0, c1, tile, block);
    });
}

template <class V, int MR, int NV, int Taps>
void direct_rows_masked(const DirectConvolution& a, size_t begin, size_t end) {
    if constexpr (V::tap_masks)
        if (a.tap_masks) return direct_rows_of<V, MR, NV, Taps, true>(a, begin, end);
    direct_rows_of<V, MR, NV, Taps, false>(a, begin, end);
}

// 1x1 and 3x3 filters with their tap loop unrolled: on a 2-core Xeon with AVX-512, one thread, squeezenet's 16 -> 64
// 3x3 of 55x55 ran 7 % faster, its 512 -> 1000 1x1 of 13x13 15 %, its 64 -> 16 1x1 of 55x55 11 % (bench/README.md).
// With 16 registers (AVX2), which its tiles fill, a 3x3 filter's taps stay a loop: unrolled, the compiler kept two of
// the 4 x 3 tile's sums on the stack. On a 2-core AMD EPYC, 3x3 layers of the 4 x 3, 2 x 5 and 6 x 2 tiles ran 2-17 %
// faster with the loop (squeezenet's first layer 7-40 %), of the 3 x 3 tile 1-6 % slower (bench/README.md). A 1x1
// filter has no padding to mask (DirectPlan reads it in place as one band, bounded).
template <class V, int MR, int NV>
void direct_rows(const DirectConvolution& a, size_t begin, size_t end) {
    if (a.taps == 1) return direct_rows_of<V, MR, NV, 1, false>(a, begin, end);
    if constexpr (V::registers > 16)
        if (a.taps == 9) return direct_rows_masked<V, MR, NV, 9>(a, begin, end);
    direct_rows_masked<V, MR, NV, 0>(a, begin, end);
}

// Tiles of MB vectors of output channels x Q x NP positions.
template <class V, int MB, int NP, int Q>
void lanes_rows(const DirectConvolution& a, size_t begin, size_t end) {
    channel_chunks<int64_t(MB) * V::width, int64_t(NP) * Q>(
        a, begin, end, [&](int64_t mb, int64_t p, int64_t c0, int64_t c1, float* tile)
                           __attribute__((always_inline)) { lanes_item<V, MB, NP, Q>(a, mb, p, c0, c1, tile); });
}

// Depthwise: acc[m, p] = sum over taps t of filter[m, t] * input[m, first + p + tap_offsets[t]], NV vectors of
// positions of one channel a work item. The even and odd taps sum into separate registers, added at the end: one
// chain of 9 dependent multiply-adds a vector left the FMA units waiting on their latency (AVX2 on a 2-core AMD EPYC,
// NV 3 -> 4 with the split: 1.02-1.15x on MobileNet v2's 3x3 depthwise layers, measured before AVX2 ran those by
// rows; bench/README.md).
template <class V, int NV>
void depthwise_rows(const DirectConvolution& a, size_t begin, size_t end) {
    constexpr int64_t block = int64_t(NV) * V::width;
    const int64_t position_blocks = (a.positions + block - 1) / block;
    for (size_t item = begin; item < end; ++item) {
        const int64_t m = int64_t(item) / position_blocks, p = (int64_t(item) % position_blocks) * block;
        const float* w = a.filter + m * a.taps;
        const float* in = a.input + m * a.plane + a.first + p;
        typename V::reg even[NV], odd[NV];
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) even[j] = V::zero(), odd[j] = V::zero();
        int64_t t = 0;
        for (; t + 1 < a.taps; t += 2) {
            const typename V::reg b0 = V::broadcast(w + t), b1 = V::broadcast(w + t + 1);
            const float *x0 = in + a.tap_offsets[t], *x1 = in + a.tap_offsets[t + 1];
#pragma GCC unroll 8
            for (int j = 0; j < NV; ++j) {
                even[j] = V::fma(b0, V::load(x0 + j * V::width), even[j]);
                odd[j] = V::fma(b1, V::load(x1 + j * V::width), odd[j]);
            }
        }
        if (t < a.taps) {
            const typename V::reg b = V::broadcast(w + t);
            const float* x = in + a.tap_offsets[t];
#pragma GCC unroll 8
            for (int j = 0; j < NV; ++j) even[j] = V::fma(b, V::load(x + j * V::width), even[j]);
        }
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) V::store(a.acc + m * a.acc_plane + p + j * V::width, V::add(even[j], odd[j]));
    }
}

// The instruction set's DirectKernel entries: each tile with the sizes its loop blocks by.
template <class V, int MR, int NV>
constexpr DirectTile direct_tile() {
    return {MR, int64_t(NV) * V::width, direct_rows<V, MR, NV>, false};
}
template <class V, int MB, int NP, int Q>
constexpr DirectTile lanes_tile() {
    return {int64_t(MB) * V::width, int64_t(NP) * Q, lanes_rows<V, MB, NP, Q>, true};
}
template <class V, int NV>
constexpr DirectTile depthwise_tile() {
    return {1, int64_t(NV) * V::width, depthwise_rows<V, NV>, false};
}

}  // namespace
}  // namespace dml::cpu
