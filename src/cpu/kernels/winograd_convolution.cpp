#include "winograd_convolution.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "../../platform/platform.h"
#include "vector_math.h"

namespace dml::cpu {

namespace {

using Plan = WinogradPlan;

// The one-dimensional transforms of F(m, r), M = m outputs of a tile from N = m + r - 1 inputs: B^T of the input,
// A^T of the products, G of the filter (in double, at initialize). Their two-dimensional forms apply them to the
// rows, then to the columns: P = N x N points a tile. F(2, 3) is Lavin and Gray's (2015). F(2, 5) and F(4, 3) are
// Toom-Cook's at the points 0, 1, -1, 1/2, -2 and infinity (derived and checked in exact fractions, bench/README.md),
// so they share B^T (Points6): x -> -1/x maps the points onto themselves, which keeps the coefficients small; F(2,
// 5)'s worst error against float64 was 1.6e-6 of the largest output where the points 0, +-1, +-2 (Lavin and Gray's
// F(4, 3)) gave 3.9e-6, at the same speed, and F(4, 3)'s simulated 1.6-2.1e-6 against 4.1-6.0e-6. B^T's rows are
// scaled to integers, the point 1/2's products scaled so that A^T's are too, the fractions left to G.
struct F2x3 {
    static constexpr int64_t M = 2, R = 3, N = M + R - 1, P = N * N;
    template <class X>
    [[gnu::always_inline]] static void input_1d(const X* d, int64_t s, X* v, int64_t t) {
        v[0] = d[0] - d[2 * s], v[t] = d[s] + d[2 * s], v[2 * t] = d[2 * s] - d[s], v[3 * t] = d[s] - d[3 * s];
    }
    template <class X>
    [[gnu::always_inline]] static void output_1d(const X* m, int64_t s, X* y, int64_t t) {
        y[0] = m[0] + m[s] + m[2 * s], y[t] = m[s] - m[2 * s] - m[3 * s];
    }
    static void filter_1d(const double* g, int64_t s, double* u, int64_t t) {
        u[0] = g[0], u[t] = (g[0] + g[s] + g[2 * s]) / 2, u[2 * t] = (g[0] - g[s] + g[2 * s]) / 2, u[3 * t] = g[2 * s];
    }
};

// B^T at the points 0, 1, -1, 1/2, -2 and infinity.
struct Points6 {
    template <class X>
    [[gnu::always_inline]] static void input_1d(const X* d, int64_t s, X* v, int64_t t) {
        const X d13 = d[s] - d[3 * s], d24 = d[2 * s] - d[4 * s];
        v[0] = 2 * (d[0] + d[4 * s]) - 3 * d13 - 4 * d[2 * s];
        v[t] = 2 * (d[s] - d[4 * s]) - d[2 * s] - 5 * d[3 * s];
        v[2 * t] = 2 * (d[s] + d[4 * s]) - 5 * d[2 * s] + d[3 * s];
        v[3 * t] = 2 * d13 + d24, v[4 * t] = d13 - 2 * d24;
        v[5 * t] = 2 * (d[s] + d[5 * s]) - 3 * d24 - 4 * d[3 * s];
    }
};

struct F2x5 : Points6 {
    static constexpr int64_t M = 2, R = 5, N = M + R - 1, P = N * N;
    template <class X>
    [[gnu::always_inline]] static void output_1d(const X* m, int64_t s, X* y, int64_t t) {
        y[0] = m[0] + (m[s] + m[2 * s]) + 2 * m[3 * s] + m[4 * s];
        y[t] = (m[s] - m[2 * s]) + m[3 * s] - 2 * m[4 * s] + m[5 * s];
    }
    static void filter_1d(const double* g, int64_t s, double* u, int64_t t) {
        const double e = g[0] + g[2 * s] + g[4 * s], o = g[s] + g[3 * s];  // even and odd taps
        u[0] = g[0] / 2, u[t] = -(e + o) / 6, u[2 * t] = (o - e) / 6;
        u[3 * t] = (16 * g[0] + 8 * g[s] + 4 * g[2 * s] + 2 * g[3 * s] + g[4 * s]) / 30;
        u[4 * t] = (g[0] - 2 * g[s] + 4 * g[2 * s] - 8 * g[3 * s] + 16 * g[4 * s]) / 30, u[5 * t] = g[4 * s] / 2;
    }
};

// F(4, 3): the point 1/2's products scaled by 8.
struct F4x3 : Points6 {
    static constexpr int64_t M = 4, R = 3, N = M + R - 1, P = N * N;
    template <class X>
    [[gnu::always_inline]] static void output_1d(const X* m, int64_t s, X* y, int64_t t) {
        const X a = m[s] + m[2 * s], b = m[s] - m[2 * s];
        y[0] = m[0] + a + 8 * m[3 * s] + m[4 * s], y[t] = b + 4 * m[3 * s] - 2 * m[4 * s];
        y[2 * t] = a + 2 * m[3 * s] + 4 * m[4 * s], y[3 * t] = b + m[3 * s] - 8 * m[4 * s] + m[5 * s];
    }
    static void filter_1d(const double* g, int64_t s, double* u, int64_t t) {
        u[0] = g[0] / 2, u[t] = -(g[0] + g[s] + g[2 * s]) / 6, u[2 * t] = (g[s] - g[0] - g[2 * s]) / 6;
        u[3 * t] = (4 * g[0] + 2 * g[s] + g[2 * s]) / 30, u[4 * t] = (g[0] - 2 * g[s] + 4 * g[2 * s]) / 30;
        u[5 * t] = g[2 * s] / 2;
    }
};

// The padded input rows lie split by phases of the tile's step M, as a strided convolution's input does in the
// direct kernel's bands (convolution.cpp): phase b of a row holds its columns b, b + M, ..., so that tile t reads
// each phase at t plus a fixed offset, vectors of consecutive tiles with no permutation. The split and the output's
// rows take vectors of M x kGroup columns, split or interleaved by permutes.

// The transforms take the tiles kGroup (16) at a time, each step a loop over their lanes, which the compiler turns
// into vector instructions; the last group's lanes past `count` read and write the padding that PartLayout leaves
// for them (their values unused).
constexpr int64_t kGroup = 16;
constexpr int64_t kMaxParts = 16;  // workspace parts (threads running blocks at once)

// `count` tiles from the phases of N padded input rows (row i's phase b at ph + (i * M + b) * pitch): point k of
// tile t to v[k * points + t].
template <class F>
[[gnu::always_inline]] inline void input_tiles(const float* __restrict ph, int64_t pitch, float* __restrict v,
                                               int64_t points, int64_t count) {
    constexpr int64_t M = F::M, N = F::N;
    for (int64_t t = 0; t < count; t += kGroup) {
        float d[N][kGroup], h[N * N][kGroup], o[N][kGroup];
        for (int64_t i = 0; i < N; ++i) {  // row i: h[j * N + i], its transform j
#pragma GCC unroll 16
            for (int64_t j = 0; j < N; ++j)
                for (int64_t l = 0; l < kGroup; ++l) d[j][l] = ph[(i * M + j % M) * pitch + t + j / M + l];
            for (int64_t l = 0; l < kGroup; ++l) F::input_1d(&d[0][l], kGroup, &h[i][l], N * kGroup);
        }
        for (int64_t j = 0; j < N; ++j) {  // column j: points (a, j)
            for (int64_t l = 0; l < kGroup; ++l) F::input_1d(&h[j * N][l], kGroup, &o[0][l], kGroup);
#pragma GCC unroll 16
            for (int64_t a = 0; a < N; ++a)
                for (int64_t l = 0; l < kGroup; ++l) v[(a * N + j) * points + t + l] = o[a][l];
        }
    }
}

// `count` tiles' outputs from products m (point k of tile t at m[k * points + t]), act(y + bias), into M output
// rows (row a's column M * t + b at out + a * pitch + M * t + b).
template <class F, ActivationFunction A>
[[gnu::always_inline]] inline void output_tiles(const FusedActivation& f, const float* __restrict m, int64_t points,
                                                float bias, float* __restrict out, int64_t pitch, int64_t count) {
    constexpr int64_t M = F::M, N = F::N;
    for (int64_t t = 0; t < count; t += kGroup) {
        float s[N][kGroup], h[M * N][kGroup], y[M * M][kGroup];
        for (int64_t i = 0; i < N; ++i) {  // row i of points: h[b * N + i], its output column b
#pragma GCC unroll 16
            for (int64_t j = 0; j < N; ++j)
                for (int64_t l = 0; l < kGroup; ++l) s[j][l] = m[(i * N + j) * points + t + l];
            for (int64_t l = 0; l < kGroup; ++l) F::output_1d(&s[0][l], kGroup, &h[i][l], N * kGroup);
        }
        for (int64_t b = 0; b < M; ++b)  // output column b: y[a * M + b], its rows a
            for (int64_t l = 0; l < kGroup; ++l) F::output_1d(&h[b * N][l], kGroup, &y[b][l], M * kGroup);
        // the outputs into their rows, a loop apart (within the columns' loop GCC stored F(2, 5)'s lane by lane)
        for (int64_t a = 0; a < M; ++a)
            for (int64_t l = 0; l < kGroup; ++l)
#pragma GCC unroll 16
                for (int64_t b = 0; b < M; ++b)
                    out[a * pitch + M * (t + l) + b] = activate<A>(f, y[a * M + b][l] + bias);
    }
}

// A block's tiles [t0, t0 + count), counted over rows of `row` tiles (WinogradPlan::row: each row's tiles and the
// `reach` more whose reads run into the next row's and whose outputs are dropped, as the direct kernel's positions
// run over padded rows), so that the transforms take a block's tiles 16 at a time whatever the image's width; each step
// takes the block over all the channels, so that its bookkeeping and calls are a block's, not a block's a channel.
struct Tiles {
    int64_t t0, count, row;
    int64_t first_row() const { return t0 / row; }
    int64_t end_row() const { return (t0 + count - 1) / row + 1; }
};

// The input transform of a block, each input channel's rows that the block reads copied into `padded` (`width`
// floats a row, column x at x + pad; its padding, rows and columns, stays zero, as it starts), split by phases into
// ph (N x M rows of `pitch`, each the block's tile rows one after the other), then transformed into v (point k of
// channel c at v[k * points + c * channel]). The split takes kGroup entries of each phase at a time: short rows'
// phases split column by column within their bounds took three times as long as the transform itself (F(4x4, 3x3),
// 64 -> 64 of 56x56), and a row split just after its copy waited for the copy's stores.
template <class F>
DML_VECTOR_CLONES void input_block(const ConvGeometry& g, const float* image, const Tiles& r, float* __restrict ph,
                                   int64_t pitch, float* __restrict padded, int64_t width, float* __restrict v,
                                   int64_t channel, int64_t points) {
    constexpr int64_t M = F::M, N = F::N, reach = Plan::reach(M, F::R);
    const int64_t xs = g.x_stride[4], y0 = r.first_row(), y1 = r.end_row();
    // the block's input rows [top, top + rows), those in the image [r0, r1)
    const int64_t top = M * y0 - g.pad[1], rows = M * (y1 - y0) + N - M;
    const int64_t r0 = std::max(top, int64_t(0)), r1 = std::min(top + rows, g.in[1]);
    std::fill(padded, padded + rows * width, 0.0f);
    for (int64_t c = 0; c < g.in_channels; ++c) {
        const float* plane = image + c * g.x_stride[1];
        for (int64_t iy = r0; iy < r1; ++iy) {
            const float* src = plane + iy * g.x_stride[3];
            float* dst = padded + (iy - top) * width + g.pad[2];
            if (xs == 1)
                std::copy(src, src + g.in[2], dst);
            else
                for (int64_t x = 0; x < g.in[2]; ++x) dst[x] = src[x * xs];
        }
        for (int64_t ty = y0; ty < y1; ++ty) {
            // the entries the block's tiles of this row read: theirs and the `reach` next ones; the last group's
            // past them land in the next tile row's, written after, or in the pitch's slack
            const int64_t first = std::max(r.t0 - ty * r.row, int64_t(0));
            const int64_t last = std::min(r.t0 + r.count - ty * r.row + reach, r.row);
            for (int64_t i = 0; i < N; ++i) {
                const float* line = padded + (M * (ty - y0) + i) * width;
                float* out = ph + i * M * pitch + (ty - y0) * r.row;
                for (int64_t u = first; u < last; u += kGroup)
                    for (int64_t l = 0; l < kGroup; ++l)
#pragma GCC unroll 16
                        for (int64_t b = 0; b < M; ++b) out[b * pitch + u + l] = line[M * (u + l) + b];
            }
        }
        input_tiles<F>(ph + (r.t0 - y0 * r.row), pitch, v + c * channel, points, r.count);
    }
}

// The output transform of a block, each output channel m from its products (point k at products[k * points + m *
// block]), act(y + bias[m]) through `rows` (M rows of `pitch`, the block's tiles' outputs one after the other) into
// the image's output rows.
template <class F, ActivationFunction A>
DML_VECTOR_CLONES void output_block(const ConvGeometry& g, const FusedActivation& f, const float* __restrict products,
                                    int64_t block, int64_t points, const float* bias, const Tiles& r,
                                    float* __restrict rows, int64_t pitch, float* __restrict image) {
    constexpr int64_t M = F::M;
    const int64_t O = g.out[1] * g.out[2], tiles_x = r.row - Plan::reach(M, F::R);
    for (int64_t m = 0; m < g.out_channels; ++m) {
        output_tiles<F, A>(f, products + m * block, points, bias[m], rows, pitch, r.count);
        for (int64_t ty = r.first_row(); ty < r.end_row(); ++ty) {
            // the block's tiles of this row, and their output columns
            const int64_t a0 = std::max(r.t0, ty * r.row), a1 = std::min(r.t0 + r.count, ty * r.row + tiles_x);
            if (a1 <= a0) continue;
            const int64_t x0 = M * (a0 - ty * r.row), columns = std::min(M * (a1 - a0), g.out[2] - x0);
            for (int64_t a = 0; a < M && M * ty + a < g.out[1]; ++a) {
                const float* src = rows + a * pitch + M * (a0 - r.t0);
                std::copy(src, src + columns, image + m * O + (M * ty + a) * g.out[2] + x0);
            }
        }
    }
}

// The floats of one part: the block's transformed input [points][in_channels][in_channel], its products
// [points][padded_out][block], the phases of `side` padded input rows, `pitch` floats each (the block's tile rows,
// and the lanes the transforms' last group reads and writes past them), `out` output rows of `out` x `pitch` floats,
// and the block's padded input rows, `width` floats each (a tile row's entries and a group's past them, `out` floats
// each).
struct PartLayout {
    int64_t pitch, width, in_channel, in_point, out_point, input, products, rows, out_rows, padded, total;
    PartLayout(const ConvGeometry& g, const Plan& p) {
        const int64_t tile_rows = (p.block + p.row - 1) / p.row + 1;  // the most a block's tiles run over
        pitch = tile_rows * p.row + 2 * kGroup, width = p.out * (p.row + kGroup);
        in_channel = p.block + kGroup;  // a channel's block and the lanes the input transform's last group writes
        // a point's floats a group of lanes (64 bytes) past its channels': room for the lanes the output
        // transform's last group reads, and the transforms' 16 streams of a tile's points would otherwise fall in
        // one set of the first-level cache where a point's size is a power of two times a few kilobytes
        in_point = g.in_channels * in_channel + kGroup, out_point = p.padded_out * p.block + kGroup;
        input = 0;
        products = input + p.points() * in_point;
        rows = products + p.points() * out_point;
        out_rows = rows + p.side() * p.out * pitch;
        padded = out_rows + p.out * p.out * pitch;
        total = padded + (p.out * tile_rows + p.side() - p.out) * width;
    }
};

uint64_t taps_elements(const ConvGeometry& g, const Plan& p) {
    return uint64_t(g.out_channels * g.in_channels * p.taps * p.taps);
}

// Where the parts begin in the workspace: after the transformed filter and its taps, on a cache line.
uint64_t parts_offset(const ConvGeometry& g, const Plan& p) {
    return (p.filter_elements(g) + taps_elements(g, p) + 15) / 16 * 16;
}

template <class F>
void transform_filter(const float* taps, const ConvGeometry& g, const Plan& p, float* dst) {
    constexpr int64_t R = F::R, N = F::N, P = F::P;
    const int64_t C = g.in_channels, mr = p.tile->block_channels;
    std::fill(dst, dst + p.filter_elements(g), 0.0f);
    for (int64_t m = 0; m < g.out_channels; ++m)
        for (int64_t c = 0; c < C; ++c) {
            const float* w = taps + (m * C + c) * R * R;
            double d[R * R], h[N * R], u[P];
            std::copy(w, w + R * R, d);
            for (int64_t j = 0; j < R; ++j) F::filter_1d(d + j, R, h + j, R);  // columns: h[i][j]
            for (int64_t i = 0; i < N; ++i) F::filter_1d(h + i * R, 1, u + i * N, 1);
            // point k: [k][channel block][input channel][mr], the direct kernel's filter of one tap
            for (int64_t k = 0; k < P; ++k)
                dst[((k * (p.padded_out / mr) + m / mr) * C + c) * mr + m % mr] = float(u[k]);
        }
}

template <class F>
void run(const ConvGeometry& g, const Plan& p, const FusedActivation& fused, const float* x, const float* filter,
         const float* bias, float* y, float* workspace, ThreadPool& pool) {
    constexpr int64_t P = F::P;
    const PartLayout L(g, p);
    float* parts = workspace + parts_offset(g, p);
    const int64_t C = g.in_channels, K = g.out_channels, tiles = p.row * p.tiles_y, O = g.out[1] * g.out[2];
    const int64_t groups = (tiles + kGroup - 1) / kGroup;
    const int64_t tap_offset = 0;
    void (*output)(const ConvGeometry&, const FusedActivation&, const float*, int64_t, int64_t, const float*,
                   const Tiles&, float*, int64_t, float*) = nullptr;
    with_activation(fused.function, [&]<ActivationFunction A>() { output = output_block<F, A>; });
    // Block b of image n on part q's workspace.
    auto run_block = [&](int64_t n, int64_t b, float* ws) {
        const int64_t t0 = b * groups / p.blocks * kGroup;
        const int64_t count = std::min((b + 1) * groups / p.blocks * kGroup, tiles) - t0;
        const Tiles r{t0, count, p.row};
        float* v = ws + L.input;
        float* products = ws + L.products;
        float* rows = ws + L.rows;
        float* out_rows = ws + L.out_rows;
        const float* image = x + n * g.x_stride[0];
        input_block<F>(g, image, r, rows, L.pitch, ws + L.padded, L.width, v, L.in_channel, L.in_point);
        // zeros past the block's last tile: the tiles' last vectors read them
        if (count < p.block)
            for (int64_t k = 0; k < P; ++k)
                for (int64_t c = 0; c < C; ++c)
                    std::fill_n(v + k * L.in_point + c * L.in_channel + count, p.block - count, 0.0f);
        // the products: point k's pointwise convolution on the direct kernel's tile
        const int64_t items = p.padded_out / p.tile->block_channels *
                              ((count + p.tile->block_positions - 1) / p.tile->block_positions);
        for (int64_t k = 0; k < P; ++k) {
            DirectConvolution a{v + k * L.in_point, L.in_channel, filter + k * p.padded_out * C, &tap_offset, C, 1,
                                K, 0, count, products + k * L.out_point, p.block};
            p.tile->run(a, 0, size_t(items));
        }
        // the output transform, bias and activation, into the output's rows
        output(g, fused, products, p.block, L.out_point, bias, r, out_rows, p.out * L.pitch, y + n * K * O);
    };
    // Part q runs blocks [q * jobs / threads, ...) of its own, then takes those the other parts have not reached,
    // so that a thread runs the same part of the image from one layer to the next (its input and output still in
    // its cache) unless another falls behind.
    const int64_t jobs = g.batch * p.blocks, threads = std::min<int64_t>({p.parts, int64_t(pool.size()), jobs});
    std::atomic<int64_t> next[kMaxParts];
    for (int64_t q = 0; q < threads; ++q) next[q] = q * jobs / threads;
    pool.parallel_for(size_t(threads), 1, [&](size_t begin, size_t end) {
        for (size_t q = begin; q < end; ++q)
            for (int64_t k = 0; k < threads; ++k) {
                const int64_t r = (int64_t(q) + k) % threads, last = (r + 1) * jobs / threads;
                for (int64_t j = next[r]++; j < last; j = next[r]++)
                    run_block(j / p.blocks, j % p.blocks, parts + q * L.total);
            }
    });
}

// Calls f.operator()<F>() with the transforms of p's filter and tile sizes.
template <class Fn>
void with_transforms(const Plan& p, Fn&& f) {
    if (p.taps == 5) return f.template operator()<F2x5>();
    if (p.out == 4) return f.template operator()<F4x3>();
    f.template operator()<F2x3>();
}

}  // namespace

void winograd_filter(const float* taps, const ConvGeometry& g, const WinogradPlan& p, float* dst) {
    with_transforms(p, [&]<class F>() { transform_filter<F>(taps, g, p, dst); });
}

void run_winograd(const ConvGeometry& g, const WinogradPlan& p, const FusedActivation& fused, const float* x,
                  const float* filter, const float* bias, float* y, float* workspace, ThreadPool& pool) {
    with_transforms(p, [&]<class F>() { run<F>(g, p, fused, x, filter, bias, y, workspace, pool); });
}

WinogradPlan::WinogradPlan(const ConvGeometry& g, bool float32, int64_t (*outputs)(const ConvGeometry&)) {
    const DirectKernel* k = direct_kernel();
    const bool eligible = k && float32 && g.forward && g.groups == 1 && g.in[0] == 1 && g.kernel[0] == 1 &&
                          (g.kernel[1] == 3 || g.kernel[1] == 5) && g.kernel[2] == g.kernel[1] && g.stride[1] == 1 &&
                          g.stride[2] == 1 && g.dilation[1] == 1 && g.dilation[2] == 1 && g.out[0] == 1 &&
                          g.out[1] > 0 && g.out[2] > 0;
    if (!eligible) return;
    const int64_t m = outputs(g);
    if (m != 2 && !(m == 4 && g.kernel[1] == 3)) return;
    out = m;
    // The products' tile: one whose position block divides a group of kGroup tiles, where the kernel has one, so that
    // every block (whole groups) runs whole register tiles rather than a last one of fewer vectors. AVX2's 6 x 2
    // (its 4 x 3 ran blocks of 16 tiles as 4 x 2, whose chains of sums wait on the multiply-add's latency): on a
    // 2-core AMD EPYC, squeezenet's 3x3 layers 14-21 % faster on one thread and two (bench/README.md).
    tile = k->least_padding(g.out_channels,
                            [](const DirectTile& t) { return !t.lanes && kGroup % t.block_positions == 0; });
    if (!tile) tile = &k->tile_for(g.out_channels, false);
    padded_out = tile->padded(g.out_channels);
    taps = g.kernel[1];
    tiles_x = (g.out[2] + out - 1) / out, tiles_y = (g.out[1] + out - 1) / out, row = tiles_x + reach(out, taps);
    // a block's input and products in half the second-level cache, in whole position blocks of the tile
    const int64_t budget = int64_t(std::clamp<size_t>(platform::second_level_cache_bytes(), 256 << 10, 4 << 20)) / 2;
    const int64_t bp = tile->block_positions, tiles = row * tiles_y;
    const int64_t fit = budget / int64_t(sizeof(float) * points() * (g.in_channels + padded_out)) / bp * bp;
    parts = int64_t(std::clamp<size_t>(platform::usable_cpu_count(), 1, kMaxParts));
    // as many blocks as fit, rounded up to a multiple of the parts where the groups allow, so that the threads
    // end together: 13x13's 56 tiles as one block of 48 and one of 8 kept one thread twice as long as the other
    const int64_t groups = (tiles + kGroup - 1) / kGroup;
    blocks = std::min(groups, ((tiles + std::max(fit, bp) - 1) / std::max(fit, bp) + parts - 1) / parts * parts);
    block = ((groups + blocks - 1) / blocks * kGroup + bp - 1) / bp * bp;
}

uint64_t WinogradPlan::workspace_elements(const ConvGeometry& g) const {
    return parts_offset(g, *this) + uint64_t(parts * PartLayout(g, *this).total);
}

}  // namespace dml::cpu
