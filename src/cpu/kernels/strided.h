// Iteration over a packed output while reading inputs through arbitrary DirectML strides (zero strides included),
// and map_elements, the element-wise loop over a kernel's operands built on it.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "../../core/tensor_desc.h"
#include "../../executor/type_visits.h"
#include "../thread_pool.h"
#include "kernel.h"
#include "vector_math.h"

namespace dml::cpu {

// The dimensions of an N-operand loop after dropping size-1 dimensions and merging dimensions that every operand
// walks contiguously. Operand 0 is the packed output.
template <size_t N>
struct StridedLoop {
    std::vector<uint64_t> sizes;
    std::array<std::vector<int64_t>, N> strides;

    StridedLoop(const Sizes& shape, const std::array<std::vector<int64_t>, N>& operand_strides) {
        for (size_t d = 0; d < shape.size(); ++d) {
            if (shape[d] == 1) continue;
            bool merge = !sizes.empty();
            for (size_t k = 0; k < N && merge; ++k)
                merge = strides[k].back() == int64_t(operand_strides[k][d]) * int64_t(shape[d]);
            if (merge) {
                // dims (d-1, d) fold into one: outer stride == inner stride * inner size for every operand
                sizes.back() *= shape[d];
                for (size_t k = 0; k < N; ++k) strides[k].back() = operand_strides[k][d];
            } else {
                sizes.push_back(shape[d]);
                for (size_t k = 0; k < N; ++k) strides[k].push_back(operand_strides[k][d]);
            }
        }
        if (sizes.empty()) {
            sizes.push_back(1);
            for (size_t k = 0; k < N; ++k) strides[k].push_back(1);
        }
    }

    uint64_t inner() const { return sizes.back(); }
    uint64_t rows() const {
        uint64_t r = 1;
        for (size_t d = 0; d + 1 < sizes.size(); ++d) r *= sizes[d];
        return r;
    }
    // Element offsets of row `row`'s first element for each operand.
    std::array<int64_t, N> row_offsets(uint64_t row) const {
        std::array<int64_t, N> off{};
        for (size_t d = sizes.size() - 1; d-- > 0;) {
            uint64_t i = row % sizes[d];
            row /= sizes[d];
            for (size_t k = 0; k < N; ++k) off[k] += int64_t(i) * strides[k][d];
        }
        return off;
    }
    std::array<int64_t, N> inner_strides() const {
        std::array<int64_t, N> s{};
        for (size_t k = 0; k < N; ++k) s[k] = strides[k].back();
        return s;
    }
};

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
inline void copy_strided(ThreadPool& pool, const Sizes& shape, size_t element_size, std::byte* dst,
                         std::vector<int64_t> dst_strides, const std::byte* src, std::vector<int64_t> src_strides) {
    auto copy = [&]<class U>() {
        U* d = reinterpret_cast<U*>(dst);
        const U* s = reinterpret_cast<const U*>(src);
        for_each_row<2>(pool, shape, {std::move(dst_strides), std::move(src_strides)}, [&](auto off, auto st, uint64_t n) {
            for (uint64_t j = 0; j < n; ++j) d[off[0] + int64_t(j) * st[0]] = s[off[1] + int64_t(j) * st[1]];
        });
    };
    visit_storage(element_size, copy);
}

// Splits the dimensions into the reduced `axes` and the rest: each "group" (a point in the other dimensions)
// is normalized over the elements of the reduced dimensions.
struct AxisSplit {
    std::vector<uint32_t> inner_sizes, outer_sizes;
    std::vector<int64_t> in_inner, in_outer, out_inner, out_outer;  // element strides of input / packed output
    uint64_t inner_count = 1, outer_count = 1;

    AxisSplit(const TensorDesc& in, const TensorDesc& out, const std::vector<uint32_t>& axes) {
        Strides is = in.effective_strides(), os = out.effective_strides();
        for (size_t d = 0; d < in.sizes.size(); ++d) {
            bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
            (reduced ? inner_sizes : outer_sizes).push_back(in.sizes[d]);
            (reduced ? in_inner : in_outer).push_back(is[d]);
            (reduced ? out_inner : out_outer).push_back(os[d]);
            (reduced ? inner_count : outer_count) *= in.sizes[d];
        }
    }
    // Offsets of element `i` of a group (inner) or of group `g` (outer) in input and output.
    static void offsets(uint64_t i, const std::vector<uint32_t>& sizes, const std::vector<int64_t>& a,
                        const std::vector<int64_t>& b, int64_t& oa, int64_t& ob) {
        oa = ob = 0;
        for (size_t d = sizes.size(); d-- > 0;) {
            uint64_t k = i % sizes[d];
            i /= sizes[d];
            oa += int64_t(k) * a[d];
            ob += int64_t(k) * b[d];
        }
    }
};

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
}  // namespace detail

// out[i] = f(in0[i], in1[i], ...) over the packed output, each input read (as its stored type In) through its
// own strides, zero strides included.
template <class Out, class... In, class F>
void map_elements(const KernelArgs& args, F&& f) {
    detail::map_elements<Out, In...>(args, f, std::index_sequence_for<In...>{});
}

}  // namespace dml::cpu
