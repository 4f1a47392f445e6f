// Iteration over a packed output while reading inputs through arbitrary DirectML strides (zero strides included),
// and map_elements, the element-wise loop over a kernel's operands built on it.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "../../core/tensor_desc.h"
#include "../../executor/strided_layout.h"
#include "../../executor/type_visits.h"
#include "../thread_pool.h"
#include "float16_rows.h"
#include "kernel.h"
#include "vector_math.h"

namespace dml::cpu {

// Calls row(offsets, inner_strides, count) for every row of the loop, spread over the pool. Strides may be
// negative (slices walking backwards).
template <size_t N, class F>
void for_each_row(ThreadPool& pool, const Sizes& shape, const std::array<std::vector<int64_t>, N>& operand_strides,
                  F&& row) {
    StridedLoop<N> loop(shape, operand_strides);
    const uint64_t inner = loop.inner(), rows = loop.rows();
    const auto inner_strides = loop.inner_strides();
    // Few long rows (a packed tensor collapses to one) are cut into pieces, so every thread gets work.
    const uint64_t pieces = std::max<uint64_t>(1, std::min<uint64_t>(inner / 8192, (pool.size() * 4 + rows - 1) / rows));
    const uint64_t piece = (inner + pieces - 1) / pieces;
    const size_t grain = size_t(std::max<uint64_t>(1, 32768 / piece));
    pool.parallel_for(size_t(rows * pieces), grain, [&](size_t begin, size_t end) {
        for (size_t u = begin; u < end; ++u) {
            auto off = loop.row_offsets(u / pieces);
            const uint64_t start = (u % pieces) * piece;
            for (size_t k = 0; k < N; ++k) off[k] += int64_t(start) * inner_strides[k];
            row(off, inner_strides, std::min(piece, inner - start));
        }
    });
}

inline std::vector<int64_t> signed_strides(const Strides& s) { return std::vector<int64_t>(s.begin(), s.end()); }

template <size_t N, class F>
void for_each_row(ThreadPool& pool, const Sizes& shape, const std::array<Strides, N>& operand_strides, F&& row) {
    std::array<std::vector<int64_t>, N> s;
    for (size_t k = 0; k < N; ++k) s[k] = signed_strides(operand_strides[k]);
    for_each_row<N>(pool, shape, s, std::forward<F>(row));
}

// Copies elements of `element_size` bytes from a strided source into a strided destination of the same shape.
// Rows that both sides hold contiguously are memcpy. A short innermost dimension that does not merge with the one
// before it (depth_to_space's block, a join along a short last axis) is walked outside that one, so that rows stay
// long instead of a few elements each.
inline void copy_strided(ThreadPool& pool, Sizes shape, size_t element_size, std::byte* dst,
                         std::vector<int64_t> dst_strides, const std::byte* src, std::vector<int64_t> src_strides) {
    std::vector<size_t> dims;  // those of more than one element
    for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] > 1) dims.push_back(d);
    if (dims.size() >= 2) {
        const size_t a = dims[dims.size() - 2], b = dims.back();
        const bool merges = dst_strides[a] == dst_strides[b] * int64_t(shape[b]) &&
                            src_strides[a] == src_strides[b] * int64_t(shape[b]);
        if (!merges && shape[b] < 16 && shape[a] > shape[b]) {
            std::swap(shape[a], shape[b]);
            std::swap(dst_strides[a], dst_strides[b]);
            std::swap(src_strides[a], src_strides[b]);
        }
    }
    auto copy = [&]<class U>() {
        U* d = reinterpret_cast<U*>(dst);
        const U* s = reinterpret_cast<const U*>(src);
        for_each_row<2>(pool, shape, {std::move(dst_strides), std::move(src_strides)}, [&](auto off, auto st, uint64_t n) {
            if (st[0] == 1 && st[1] == 1) std::memcpy(d + off[0], s + off[1], n * sizeof(U));
            else
                for (uint64_t j = 0; j < n; ++j) d[off[0] + int64_t(j) * st[0]] = s[off[1] + int64_t(j) * st[1]];
        });
    };
    visit_storage(element_size, copy);
}

// v[j] = C(x[j * stride]) for m values (float16 rows widened by F16C where contiguous).
template <class T, class C>
DML_VECTOR_CLONES void load_block(C* v, const T* x, int64_t stride, uint64_t m) {
    if constexpr (std::is_same_v<T, half>)
        if (stride == 1) return widen(x, v, m);
    if (stride == 1)
        for (uint64_t j = 0; j < m; ++j) v[j] = C(x[j]);
    else
        for (uint64_t j = 0; j < m; ++j) v[j] = C(x[int64_t(j) * stride]);
}

namespace detail {
// o[j] = f(x[j * stride]...) along one row; rows whose inputs are all contiguous take a loop the compiler can
// vectorize without checking strides.
template <class Out, class F, class Inputs, size_t... I>
DML_VECTOR_CLONES void map_row(Out* o, uint64_t n, F& f, const Inputs& x, const std::array<int64_t, sizeof...(I)>& stride,
                               std::index_sequence<I...>) {
    if (((stride[I] == 1) && ...))
        for (uint64_t j = 0; j < n; ++j) o[j] = f(std::get<I>(x)[j]...);
    else
        for (uint64_t j = 0; j < n; ++j) o[j] = f(std::get<I>(x)[int64_t(j) * stride[I]]...);
}

template <class Out, class... In, class F, size_t... I>
void map_elements(const KernelArgs& args, F& f, std::index_sequence<I...>) {
    constexpr size_t N = sizeof...(In) + 1;
    const TensorArg& y = args.outputs[0];
    Out* out = y.as<Out>();
    const std::tuple<const In*...> in{args.inputs[I].template as<In>()...};
    for_each_row<N>(args.pool, y.desc->sizes,
                    std::array<Strides, N>{y.desc->effective_strides(), args.inputs[I].desc->effective_strides()...},
                    [&](auto off, auto st, uint64_t n) {
                        // the output is packed: its inner stride is 1
                        map_row(out + off[0], n, f, std::tuple<const In*...>{(std::get<I>(in) + off[I + 1])...},
                                std::array<int64_t, sizeof...(I)>{int64_t(st[I + 1])...}, std::index_sequence<I...>{});
                    });
}

template <class T, size_t>
using Repeat = T;

// o[j] = g(x0[j], x1[j], ...) over float blocks.
template <class G, size_t... I>
DML_VECTOR_CLONES void map_float_block(float* o, uint64_t m, G& g, const std::array<const float*, sizeof...(I)>& x,
                                       std::index_sequence<I...>) {
    for (uint64_t j = 0; j < m; ++j) o[j] = g(x[I][j]...);
}

// map_computed for float16: each row a block at a time, every input's block widened into a float buffer (a
// contiguous one by F16C), g applied there, then `then` on the way into the output (activate_run narrows).
template <class G, size_t... I>
void map_float16(const KernelArgs& args, G& g, const FusedActivation& then, std::index_sequence<I...>) {
    constexpr size_t K = sizeof...(I);
    constexpr uint64_t kBlock = 256;  // K + 1 buffers of it stay in the first-level cache
    const TensorArg& y = args.outputs[0];
    half* out = y.as<half>();
    const std::array<const half*, K> in{args.inputs[I].template as<half>()...};
    const std::array<Strides, K + 1> strides{y.desc->effective_strides(), args.inputs[I].desc->effective_strides()...};
    for_each_row<K + 1>(args.pool, y.desc->sizes, strides, [&](auto off, auto st, uint64_t n) {
        float buffer[K + 1][kBlock];
        for (uint64_t b = 0; b < n; b += kBlock) {
            const uint64_t m = std::min(kBlock, n - b);
            for (size_t k = 0; k < K; ++k) {
                const int64_t stride = int64_t(st[k + 1]);
                load_block(buffer[k], in[k] + off[k + 1] + int64_t(b) * stride, stride, m);
            }
            map_float_block(buffer[K], m, g, {buffer[I]...}, std::index_sequence<I...>{});
            activate_run(then, buffer[K], out + off[0] + b, m);  // the output is packed
        }
    });
}
}  // namespace detail

// out[i] = f(in0[i], in1[i], ...) over the packed output, each input read (as its stored type In) through its
// own strides, zero strides included.
template <class Out, class... In, class F>
void map_elements(const KernelArgs& args, F&& f) {
    detail::map_elements<Out, In...>(args, f, std::index_sequence_for<In...>{});
}

// out[i] = T(then(g(C(in0[i]), ..., C(in{K-1}[i])))) for an output and K inputs of type T, g on T's compute type
// C, `then` a fused activation (floating-point T) or none: as map_elements, except that float16 values are
// converted a block at a time by F16C, where half's own conversions (a dozen instructions each) made a float16
// addition as slow as a float32 one, at half the bytes; and that float16 outputs take `then` in the same pass,
// rounded once (the other types in a second pass over the output, as stored).
template <class T, size_t K, class G>
void map_computed(const KernelArgs& args, G&& g, const FusedActivation& then = {}) {
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, half>) {
        detail::map_float16(args, g, then, std::make_index_sequence<K>{});
    } else {
        [&]<size_t... I>(std::index_sequence<I...>) {
            map_elements<T, detail::Repeat<T, I>...>(args, [&](detail::Repeat<T, I>... x) { return T(g(C(x)...)); });
        }(std::make_index_sequence<K>{});
        if constexpr (std::is_floating_point_v<C>) {
            if (then.is_none()) return;
            T* out = args.outputs[0].as<T>();
            args.pool.parallel_for(size_t(args.outputs[0].desc->element_count()), 32768,
                                   [&](size_t b, size_t e) { activate_run(then, out + b, out + b, e - b); });
        }
    }
}

}  // namespace dml::cpu
