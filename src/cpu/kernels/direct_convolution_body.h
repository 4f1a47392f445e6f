// The direct convolution's loop, one copy per instruction set: included by direct_convolution_<isa>.cpp, each
// compiled with its own target flags, after defining its vector traits V (reg, width, zero, load, broadcast, fma,
// store, and first/load_first: a mask of a vector's first n lanes, and a load of those lanes alone, zero in the
// others). Everything here is in an unnamed namespace and calls nothing out of line (but the caller's finish,
// through its pointer), so that no function compiled
// for one instruction set can be merged by the linker into a caller built for another.
#pragma once
#include "direct_convolution.h"

namespace dml::cpu {
namespace {

// One work item over channels [c0, c1): MR output channels from mb * MR x N vectors of positions from p, held in
// registers, started from zero (c0 == 0) or from acc, left in acc or, after the last channel, handed to a.finish
// as a tile of `pitch` floats a channel. Masked: the last vector holds fewer than V::width of a bounded input's
// positions and is loaded masked.
template <class V, int MR, int N, bool Masked = false>
[[gnu::always_inline]] inline void direct_item(const DirectConvolution& a, int64_t mb, int64_t p, int64_t c0,
                                               int64_t c1, float* tile, int64_t pitch) {
    const auto last = V::first(Masked ? a.positions - p - (N - 1) * V::width : V::width);
    const float* w = a.filter + (mb * a.channels + c0) * a.taps * MR;
    float* out = a.acc + mb * MR * a.acc_plane + p;
    typename V::reg acc[MR][N];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < N; ++j) acc[i][j] = c0 == 0 ? V::zero() : V::load(out + i * a.acc_plane + j * V::width);
    for (int64_t c = c0; c < c1; ++c) {
        const float* in = a.input + c * a.plane + a.first + p;
        for (int64_t t = 0; t < a.taps; ++t, w += MR) {
            const float* x = in + a.tap_offsets[t];
            typename V::reg v[N];
#pragma GCC unroll 8
            for (int j = 0; j < N; ++j)
                v[j] = Masked && j == N - 1 ? V::load_first(x + j * V::width, last) : V::load(x + j * V::width);
#pragma GCC unroll 8
            for (int i = 0; i < MR; ++i) {
                const typename V::reg b = V::broadcast(w + i);
#pragma GCC unroll 8
                for (int j = 0; j < N; ++j) acc[i][j] = V::fma(b, v[j], acc[i][j]);
            }
        }
    }
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
// bounded and the positions end inside it.
template <class V, int MR, int N>
[[gnu::always_inline]] inline void direct_tail(const DirectConvolution& a, int64_t vectors, int64_t mb, int64_t p,
                                               int64_t c0, int64_t c1, float* tile, int64_t pitch) {
    if constexpr (N > 0) {
        if (vectors < N) return direct_tail<V, MR, N - 1>(a, vectors, mb, p, c0, c1, tile, pitch);
        if (a.bounded && p + N * V::width > a.positions)
            return direct_item<V, MR, N, true>(a, mb, p, c0, c1, tile, pitch);
        direct_item<V, MR, N>(a, mb, p, c0, c1, tile, pitch);
    }
}

// acc[m, p] = sum over channels c and taps t of filter[m, c, t] * input[c, first + p + tap_offsets[t]], for
// tiles of MR output channels x NV vectors of positions.
// The channels are taken in chunks of equal size whose filter block stays in the first-level cache, each chunk
// over all of this call's work items, adding to what the chunks before it left in acc; the last hands each tile
// to a.finish where set.
template <class V, int MR, int NV>
void direct_rows(const DirectConvolution& a, size_t begin, size_t end) {
    constexpr int64_t block = int64_t(NV) * V::width;
    constexpr int64_t chunk_floats = 4096;  // 16 KiB of filter
    const int64_t position_blocks = (a.positions + block - 1) / block;
    const int64_t most = chunk_floats / (MR * a.taps) > 0 ? chunk_floats / (MR * a.taps) : 1;
    const int64_t chunks = (a.channels + most - 1) / most, chunk = (a.channels + chunks - 1) / chunks;
    alignas(64) float tile[MR * block];
    for (int64_t c0 = 0; c0 < a.channels; c0 += chunk) {
        const int64_t c1 = a.channels - c0 < chunk ? a.channels : c0 + chunk;
        for (size_t item = begin; item < end; ++item) {
            const int64_t mb = int64_t(item) / position_blocks, p = (int64_t(item) % position_blocks) * block;
            const int64_t vectors = (a.positions - p + V::width - 1) / V::width;
            if (p + block <= a.positions) direct_item<V, MR, NV>(a, mb, p, c0, c1, tile, block);
            else direct_tail<V, MR, NV>(a, vectors, mb, p, c0, c1, tile, block);
        }
    }
}

// Depthwise: acc[m, p] = sum over taps t of filter[m, t] * input[m, first + p + tap_offsets[t]], NV vectors of
// positions of one channel a work item.
template <class V, int NV>
void depthwise_rows(const DirectConvolution& a, size_t begin, size_t end) {
    constexpr int64_t block = int64_t(NV) * V::width;
    const int64_t position_blocks = (a.positions + block - 1) / block;
    for (size_t item = begin; item < end; ++item) {
        const int64_t m = int64_t(item) / position_blocks, p = (int64_t(item) % position_blocks) * block;
        const float* w = a.filter + m * a.taps;
        const float* in = a.input + m * a.plane + a.first + p;
        typename V::reg acc[NV];
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) acc[j] = V::zero();
        for (int64_t t = 0; t < a.taps; ++t) {
            const typename V::reg b = V::broadcast(w + t);
            const float* x = in + a.tap_offsets[t];
#pragma GCC unroll 8
            for (int j = 0; j < NV; ++j) acc[j] = V::fma(b, V::load(x + j * V::width), acc[j]);
        }
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) V::store(a.acc + m * a.acc_plane + p + j * V::width, acc[j]);
    }
}

// The instruction set's DirectKernel entries: each tile with the sizes its loop blocks by.
template <class V, int MR, int NV>
constexpr DirectTile direct_tile() {
    return {MR, int64_t(NV) * V::width, direct_rows<V, MR, NV>};
}
template <class V, int NV>
constexpr DirectTile depthwise_tile() {
    return {1, int64_t(NV) * V::width, depthwise_rows<V, NV>};
}

}  // namespace
}  // namespace dml::cpu
