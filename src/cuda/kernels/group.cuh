// Operators that fold a set of axes (softmax, reduce): each group (a point in the other axes) is handled by a
// team of threads, one warp for small groups or a whole 256-thread block for large ones, which walks the group's
// elements and combines partial results through warp shuffles (and shared memory across warps).
#pragma once
#include "common.cuh"

namespace dml::cuda {

struct GroupLayout {
    Indexer<2> outer;  // over the groups: offsets of a group's first element in [input, output]
    Indexer<2> inner;  // over one group's elements: offsets from the group's first element in [input, output]
};

// `out` addresses the output with the input's sizes (reduce passes a view with zero strides on reduced axes).
inline GroupLayout make_group_layout(const TensorDesc& in, const TensorDesc& out, const std::vector<uint32_t>& axes) {
    AxisSplit s(in, out, axes);
    auto sizes = [](const std::vector<uint32_t>& v) { return v.empty() ? Sizes{1} : Sizes(v.begin(), v.end()); };
    auto strides = [](const std::vector<int64_t>& v) { return v.empty() ? std::vector<int64_t>{0} : v; };
    return {make_indexer<2>(sizes(s.outer_sizes), {strides(s.in_outer), strides(s.out_outer)}),
            make_indexer<2>(sizes(s.inner_sizes), {strides(s.in_inner), strides(s.out_inner)})};
}

template <class C>
struct ValueIndex {
    C value;
    uint64_t index;
};

template <class V>
__device__ __forceinline__ V shuffle_xor(V v, int lane_mask) {
    return __shfl_xor_sync(0xffffffffu, v, lane_mask);
}
template <class C>
__device__ __forceinline__ ValueIndex<C> shuffle_xor(ValueIndex<C> v, int lane_mask) {
    return {__shfl_xor_sync(0xffffffffu, v.value, lane_mask),
            (uint64_t)__shfl_xor_sync(0xffffffffu, (unsigned long long)v.index, lane_mask)};
}

// Combines one value per thread of a TEAM-thread team; every thread of the team gets the result. A team of more
// than 32 threads must be its whole block (blockDim.y == 1, as every launch here has it): the block shares one
// `partial` array and synchronizes whole. A block may have fewer threads than TEAM: `warps` of them.
template <int TEAM, class V, class Op>
__device__ V team_reduce(V v, Op op, int warps = TEAM / 32) {
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) v = op(v, shuffle_xor(v, m));
    if constexpr (TEAM > 32) {
        __shared__ V partial[TEAM / 32];
        __syncthreads();  // the previous reduction may still be reading `partial`
        if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
        __syncthreads();
        v = partial[0];
#pragma unroll
        for (int w = 1; w < TEAM / 32; ++w)
            if (w < warps) v = op(v, partial[w]);
    }
    return v;
}

// f.template run<TEAM>(layout, offsets of the group's first element [input, output], lane) for every group.
template <int TEAM, class F>
__global__ void __launch_bounds__(256) group_kernel(GroupLayout g, F f) {
    const uint64_t per_block = blockDim.y;
    for (uint64_t group = blockIdx.x * per_block + threadIdx.y; group < g.outer.count; group += gridDim.x * per_block) {
        int64_t base[2];
        g.outer.offsets(group, base);
        f.template run<TEAM>(g, base, threadIdx.x);
    }
}

// Teams of 256 threads for groups of 2048 elements or more, else warps.
template <class F>
void for_each_group(const GroupLayout& g, const F& f, int sm_count, cudaStream_t stream, const char* what) {
    const bool large = g.inner.count >= 2048;
    const unsigned team = large ? 256 : 32, per_block = 256 / team;
    const uint64_t want = (g.outer.count + per_block - 1) / per_block;
    const unsigned blocks = unsigned(std::max<uint64_t>(1, std::min<uint64_t>(want, uint64_t(sm_count) * 8)));
    if (large) group_kernel<256, F><<<blocks, dim3(team, per_block), 0, stream>>>(g, f);
    else group_kernel<32, F><<<blocks, dim3(team, per_block), 0, stream>>>(g, f);
    check_launch(what);
}

}  // namespace dml::cuda
