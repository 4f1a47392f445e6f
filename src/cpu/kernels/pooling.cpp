// CPU kernels of the pooling family: average and max pooling (with indices), ROI align and its gradient.
#include "../../core/ops/pooling.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#if defined(DML_X86_DISPATCH) && defined(__linux__)
#include <immintrin.h>
#endif

#include "../../executor/pooling_math.h"
#include "isa.h"
#include "kernel.h"
#include "strided.h"
#include "vector_math.h"

namespace dml::cpu {

namespace {

// ---- sliding-window pooling -----------------------------------------------------------------------------------

// One spatial dimension of a window: for each output position, the input coordinate of its first tap inside the
// input and how many of its taps fall inside (they are consecutive, a dilation apart), and how many fall inside
// the padded input.
struct AxisWindows {
    std::vector<int64_t> first, inside, padded;
    int64_t dilation, most = 0;  // the largest `inside`

    explicit AxisWindows(const PoolAxis& a)
        : first(a.out, 0), inside(a.out, 0), padded(a.out, 0), dilation(a.dilation) {
        for (int64_t o = 0; o < a.out; ++o) {
            for (int64_t j = 0; j < a.size; ++j)
                if (const int64_t i = a.at(o, j); a.inside(i) && inside[o]++ == 0) first[o] = i;
            padded[o] = a.padded_taps(o);
            most = std::max(most, inside[o]);
        }
    }
};

// Output positions a row of output is taken in at a time: their running results stay in the first-level cache.
constexpr int64_t kPoolChunk = 256;

// Calls f(out_index, count, base, plane_index, input_rows, x, ox) for every chunk of `count` consecutive outputs
// from ox along one output row, with input_rows(visit) calling visit(row_offset, row_index) for each input row
// (depth, height) the chunk's windows reach, depth-major as DirectML scans a window: row_offset is the row's
// first element through the input's strides from `base`, row_index its packed index from the plane's first.
template <class F>
void for_each_window_row(const KernelArgs& args, const PoolingWindow& w, F&& f) {
    const TensorDesc &x = *args.inputs[0].desc, &y = *args.outputs[0].desc;
    const PoolAxes g = pool_axes(w, x, y);
    const Strides st = x.effective_strides();
    const AxisWindows axes[3] = {AxisWindows(g.axis[0]), AxisWindows(g.axis[1]), AxisWindows(g.axis[2])};
    const int64_t channels = x.sizes[1], spatial = g.plane_size();
    const int64_t out[3] = {g.axis[0].out, g.axis[1].out, g.axis[2].out};
    const uint64_t rows = uint64_t(x.sizes[0]) * channels * out[0] * out[1];
    args.pool.parallel_for(rows, std::max<uint64_t>(1, 256 / out[2]), [&](size_t b, size_t e) {
        for (size_t r = b; r < e; ++r) {
            const int64_t oy = r % out[1], oz = (r / out[1]) % out[0], nc = r / (out[1] * out[0]);
            const int64_t n = nc / channels, c = nc % channels;
            const int64_t base = n * int64_t(st[0]) + c * int64_t(st[1]);
            auto input_rows = [&](auto&& visit) {
                for (int64_t i = 0; i < axes[0].inside[oz]; ++i) {
                    const int64_t z = axes[0].first[oz] + i * axes[0].dilation;
                    for (int64_t j = 0; j < axes[1].inside[oy]; ++j) {
                        const int64_t yy = axes[1].first[oy] + j * axes[1].dilation;
                        visit(g.offset(z, yy, 0), g.index(z, yy, 0));
                    }
                }
            };
            const int64_t counted_zy = axes[0].padded[oz] * axes[1].padded[oy];
            const int64_t inside_zy = axes[0].inside[oz] * axes[1].inside[oy];
            for (int64_t ox = 0; ox < out[2]; ox += kPoolChunk)
                f(int64_t(r) * out[2] + ox, std::min(kPoolChunk, out[2] - ox), base, nc * spatial, input_rows,
                  axes[2], ox, counted_zy, inside_zy);
        }
    });
}

// The sum of p[0, n) in double, in eight chains of additions (one chain would wait on each addition), a vector of
// them where the processor has one.
template <class T>
DML_VECTOR_CLONES double run_sum(const T* p, int64_t n) {
    double lanes[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) lanes[l] += double(compute_t<T>(p[i + l]));
    for (; i < n; ++i) lanes[0] += double(compute_t<T>(p[i]));
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

#if defined(DML_X86_DISPATCH) && defined(__linux__)
// The sum of a float plane p[0, n) in double with AVX-512: 8 floats a load (the last ones masked, no scalar tail),
// widened into two chains of 8 doubles. run_sum's vectorized loop, one chain that waits on each addition, took a
// plane of 169 floats in about 90 cycles on a 2-core Xeon, this one in 60 (squeezenet's global pool of 1000
// planes 30.7-31.8 -> 20.1-21.0 us, with the divisions below; bench/README.md).
__attribute__((target("arch=x86-64-v4"))) double plane_sum_avx512(const float* p, int64_t n) {
    __m512d low = _mm512_setzero_pd(), high = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask8 first = __mmask8(first_lanes(n - i)), second = __mmask8(first_lanes(n - i - 8));
        low = _mm512_add_pd(_mm512_cvtps_pd(_mm256_maskz_loadu_ps(first, p + i)), low);
        high = _mm512_add_pd(_mm512_cvtps_pd(_mm256_maskz_loadu_ps(second, p + i + 8)), high);
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(low, high));
}
#endif

// The sum of a packed plane for this processor: plane_sum_avx512 for float where it has AVX-512, else run_sum.
template <class T>
double (*plane_sum_for())(const T*, int64_t) {
#if defined(DML_X86_DISPATCH) && defined(__linux__)
    if constexpr (std::is_same_v<T, float>)
        if (cpu_isa() == Isa::Avx512) return plane_sum_avx512;
#endif
    return run_sum<T>;
}

// Whether each window is a whole packed channel plane (a global pool): one output a plane, every tap inside.
bool global_over_packed_planes(const PoolAxes& g) {
    int64_t packed = 1;
    for (int d = 2; d >= 0; --d) {
        const PoolAxis& a = g.axis[d];
        if (a.out != 1 || a.size != a.in || a.dilation != 1 || a.start != 0 || (a.in > 1 && a.in_stride != packed))
            return false;
        packed *= a.in;
    }
    return true;
}

template <class T>
void run_average_pooling_typed(const KernelArgs& args) {
    const auto& d = args.desc<AveragePoolingDesc>();
    const T* in = args.inputs[0].as<T>();
    T* out = args.outputs[0].as<T>();
    if (const PoolAxes g = pool_axes(d.window, *args.inputs[0].desc, *args.outputs[0].desc);
        global_over_packed_planes(g)) {  // a sum a plane, not one a row (squeezenet's 13x13 planes: 4x faster)
        const Strides st = args.inputs[0].desc->effective_strides();
        const int64_t channels = args.inputs[0].desc->sizes[1], n = g.plane_size();
        double (*const plane_sum)(const T*, int64_t) = plane_sum_for<T>();
        args.pool.parallel_for(uint64_t(args.inputs[0].desc->sizes[0]) * channels, 64, [&](size_t b, size_t e) {
            // the image and channel stepped from plane to plane, not divided (two 64-bit divisions a plane)
            for (int64_t p = int64_t(b), image = p / channels, c = p % channels; p < int64_t(e); ++p, ++c) {
                if (c == channels) c = 0, ++image;
                out[p] = T(compute_t<T>(plane_sum(in + image * int64_t(st[0]) + c * int64_t(st[1]), n) / double(n)));
            }
        });
        return;
    }
    const int64_t sx = int64_t(args.inputs[0].desc->effective_strides().back());
    for_each_window_row(args, d.window, [&](int64_t o, int64_t count, int64_t base, int64_t, auto&& input_rows,
                                            const AxisWindows& x, int64_t ox0, int64_t counted_zy, int64_t inside_zy) {
        double sum[kPoolChunk] = {};
        const bool contiguous = sx == 1 && x.dilation == 1;
        input_rows([&](int64_t offset, int64_t) {
            const T* row = in + base + offset;
            for (int64_t k = 0; k < count; ++k) {
                const int64_t ox = ox0 + k;
                if (contiguous) {
                    sum[k] += run_sum(row + x.first[ox], x.inside[ox]);
                    continue;
                }
                for (int64_t t = 0; t < x.inside[ox]; ++t)
                    sum[k] += double(compute_t<T>(row[(x.first[ox] + t * x.dilation) * sx]));
            }
        });
        for (int64_t k = 0; k < count; ++k) {
            // The builder guarantees a non-zero divisor.
            const int64_t ox = ox0 + k;
            const int64_t divisor = d.include_padding ? counted_zy * x.padded[ox] : inside_zy * x.inside[ox];
            out[o + k] = T(compute_t<T>(sum[k] / double(divisor)));
        }
    });
}

// Max pooling that also reports where each maximum lies (its packed index in the input): the first maximum in
// scan order wins a tie; padding never does (it is -infinity). The builder guarantees at least one input tap.
// Each window starts at its first tap, which revisited replaces nothing.
template <class T, class Rows>
void max_with_indices(const T* in, T* out, const TensorArg& indices, int64_t o, int64_t count, int64_t base,
                      int64_t plane_index, Rows&& input_rows, const AxisWindows& x, int64_t ox0, int64_t sx) {
    using C = compute_t<T>;
    C best[kPoolChunk];
    int64_t best_index[kPoolChunk];
    bool first_row = true;
    input_rows([&](int64_t offset, int64_t index) {
        const T* row = in + base + offset;
        for (int64_t k = 0; k < count; ++k) {
            const int64_t ox = ox0 + k;
            if (first_row) best[k] = C(row[x.first[ox] * sx]), best_index[k] = index + x.first[ox];
            for (int64_t t = 0; t < x.inside[ox]; ++t) {
                const int64_t xx = x.first[ox] + t * x.dilation;
                const C v = C(row[xx * sx]);
                if (replaces_extreme(v, best[k], true)) best[k] = v, best_index[k] = index + xx;
            }
        }
        first_row = false;
    });
    for (int64_t k = 0; k < count; ++k) {
        out[o + k] = T(best[k]);
        const int64_t i = plane_index + best_index[k];
        if (indices.desc->data_type == DataType::UInt64) indices.as<uint64_t>()[o + k] = uint64_t(i);
        else indices.as<uint32_t>()[o + k] = uint32_t(i);
    }
}

// Vectors of 8 float lanes (GCC / Clang vector extensions: one AVX register, two SSE ones) for the builds without
// AVX-512, which has a kernel of its own (masked loads; GCC 12 turns the select of a vector wider than the build's
// registers into scalar code, so 16 lanes of these ran 15x slower on AVX2).
using Floats8 = float __attribute__((vector_size(32)));

// v = the floats p[0], p[S], ..., p[7 * S], for a stride of 1 or 2, reading no further than p[7 * S] (the second
// load of a stride-2 deinterleave starts at p[7] so that it ends there). Through a reference, not returned: a
// vector returned by value changes the ABI between the builds.
template <int64_t S>
[[gnu::always_inline]] inline void load_strided(const float* p, Floats8& v) {
    std::memcpy(&v, p, sizeof v);
    if constexpr (S == 2) {
        Floats8 b;
        std::memcpy(&b, p + 7, sizeof b);
        v = __builtin_shufflevector(v, b, 0, 2, 4, 6, 9, 11, 13, 15);
    }
}

// Output rows that the vector kernels take in one call: `out_rows` consecutive rows of one channel plane (at one
// output depth), n outputs each, output k of row i at best[i * best_step + k]. Its windows' taps inside the input
// are those of the input rows rows[r] + i * row_step (r < count), at first + k * S + t * dilation (t < taps), S the
// pool's stride (1 or 2).
struct MaxRun {
    float* best;
    const float* const* rows;
    int64_t best_step, count, row_step, out_rows, n, taps, dilation, first;
    float lowest;
};

// Blocks of V vectors of output row i. Each input row's taps are a chain of maxima, and the rows' results another,
// both in scan order: the same first largest as one chain over all the taps, and a shorter wait on the latency.
template <int64_t S, int V>
[[gnu::always_inline]] inline void max_blocks(const MaxRun& w, int64_t i) {
    constexpr int64_t L = 8 * V;
    for (int64_t k0 = 0; k0 < w.n; k0 += L) {
        const int64_t k = std::min(k0, w.n - L);
        Floats8 m[V];
        for (Floats8& v : m) v = Floats8{} + w.lowest;  // in every lane
        for (int64_t r = 0; r < w.count; ++r) {
            const float* p = w.rows[r] + i * w.row_step + w.first + k * S;
            Floats8 h[V];
            for (Floats8& v : h) v = Floats8{} + w.lowest;
            for (int64_t t = 0; t < w.taps; ++t)
                for (int j = 0; j < V; ++j) {
                    Floats8 v;
                    load_strided<S>(p + t * w.dilation + 8 * j * S, v);
                    h[j] = v > h[j] ? v : h[j];
                }
            for (int j = 0; j < V; ++j) m[j] = h[j] > m[j] ? h[j] : m[j];
        }
        std::memcpy(w.best + i * w.best_step + k, m, sizeof m);
    }
}

// The outputs of a run (n >= 8): each the first largest (the scan's rule, in its order: rows, then taps; NaN never)
// of `lowest` and its window's taps. Returns whether any is `lowest` (NaN taps to look at). In blocks of 16
// outputs (8 in a row of fewer than 16); the last block overlaps the one before it when n is not a multiple of the
// block, which is harmless: its outputs are computed again alike.
template <int64_t S>
DML_VECTOR_CLONES bool max_windows(const MaxRun& w) {
    int lowest_left = 0;
    for (int64_t i = 0; i < w.out_rows; ++i) {
        if (w.n >= 16) max_blocks<S, 2>(w, i);
        else max_blocks<S, 1>(w, i);
        const float* best = w.best + i * w.best_step;
        for (int64_t k = 0; k < w.n; ++k) lowest_left |= best[k] == w.lowest;
    }
    return lowest_left;
}

#if defined(DML_X86_DISPATCH) && defined(__linux__)
// The floats of a block's taps that a masked load reads from p + 16 * j (j < 3): the first `extent - 16 * j` of
// them, `extent` being the floats from p that the row's windows read.
struct BlockLanes {
    __mmask16 lanes[3];
};

// The running maximum h of one input row's taps for a block of 16 outputs, p its first tap. Taps > 0: that many
// taps, a dilation of 1, at stride 2 all from one deinterleaved pair of loads (taps 0 and 1: its even and odd
// lanes; tap 2: the even lanes moved by one, with the float after them); Taps = 0: w.taps taps w.dilation apart,
// loaded each. An unaligned load of 16 floats spans two cache lines, so that fewer loads matter: squeezenet's 3x3
// stride-2 windows in a microbenchmark took 17-23 cycles a block against 23-28 with a pair of loads a tap, and 46-52
// with a loop over a runtime tap count (bench/README.md).
template <int64_t S, int Taps>
[[gnu::always_inline]] __attribute__((target("arch=x86-64-v4"))) inline __m512 row_max(const float* p,
                                                                                     const BlockLanes& l,
                                                                                     int64_t extent,
                                                                                     const MaxRun& w,
                                                                                     __m512 h) {
    if constexpr (Taps == 0) {  // a pair of masked loads (one at stride 1) a tap
        const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        for (int64_t t = 0, o = 0; t < w.taps; ++t, o += w.dilation) {
            __m512 v = _mm512_maskz_loadu_ps(first_lanes(extent - o), p + o);
            if constexpr (S == 2)
                v = _mm512_permutex2var_ps(v, evens, _mm512_maskz_loadu_ps(first_lanes(extent - o - 16), p + o + 16));
            h = _mm512_max_ps(v, h);  // v > h ? v : h
        }
        return h;
    } else if constexpr (S == 1) {
        for (int t = 0; t < Taps; ++t) h = _mm512_max_ps(_mm512_maskz_loadu_ps(first_lanes(extent - t), p + t), h);
        return h;
    } else {
        const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        const __m512 a = _mm512_maskz_loadu_ps(l.lanes[0], p), b = _mm512_maskz_loadu_ps(l.lanes[1], p + 16);
        const __m512 even = _mm512_permutex2var_ps(a, evens, b);
        h = _mm512_max_ps(even, h);
        if constexpr (Taps >= 2)
            h = _mm512_max_ps(_mm512_permutex2var_ps(a, _mm512_add_epi32(evens, _mm512_set1_epi32(1)), b), h);
        if constexpr (Taps >= 3) {
            const __m512i next = _mm512_castps_si512(_mm512_maskz_loadu_ps(l.lanes[2], p + 32));
            h = _mm512_max_ps(_mm512_castsi512_ps(_mm512_alignr_epi32(next, _mm512_castps_si512(even), 1)), h);
        }
        return h;
    }
}

// Blocks of a row whose last input row's maxima max_windows_avx512 keeps for the next output row.
constexpr int64_t kCarriedBlocks = 4;

// max_windows with AVX-512: a row's outputs in vectors of 16, the last one masked (no overlap, and a row of 8 to 16
// outputs in one vector). Each input row's taps are a chain of maxima (row_max), and the rows' results another.
// Where an output row's last input row is the next one's first (3x3 windows of stride 2, 2x2 of stride 1), rows
// of up to kCarriedBlocks blocks keep its maxima for the next output row, which reads one input row fewer
// (squeezenet's pools of 27x27 and 13x13 planes 70-75 -> 66-67 and 37-39 -> 33-34 us).
// Squeezenet's three pools (3x3 of stride 2 over 64 planes of 111x111, 128 of 55x55, 256 of 27x27) on a 2-core
// Xeon, one thread: 212-255, 126-149, 95-102 us -> 130-160, 65-79, 34-42 us (bench/README.md).
template <int64_t S, int Taps>
__attribute__((target("arch=x86-64-v4"))) bool max_windows_avx512(const MaxRun& run) {
    const MaxRun w = run;  // in registers: the compiler cannot tell that the stores leave it alone
    const __m512 lowest = _mm512_set1_ps(w.lowest);
    const int64_t extent = (w.n - 1) * S + (w.taps - 1) * w.dilation + 1;  // the floats a row's windows read
    const bool shared = w.count > 1 && w.n <= 16 * kCarriedBlocks && w.rows[w.count - 1] == w.rows[0] + w.row_step;
    __m512 carried[kCarriedBlocks];
    __mmask16 lowest_left = 0;
    for (int64_t i = 0; i < w.out_rows; ++i)
        for (int64_t k = 0; k < w.n; k += 16) {
            const int64_t left = extent - k * S;
            const BlockLanes l{{first_lanes(left), first_lanes(left - 16), first_lanes(left - 32)}};
            __m512 m = lowest, h = lowest;
            for (int64_t r = 0; r < w.count; ++r) {
                const float* p = w.rows[r] + i * w.row_step + w.first + k * S;
                h = r == 0 && shared && i > 0 ? carried[k / 16] : row_max<S, Taps>(p, l, left, w, lowest);
                m = _mm512_max_ps(h, m);
            }
            if (shared) carried[k / 16] = h;
            const __mmask16 out = first_lanes(w.n - k);
            _mm512_mask_storeu_ps(w.best + i * w.best_step + k, out, m);
            lowest_left |= _mm512_mask_cmpeq_ps_mask(out, m, lowest);
        }
    return lowest_left != 0;
}

// row_max for AVX2, Taps (2 or 3) taps of dilation 1 for a block of 8 outputs, p its first tap, reading no float past
// the block's last tap. At stride 2 the lanes hold outputs 0, 1, 4, 5, 2, 3, 6, 7 (what one shuffle of two loads
// gives for every tap; max_windows_avx2 puts them in order once, before the store).
template <int64_t S, int Taps>
[[gnu::always_inline]] __attribute__((target("arch=x86-64-v3"))) inline __m256 row_max_avx2(const float* p, __m256 h) {
    if constexpr (S == 1) {
        for (int t = 0; t < Taps; ++t) h = _mm256_max_ps(_mm256_loadu_ps(p + t), h);  // v > h ? v : h
    } else {
        const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
        h = _mm256_max_ps(_mm256_shuffle_ps(a, b, 0x88), h);  // p[0], p[2], p[8], p[10] | p[4], p[6], p[12], p[14]
        if constexpr (Taps >= 2) h = _mm256_max_ps(_mm256_shuffle_ps(a, b, 0xDD), h);  // the odd floats alike
        if constexpr (Taps >= 3)  // p[2], p[4], p[10], p[12] | p[6], p[8], p[14], p[16]
            h = _mm256_max_ps(_mm256_shuffle_ps(_mm256_loadu_ps(p + 2), _mm256_loadu_ps(p + 9), 0xD8), h);
    }
    return h;
}

// max_windows_avx512's scheme with AVX2's vectors of 8 outputs: the last block of a row overlaps the one before it
// (no masked loads), and rows of up to 2 * kCarriedBlocks blocks keep their last input row's maxima. Squeezenet's
// three pools on a 2-core AMD EPYC, one thread, in the network: 703, 361 and 218 us by the generic max_windows, 280,
// 106 and 63 by this one; ONNX Runtime's 241-256, 74-84 and 43-50 (bench/README.md).
template <int64_t S, int Taps>
__attribute__((target("arch=x86-64-v3"))) bool max_windows_avx2(const MaxRun& run) {
    const MaxRun w = run;  // in registers: the compiler cannot tell that the stores leave it alone
    const __m256 lowest = _mm256_set1_ps(w.lowest);
    const bool shared = w.count > 1 && w.n <= 16 * kCarriedBlocks && w.rows[w.count - 1] == w.rows[0] + w.row_step;
    __m256 carried[2 * kCarriedBlocks], lowest_left = _mm256_setzero_ps();
    for (int64_t i = 0; i < w.out_rows; ++i)
        for (int64_t k0 = 0, block = 0; k0 < w.n; k0 += 8, ++block) {
            const int64_t k = std::min(k0, w.n - 8);
            __m256 m = lowest, h = lowest;
            for (int64_t r = 0; r < w.count; ++r) {
                const float* p = w.rows[r] + i * w.row_step + w.first + k * S;
                h = r == 0 && shared && i > 0 ? carried[block] : row_max_avx2<S, Taps>(p, lowest);
                m = _mm256_max_ps(h, m);
            }
            if (shared) carried[block] = h;
            if constexpr (S == 2) m = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xD8));
            _mm256_storeu_ps(w.best + i * w.best_step + k, m);
            lowest_left = _mm256_or_ps(_mm256_cmp_ps(m, lowest, _CMP_EQ_OQ), lowest_left);
        }
    return _mm256_movemask_ps(lowest_left) != 0;
}
#endif

// The max_windows for this processor and run: stride 1 or 2, and with AVX-512 or AVX2 a version for 2 and 3 taps of
// dilation 1.
bool (*max_windows_for(const MaxRun& w, int64_t stride))(const MaxRun&) {
#if defined(DML_X86_DISPATCH) && defined(__linux__)
    const int taps = w.dilation == 1 && (w.taps == 2 || w.taps == 3) ? int(w.taps) : 0;
    if (cpu_isa() == Isa::Avx512) {
        constexpr bool (*kernels[2][3])(const MaxRun&) = {
            {max_windows_avx512<1, 0>, max_windows_avx512<1, 2>, max_windows_avx512<1, 3>},
            {max_windows_avx512<2, 0>, max_windows_avx512<2, 2>, max_windows_avx512<2, 3>}};
        return kernels[stride - 1][taps ? taps - 1 : 0];
    }
    if (cpu_isa() == Isa::Avx2 && taps) {
        constexpr bool (*kernels[2][2])(const MaxRun&) = {{max_windows_avx2<1, 2>, max_windows_avx2<1, 3>},
                                                           {max_windows_avx2<2, 2>, max_windows_avx2<2, 3>}};
        return kernels[stride - 1][taps - 2];
    }
#endif
    return stride == 1 ? max_windows<1> : max_windows<2>;
}

// The output positions [lo, hi) of an axis whose windows lie wholly inside the input.
std::pair<int64_t, int64_t> interior(const PoolAxis& a) {
    const int64_t reach = (a.size - 1) * a.dilation, last = a.in - 1 - reach + a.start;
    const int64_t lo = std::min(a.out, (a.start + a.stride - 1) / a.stride);
    return {lo, std::clamp<int64_t>(last < 0 ? 0 : last / a.stride + 1, lo, a.out)};
}

// A max pool of fewer taps runs on one thread: waking a worker and meeting it cost more than the work saves. On a
// 2-core Xeon, two threads, mnist (whose pools have 6K and 2K taps) ran in 0.032-0.034 ms a dispatch against
// 0.039-0.060 ms with them parallel (four runs each way, alternately).
constexpr uint64_t kAloneTaps = uint64_t(1) << 16;

// Output rows of one channel plane a work item: enough outputs that the row's set-up is a small part of it.
constexpr int64_t kPoolBandOutputs = 2048;

// Max pooling without indices: the largest number of each window, the first in scan order on a tie (-0 before
// 0), NaN only when every tap is. A work item is a band of output rows of one channel plane at one output depth,
// taken in runs: the rows whose windows reach every input row they could (consecutive rows a stride apart) in one,
// each other row alone. The columns whose windows lie inside a packed float row run in vectors (max_windows), the
// others tap by tap through tap_offsets.
template <class T>
void max_pool_values(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<MaxPoolingDesc>();
    const TensorDesc &xd = *args.inputs[0].desc, &yd = *args.outputs[0].desc;
    const PoolAxes g = pool_axes(d.window, xd, yd);
    const Strides st = xd.effective_strides();
    const T* in = args.inputs[0].as<T>();
    T* out = args.outputs[0].as<T>();
    const C lowest = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                          : std::numeric_limits<C>::lowest();
    const PoolAxis& axis = g.axis[2];
    const AxisWindows z_axis(g.axis[0]), y_axis(g.axis[1]), x_axis(axis);
    const int64_t width = axis.out, sx = axis.in_stride, out_rows = g.axis[1].out, depth = g.axis[0].out;
    // Tap t of output column ox reads the input row at tap_offsets[t * width + ox]; a window with fewer taps inside
    // the input than the longest revisits its last one, which changes nothing.
    std::vector<int64_t> tap_offsets(x_axis.most * width);
    for (int64_t t = 0; t < x_axis.most; ++t)
        for (int64_t ox = 0; ox < width; ++ox)
            tap_offsets[t * width + ox] = (x_axis.first[ox] + std::min(t, x_axis.inside[ox] - 1) * x_axis.dilation) * sx;
    // The output columns [inner_lo, inner_hi) whose windows lie wholly inside the input read a packed float row at
    // the pool's stride (1 or 2): strided vector loads instead of gathers through tap_offsets.
    auto [inner_lo, inner_hi] = interior(axis);
    if (!std::is_same_v<T, float> || sx != 1 || axis.stride > 2 || inner_hi - inner_lo < 8) inner_lo = inner_hi = width;
    const bool gathered = inner_hi - inner_lo < width || !std::is_same_v<T, C>;  // columns gathered or converted
    const auto [rows_lo, rows_hi] = interior(g.axis[1]);  // the output rows taken in one run
    const int64_t row_step = g.axis[1].stride * g.axis[1].in_stride;
    const int64_t band = std::clamp<int64_t>(kPoolBandOutputs / width, 1, out_rows);
    const int64_t bands = (out_rows + band - 1) / band, planes = int64_t(xd.sizes[0]) * xd.sizes[1];
    // a pool of few taps runs on the calling thread alone
    const uint64_t items = uint64_t(planes * depth * bands);
    const bool alone = yd.element_count() * x_axis.most * y_axis.most * z_axis.most < kAloneTaps;
    args.pool.parallel_for(items, alone ? items : 1, [&](size_t begin, size_t end) {
        std::vector<C> values(std::is_same_v<T, C> ? 0 : width);
        std::vector<const T*> rows(z_axis.most * y_axis.most);
        // the item's band, output depth and plane, stepped from item to item: a division each cost squeezenet's
        // last pool (256 planes of 13 rows) several microseconds
        const int64_t channels = xd.sizes[1], first_plane = int64_t(begin) / (bands * depth);
        int64_t b = int64_t(begin) % bands, oz = int64_t(begin) / bands % depth;
        int64_t n = first_plane / channels, c = first_plane % channels;
        for (size_t item = begin; item < end; ++item, ++b) {
            if (b == bands) b = 0, ++oz;
            if (oz == depth) oz = 0, ++c;
            if (c == channels) c = 0, ++n;
            const T* plane = in + n * int64_t(st[0]) + c * int64_t(st[1]);
            const int64_t nc = n * channels + c;
            const int64_t band_end = std::min(out_rows, (b + 1) * band);
            for (int64_t oy = b * band, run; oy < band_end; oy += run) {
                run = oy >= rows_lo && oy < rows_hi ? std::min(band_end, rows_hi) - oy : 1;
                int64_t count = 0;
                for (int64_t i = 0; i < z_axis.inside[oz]; ++i)
                    for (int64_t j = 0; j < y_axis.inside[oy]; ++j)
                        rows[count++] = plane + g.offset(z_axis.first[oz] + i * z_axis.dilation,
                                                         y_axis.first[oy] + j * y_axis.dilation, 0);
                T* const first_row = out + ((nc * depth + oz) * out_rows + oy) * width;
                bool lowest_left = false;
                if constexpr (std::is_same_v<T, float>)
                    if (inner_hi > inner_lo) {
                        const MaxRun w{first_row + inner_lo, rows.data(), width, count, row_step, run,
                                       inner_hi - inner_lo, x_axis.most, axis.dilation, tap_offsets[inner_lo], lowest};
                        lowest_left = max_windows_for(w, axis.stride)(w);
                    }
                for (int64_t i = 0; i < run && gathered; ++i) {
                    T* o = first_row + i * width;
                    C* best = std::is_same_v<T, C> ? reinterpret_cast<C*>(o) : values.data();
                    // B outputs from k, each its own chain of maxima in the scan's order (rows, then taps); the
                    // chains of a block overlap instead of each waiting on the one before (mnist, whose 3x3 pool
                    // of stride 3 has rows of 4 outputs, on one thread of a 2-core AMD EPYC: 44.7 -> 41.3 us a
                    // dispatch, one process alternating).
                    auto block = [&]<int64_t B>(int64_t k, std::integral_constant<int64_t, B>) {
                        C m[B];
                        std::fill(m, m + B, lowest);
                        for (int64_t r = 0; r < count; ++r) {
                            const T* row = rows[r] + i * row_step;
                            for (int64_t t = 0; t < x_axis.most; ++t) {
                                const int64_t* offsets = tap_offsets.data() + t * width + k;
                                for (int64_t j = 0; j < B; ++j) {
                                    const C v = C(row[offsets[j]]);
                                    m[j] = v > m[j] ? v : m[j];
                                }
                            }
                        }
                        for (int64_t j = 0; j < B; ++j) best[k + j] = m[j], lowest_left |= m[j] == lowest;
                    };
                    auto gather = [&](int64_t k, int64_t end) {  // in blocks of 8, then 4, 2 and 1
                        for (; k + 8 <= end; k += 8) block(k, std::integral_constant<int64_t, 8>{});
                        if (k + 4 <= end) block(k, std::integral_constant<int64_t, 4>{}), k += 4;
                        if (k + 2 <= end) block(k, std::integral_constant<int64_t, 2>{}), k += 2;
                        if (k < end) block(k, std::integral_constant<int64_t, 1>{});
                    };
                    gather(0, inner_lo);
                    gather(inner_hi, width);
                    if constexpr (!std::is_same_v<T, C>)
                        for (int64_t k = 0; k < width; ++k) o[k] = T(best[k]);
                }
                // -infinity left: every tap was -infinity or NaN; NaN (the first tap's) if none was a number
                if constexpr (std::numeric_limits<C>::has_quiet_NaN)
                    for (int64_t i = 0; lowest_left && i < run; ++i) {
                        T* o = first_row + i * width;
                        for (int64_t k = 0; k < width; ++k) {
                            if (C(o[k]) != lowest) continue;
                            bool number = false;
                            for (int64_t r = 0; r < count; ++r)
                                for (int64_t t = 0; t < x_axis.inside[k]; ++t) {
                                    const C v = C(rows[r][i * row_step + (x_axis.first[k] + t * x_axis.dilation) * sx]);
                                    number |= v == v;
                                }
                            if (!number) o[k] = rows[0][i * row_step + x_axis.first[k] * sx];
                        }
                    }
            }
        }
    });
}

template <class T>
void run_max_pooling_typed(const KernelArgs& args) {
    if (!args.desc<MaxPoolingDesc>().output_indices) return max_pool_values<T>(args);
    const T* in = args.inputs[0].as<T>();
    T* out = args.outputs[0].as<T>();
    const int64_t sx = int64_t(args.inputs[0].desc->effective_strides().back());
    for_each_window_row(args, args.desc<MaxPoolingDesc>().window,
                        [&](int64_t o, int64_t count, int64_t base, int64_t plane_index, auto&& input_rows,
                            const AxisWindows& x, int64_t ox0, int64_t, int64_t) {
                            max_with_indices(in, out, args.outputs[1], o, count, base, plane_index, input_rows, x,
                                             ox0, sx);
                        });
}

// ---- ROI align ------------------------------------------------------------------------------------------------

// Reads what ROI align needs of its operands: the region corners and batch index of each ROI.
struct Regions {
    const TensorArg &roi, &batch;
    int64_t roi_step, coord_step, batch_step;

    Regions(const TensorArg& roi_, const TensorArg& batch_)
        : roi(roi_), batch(batch_), roi_step(int64_t(roi_.desc->effective_strides().end()[-2])),
          coord_step(int64_t(roi_.desc->effective_strides().back())),
          batch_step(int64_t(batch_.desc->effective_strides().back())) {}

    template <class T> double corner(int64_t r, int j) const {
        return double(compute_t<T>(roi.as<T>()[r * roi_step + j * coord_step]));
    }
    uint64_t batch_index(int64_t r) const {
        return batch.desc->data_type == DataType::UInt64 ? batch.as<uint64_t>()[r * batch_step]
                                                          : batch.as<uint32_t>()[r * batch_step];
    }
};

// One channel plane of the input, read through its strides.
template <class T>
struct Plane {
    const T* data;
    int64_t sy, sx;
    double at(int64_t y, int64_t x) const { return double(compute_t<T>(data[y * sy + x * sx])); }
};

template <class T>
void run_roi_align_typed(const KernelArgs& args) {
    const auto& d = args.desc<RoiAlignDesc>();
    const RoiAlignParams& p = d.params;
    const TensorDesc &x = *args.inputs[0].desc, &y = *args.outputs[0].desc;
    const Strides st = x.effective_strides();
    const int64_t batches = x.sizes[0], channels = x.sizes[1], height = x.sizes[2], width = x.sizes[3];
    const int64_t rois = y.sizes[0], oh = y.sizes[2], ow = y.sizes[3];
    Regions regions(args.inputs[1], args.inputs[2]);
    T* out = args.outputs[0].as<T>();
    const double oob = d.out_of_bounds_input_value;
    args.pool.parallel_for(uint64_t(rois) * oh, 1, [&](size_t b, size_t e) {
        for (size_t row = b; row < e; ++row) {
            const int64_t r = row / oh, oy = row % oh;
            const RoiAxis ax(p, regions.corner<T>(r, 0), regions.corner<T>(r, 2), p.spatial_scale_x, ow);
            const RoiAxis ay(p, regions.corner<T>(r, 1), regions.corner<T>(r, 3), p.spatial_scale_y, oh);
            const uint64_t n = regions.batch_index(r);
            for (int64_t c = 0; c < channels; ++c) {
                // A batch index out of range is undefined in DirectML: we read no input and write the
                // out-of-bounds value.
                const bool valid = n < uint64_t(batches);
                const Plane<T> plane{args.inputs[0].as<T>() + (valid ? int64_t(n) * st[0] + c * st[1] : 0),
                                     int64_t(st[2]), int64_t(st[3])};
                for (int64_t ox = 0; ox < ow; ++ox) {
                    const double v = roi_align_value(p, ay, ax, oy, ox, height, width, plane, valid, oob);
                    out[((r * channels + c) * oh + oy) * ow + ox] = T(compute_t<T>(v));
                }
            }
        }
    });
}

// The gradient of ROI align: each output element's gradient flows to the samples it reduced (all of them, weighted
// 1/count, for AVERAGE; the first largest in-bounds one for MAX), then through the interpolation to the input pixels
// (output gradient) and to the sample coordinates, hence the region corners (ROI gradient).
template <class T>
void run_roi_align_grad_typed(const KernelArgs& args) {
    const auto& d = args.desc<RoiAlignGradDesc>();
    const RoiAlignParams& p = d.params;
    const TensorArg &input = args.inputs[0], &dy = args.inputs[1];
    const TensorArg* dx = d.compute_output_gradient ? &args.outputs[0] : nullptr;
    const TensorArg* droi = d.compute_output_roi_gradient ? &args.outputs.back() : nullptr;
    const TensorDesc& image = dx ? *dx->desc : *input.desc;
    const int64_t batches = image.sizes[0], channels = image.sizes[1], height = image.sizes[2], width = image.sizes[3];
    const int64_t rois = dy.desc->sizes[0], oh = dy.desc->sizes[2], ow = dy.desc->sizes[3];
    const Strides gs = dy.desc->effective_strides();
    const Strides is = input ? input.desc->effective_strides() : Strides(4, 0);
    Regions regions(args.inputs[2], args.inputs[3]);

    // Visits, for region r and channel c, every sample that receives gradient: f(plane, sy, sx, iy, ix, gradient).
    auto for_each_contribution = [&](int64_t r, int64_t c, const RoiAxis& ay, const RoiAxis& ax, auto&& f) {
        const uint64_t n = regions.batch_index(r);
        if (n >= uint64_t(batches)) return;  // undefined in DirectML: we touch nothing
        const Plane<T> plane{input ? input.as<T>() + int64_t(n) * is[0] + c * is[1] : nullptr, int64_t(is[2]),
                             int64_t(is[3])};
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
                const double g = double(compute_t<T>(dy.as<T>()[r * gs[0] + c * gs[1] + oy * gs[2] + ox * gs[3]]));
                roi_sample_gradients(p, ay, ax, oy, ox, height, width, plane, g,
                                     [&](const AxisSample& sy, const AxisSample& sx, int64_t iy, int64_t ix,
                                         double w) { f(plane, sy, sx, iy, ix, w); });
            }
    };

    if (dx) {
        // Channels own disjoint planes of the output gradient, so they run in parallel; sums are kept in double.
        std::vector<double> acc(dx->desc->element_count(), 0.0);
        args.pool.parallel_for(uint64_t(channels), 1, [&](size_t b, size_t e) {
            for (size_t c = b; c < e; ++c)
                for (int64_t r = 0; r < rois; ++r) {
                    const RoiAxis ax(p, regions.corner<T>(r, 0), regions.corner<T>(r, 2), p.spatial_scale_x, ow);
                    const RoiAxis ay(p, regions.corner<T>(r, 1), regions.corner<T>(r, 3), p.spatial_scale_y, oh);
                    const uint64_t n = regions.batch_index(r);
                    if (n >= uint64_t(batches)) continue;  // undefined in DirectML: we touch nothing
                    double* plane = acc.data() + (int64_t(n) * channels + int64_t(c)) * height * width;
                    for_each_contribution(r, c, ay, ax, [&](const Plane<T>&, const AxisSample& sy,
                                                            const AxisSample& sx, int64_t, int64_t, double w) {
                        scatter_bilinear(sy, sx, width, w, [&](int64_t at, double v) { plane[at] += v; });
                    });
                }
        });
        std::transform(acc.begin(), acc.end(), dx->as<T>(), [](double v) { return T(compute_t<T>(v)); });
    }
    if (droi) {
        // Regions own their four gradient values (packed [.., rois, 4]), so they run in parallel.
        T* out = droi->as<T>();
        args.pool.parallel_for(uint64_t(rois), 1, [&](size_t b, size_t e) {
            for (size_t r = b; r < e; ++r) {
                const RoiAxis ax(p, regions.corner<T>(r, 0), regions.corner<T>(r, 2), p.spatial_scale_x, ow);
                const RoiAxis ay(p, regions.corner<T>(r, 1), regions.corner<T>(r, 3), p.spatial_scale_y, oh);
                double grad[4] = {0, 0, 0, 0};  // x1, y1, x2, y2
                for (int64_t c = 0; c < channels; ++c)
                    for_each_contribution(r, c, ay, ax, [&](const Plane<T>& plane, const AxisSample&,
                                                            const AxisSample&, int64_t iy, int64_t ix, double w) {
                        add_corner_gradient(ay, ax, iy, ix, height, width, plane, w, grad);
                    });
                for (int j = 0; j < 4; ++j) out[int64_t(r) * 4 + j] = T(compute_t<T>(grad[j]));
            }
        });
    }
}

template <template <class> class K>
void float_kernel(const KernelArgs& args) {
    const DataType t = args.outputs[0].desc->data_type;
    if (t == DataType::Float16) K<half>::run(args);
    else K<float>::run(args);
}

template <class T> struct AveragePooling { static void run(const KernelArgs& a) { run_average_pooling_typed<T>(a); } };
template <class T> struct RoiAlign { static void run(const KernelArgs& a) { run_roi_align_typed<T>(a); } };
template <class T> struct RoiAlignGrad { static void run(const KernelArgs& a) { run_roi_align_grad_typed<T>(a); } };

void run_max_pooling(const KernelArgs& args) {
    visit_data_type(args.inputs[0].desc->data_type, [&]<class T>() { run_max_pooling_typed<T>(args); });
}

}  // namespace

void register_pooling_kernels(KernelTable& t) {
    add_kernel<AveragePoolingDesc>(t, {float_kernel<AveragePooling>});
    add_kernel<MaxPoolingDesc>(t, {run_max_pooling});
    add_kernel<RoiAlignDesc>(t, {float_kernel<RoiAlign>});
    add_kernel<RoiAlignGradDesc>(t, {float_kernel<RoiAlignGrad>});
}

}  // namespace dml::cpu
