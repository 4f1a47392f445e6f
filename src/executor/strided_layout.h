// How N operands lay out over one shape, shared by the executors: StridedLoop merges the dimensions every operand
// walks contiguously (the cpu's rows, the cuda indexers), AxisSplit parts the dimensions into reduced and kept ones
// (normalizations, softmax, reductions).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "../core/tensor_desc.h"

namespace dml {

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

}  // namespace dml
