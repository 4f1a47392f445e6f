// Indexing (cpu/kernels/indexing.cpp is the spec): gathers, scatters and one_hot. Every kernel walks its output
// (the scatters: their updates) with the index tensor as one more strided operand, and resolves the index values
// where it reads them: a negative index counts from the end of its dimension, and what is still out of range never
// touches memory (a gather reads 0, a scatter skips it, one_hot leaves the sequence off). Elements only move, as
// 1-, 2-, 4- or 8-byte words.
#include "../../core/ops/indexing.h"

#include "common.cuh"
#include "factory.h"
#include "kernel.h"
#include "../../executor/type_visits.h"

namespace dml::cuda {

namespace {

// An index value as the CPU reads it: UINT64 values past INT64_MAX saturate there (out of range for any bound).
__device__ __forceinline__ int64_t read_index(DataType type, const void* p, int64_t at) {
    switch (type) {
        case DataType::Int32: return static_cast<const int32_t*>(p)[at];
        case DataType::UInt32: return static_cast<const uint32_t*>(p)[at];
        case DataType::Int64: return static_cast<const int64_t*>(p)[at];
        default: {
            const uint64_t v = static_cast<const uint64_t*>(p)[at];
            return v > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(v);
        }
    }
}

// How the index values at one place of the index tensor address the indexed tensor: `count` coordinates (a
// GATHER_ND / SCATTER_ND tuple, else one) `stride` apart in the index tensor, coordinate j bounded by bounds[j]
// and stepping steps[j] elements.
struct Tuple {
    DataType type = DataType::Int32;
    int count = 1;
    int64_t stride = 0;
    int64_t bounds[kMaxDimensions] = {}, steps[kMaxDimensions] = {};

    // The element offset addressed by the tuple at `at` in `idx`, or -1 when a coordinate is out of range (the
    // indexed tensors' strides are never negative, so no offset is).
    __device__ __forceinline__ int64_t offset(const void* idx, int64_t at) const {
        int64_t o = 0;
        for (int j = 0; j < count; ++j) {
            int64_t v = read_index(type, idx, at + j * stride);
            if (v < 0) v += bounds[j];
            if (v < 0 || v >= bounds[j]) return -1;
            o += v * steps[j];
        }
        return o;
    }
};

// A walk over some shape with one stride per operand and dimension. Size-1 dimensions are left out: the
// gathers' walks can hold more than kMaxDimensions dimensions, all but the output's rank of them of size 1.
template <int N>
struct Walk {
    Sizes shape;
    std::array<std::vector<int64_t>, N> strides;
    void add(uint32_t size, const std::array<int64_t, N>& s) {
        if (size == 1) return;
        shape.push_back(size);
        for (int k = 0; k < N; ++k) strides[k].push_back(s[k]);
    }
    Indexer<N> indexer() const {
        if (shape.empty()) return make_indexer<N>(Sizes{1}, {});  // one element: every offset 0
        return make_indexer<N>(shape, strides);
    }
};

// --- gathers: operands packed output, input, index tensor ----------------------------------------------------

template <class U>
struct GatherOp {
    U* y;
    const U* x;
    const void* idx;
    Tuple tuple;
    __device__ void operator()(uint64_t, const int64_t (&off)[3]) const {
        const int64_t at = tuple.offset(idx, off[2]);
        y[off[0]] = at < 0 ? U(0) : x[at + off[1]];
    }
};

class GatherKernel : public CudaKernel {
public:
    // `walk` lists [output step, input step, index step] per output dimension, the output packed.
    GatherKernel(const Node& node, const CudaDevice& device, const Walk<2>& walk, const Tuple& tuple)
        : tuple_(tuple), element_size_(element_size(node.outputs[0].data_type)), sm_count_(device.sm_count()) {
        // The walk's dimensions are the output's of size > 1, in order: packed strides over them address it.
        std::vector<int64_t> packed(walk.shape.size());
        int64_t step = 1;
        for (size_t d = packed.size(); d-- > 0; step *= walk.shape[d]) packed[d] = step;
        Walk<3> w;
        for (size_t d = 0; d < packed.size(); ++d)
            w.add(walk.shape[d], {packed[d], walk.strides[0][d], walk.strides[1][d]});
        ix_ = w.indexer();
    }
    void enqueue(const LaunchArgs& a) const override {
        visit_storage(element_size_, [&]<class U>() {
            GatherOp<U> op{static_cast<U*>(a.outputs[0]), static_cast<const U*>(a.inputs[0]), a.inputs[1], tuple_};
            for_each<3>(ix_, op, sm_count_, a.stream, "gather");
        });
    }

private:
    Tuple tuple_;
    size_t element_size_;
    Indexer<3> ix_;
    int sm_count_;
};

Tuple single_index(const TensorDesc& idx, uint32_t bound, int64_t step) {
    Tuple t;
    t.type = idx.data_type;
    t.bounds[0] = bound;
    t.steps[0] = step;
    return t;
}

// The output as [input dims before axis, index dims, input dims after axis].
std::unique_ptr<CudaKernel> make_gather(const Node& node, CudaDevice& device) {
    const auto& d = static_cast<const GatherDesc&>(*node.desc);
    const TensorDesc &x = node.inputs[0]->desc, &idx = node.inputs[1]->desc;
    const Sizes& in = x.sizes;
    const std::vector<int64_t> is = signed_strides(x), ts = signed_strides(idx);
    const size_t first = idx.sizes.size() - d.index_dimensions;
    Walk<2> walk;
    for (uint32_t i = 0; i < d.axis; ++i) walk.add(in[i], {is[i], 0});
    for (size_t i = first; i < idx.sizes.size(); ++i) walk.add(idx.sizes[i], {0, ts[i]});
    for (size_t i = d.axis + 1; i < in.size(); ++i) walk.add(in[i], {is[i], 0});
    return std::make_unique<GatherKernel>(node, device, walk, single_index(idx, in[d.axis], is[d.axis]));
}

// The output has the indices' shape: the input steps with it everywhere but along the axis.
std::unique_ptr<CudaKernel> make_gather_elements(const Node& node, CudaDevice& device) {
    const uint32_t axis = static_cast<const GatherElementsDesc&>(*node.desc).axis;
    const TensorDesc &x = node.inputs[0]->desc, &idx = node.inputs[1]->desc;
    const std::vector<int64_t> is = signed_strides(x), ts = signed_strides(idx);
    Walk<2> walk;
    for (size_t i = 0; i < idx.sizes.size(); ++i) walk.add(idx.sizes[i], {i == axis ? 0 : is[i], ts[i]});
    return std::make_unique<GatherKernel>(node, device, walk, single_index(idx, x.sizes[axis], is[axis]));
}

// The tuples in the last dimension of `idx` address the dimensions of `x` from `first` on.
Tuple nd_tuple(const TensorDesc& idx, const TensorDesc& x, size_t first) {
    const std::vector<int64_t> xs = signed_strides(x);
    Tuple t;
    t.type = idx.data_type;
    t.count = int(idx.sizes.back());
    t.stride = signed_strides(idx).back();
    for (int j = 0; j < t.count; ++j) {
        t.bounds[j] = x.sizes[first + j];
        t.steps[j] = xs[first + j];
    }
    return t;
}

// The output as [batch dims, tuple grid dims, trailing input dims]: the input steps through batch and trailing
// dimensions, the index tensor through batch and grid dimensions.
std::unique_ptr<CudaKernel> make_gather_nd(const Node& node, CudaDevice& device) {
    const auto& d = static_cast<const GatherNdDesc&>(*node.desc);
    const TensorDesc &x = node.inputs[0]->desc, &idx = node.inputs[1]->desc;
    const size_t rank = x.rank(), lead = rank - d.input_dimension_count, batch = d.batch_dimension_count;
    const size_t grid_first = rank - d.indices_dimension_count, tuple = idx.sizes.back();
    const std::vector<int64_t> is = signed_strides(x), ts = signed_strides(idx);
    Walk<2> walk;
    for (size_t i = 0; grid_first + i + 1 < rank; ++i)
        walk.add(idx.sizes[grid_first + i], {i < batch ? is[lead + i] : 0, ts[grid_first + i]});
    for (size_t i = lead + batch + tuple; i < rank; ++i) walk.add(x.sizes[i], {is[i], 0});
    return std::make_unique<GatherKernel>(node, device, walk, nd_tuple(idx, x, lead + batch));
}

// --- scatters: operands updates, output (without the indexed part), index tensor, key ------------------------
//
// The output is the input, then each update written where its index places it; among updates to one element the
// one with the largest key wins (the CPU's order: position along the axis, or the tuple's number). Where two
// updates can meet, a first pass claims each target element for its largest key (atomicMax of key + 1 in a
// workspace word per output element) and a second writes only the claimed updates: deterministic, CPU-exact.

struct ScatterWalk {
    Walk<4> walk;
    Tuple tuple;
    bool may_meet;
};

template <class U>
struct ScatterOp {
    U* y;
    const U* updates;
    const void* idx;
    Tuple tuple;
    uint32_t* claims;  // null: no two updates meet
    bool claiming;     // the first pass
    __device__ void operator()(uint64_t, const int64_t (&off)[4]) const {
        const int64_t o = tuple.offset(idx, off[2]);
        if (o < 0) return;
        const int64_t target = off[1] + o;
        const uint32_t key = uint32_t(off[3]) + 1;
        if (claiming) atomicMax(claims + target, key);
        else if (!claims || claims[target] == key) y[target] = updates[off[0]];
    }
};

class ScatterKernel : public CudaKernel {
public:
    ScatterKernel(const Node& node, const CudaDevice& device, const ScatterWalk& s)
        : copy_(device, node.outputs[0].sizes, element_size(node.outputs[0].data_type),
                signed_strides(node.outputs[0]), 0, signed_strides(node.inputs[0]->desc), 0),
          tuple_(s.tuple),
          element_size_(element_size(node.outputs[0].data_type)),
          claims_(s.may_meet ? node.outputs[0].element_count() * sizeof(uint32_t) : 0),
          ix_(s.walk.indexer()),
          sm_count_(device.sm_count()) {}
    uint64_t workspace_size() const override { return claims_; }
    void enqueue(const LaunchArgs& a) const override {
        copy_.enqueue(a.outputs[0], a.inputs[0], a.stream);
        uint32_t* claims = claims_ ? static_cast<uint32_t*>(a.workspace) : nullptr;
        if (claims) check(cudaMemsetAsync(claims, 0, claims_, a.stream), "cudaMemsetAsync");
        visit_storage(element_size_, [&]<class U>() {
            ScatterOp<U> op{static_cast<U*>(a.outputs[0]), static_cast<const U*>(a.inputs[2]), a.inputs[1], tuple_,
                            claims, true};
            if (claims) for_each<4>(ix_, op, sm_count_, a.stream, "scatter (claims)");
            op.claiming = false;
            for_each<4>(ix_, op, sm_count_, a.stream, "scatter");
        });
    }

private:
    StridedCopy copy_;  // the input into the output
    Tuple tuple_;
    size_t element_size_;
    uint64_t claims_;  // workspace bytes
    Indexer<4> ix_;
    int sm_count_;
};

// Walks the indices (and updates, of the same sizes); each line along the axis has its own output line.
std::unique_ptr<CudaKernel> make_scatter_elements(const Node& node, CudaDevice& device) {
    const uint32_t axis = static_cast<const ScatterElementsDesc&>(*node.desc).axis;
    const TensorDesc &idx = node.inputs[1]->desc, &y = node.outputs[0];
    const std::vector<int64_t> us = signed_strides(node.inputs[2]->desc), os = signed_strides(y),
                               ts = signed_strides(idx);
    ScatterWalk s{{}, single_index(idx, y.sizes[axis], os[axis]), idx.sizes[axis] > 1};
    for (size_t i = 0; i < idx.sizes.size(); ++i)
        s.walk.add(idx.sizes[i], {us[i], i == axis ? 0 : os[i], ts[i], i == axis ? 1 : 0});
    return std::make_unique<ScatterKernel>(node, device, s);
}

// Updates are [leading 1s, tuple grid, block]: each tuple's block goes where the tuple places it in the output.
// The grid's dimensions of size > 1 are the same in the updates and in the indices (less their tuple dimension).
std::unique_ptr<CudaKernel> make_scatter_nd(const Node& node, CudaDevice& device) {
    const auto& d = static_cast<const ScatterNdDesc&>(*node.desc);
    const TensorDesc &idx = node.inputs[1]->desc, &upd = node.inputs[2]->desc, &y = node.outputs[0];
    const size_t rank = y.rank(), lead = rank - d.input_dimension_count, tuple = idx.sizes.back();
    const size_t block_first = lead + tuple;
    const std::vector<int64_t> us = signed_strides(upd), os = signed_strides(y), ts = signed_strides(idx);
    std::vector<uint32_t> grid;
    std::vector<int64_t> grid_ts;
    for (size_t i = 0; i + 1 < rank; ++i)
        if (idx.sizes[i] > 1) {
            grid.push_back(idx.sizes[i]);
            grid_ts.push_back(ts[i]);
        }
    const uint64_t tuples = idx.element_count() / tuple;
    if (tuples > UINT32_MAX) unsupported(node, "with more than 2^32 - 1 index tuples");  // keys are 32-bit
    ScatterWalk s{{}, nd_tuple(idx, y, lead), tuples > 1};
    // The key is the tuple's number: packed over the grid.
    std::vector<int64_t> key(grid.size());
    for (size_t g = grid.size(), k = 1; g-- > 0; k *= grid[g]) key[g] = int64_t(k);
    for (size_t i = 0, g = 0; i < block_first; ++i)
        if (upd.sizes[i] > 1) {
            s.walk.add(upd.sizes[i], {us[i], 0, grid_ts[g], key[g]});
            ++g;
        }
    for (size_t i = block_first; i < rank; ++i) s.walk.add(upd.sizes[i], {us[i], os[i], 0, 0});
    return std::make_unique<ScatterKernel>(node, device, s);
}

// --- one_hot: operands output, index tensor (stride 0 along the axis), position along the axis ----------------

template <class U>
struct OneHotOp {
    U* y;
    const void* idx;
    const U* values;
    int64_t on_at;  // DirectML's off value is values' first element, its on value this one
    Tuple tuple;    // steps 1: the position the index names
    __device__ void operator()(uint64_t, const int64_t (&off)[3]) const {
        y[off[0]] = tuple.offset(idx, off[1]) == off[2] ? values[on_at] : values[0];
    }
};

class OneHotKernel : public CudaKernel {
public:
    OneHotKernel(const Node& node, const CudaDevice& device)
        : element_size_(element_size(node.outputs[0].data_type)), sm_count_(device.sm_count()) {
        const uint32_t axis = static_cast<const OneHotDesc&>(*node.desc).axis;
        const TensorDesc &idx = node.inputs[0]->desc, &values = node.inputs[1]->desc, &y = node.outputs[0];
        tuple_ = single_index(idx, y.sizes[axis], 1);
        // The on value is the next element along the fastest-changing dimension of size > 1.
        const std::vector<int64_t> vs = signed_strides(values);
        for (size_t i = values.rank(); i-- > 0;)
            if (values.sizes[i] > 1) {
                on_at_ = vs[i];
                break;
            }
        std::vector<int64_t> ts = signed_strides(idx), position(y.rank(), 0);
        ts[axis] = 0;
        position[axis] = 1;
        ix_ = make_indexer<3>(y.sizes, {signed_strides(y), ts, position});
    }
    void enqueue(const LaunchArgs& a) const override {
        visit_storage(element_size_, [&]<class U>() {
            OneHotOp<U> op{static_cast<U*>(a.outputs[0]), a.inputs[0], static_cast<const U*>(a.inputs[1]), on_at_,
                           tuple_};
            for_each<3>(ix_, op, sm_count_, a.stream, "one_hot");
        });
    }

private:
    size_t element_size_;
    int64_t on_at_ = 0;
    Tuple tuple_;
    Indexer<3> ix_;
    int sm_count_;
};

}  // namespace

void register_indexing_kernels(KernelTable& t) {
    add_kernel<GatherDesc>(t, make_gather);
    add_kernel<GatherElementsDesc>(t, make_gather_elements);
    add_kernel<GatherNdDesc>(t, make_gather_nd);
    add_kernel<ScatterElementsDesc>(t, make_scatter_elements);
    add_kernel<ScatterNdDesc>(t, make_scatter_nd);
    add_kernel<OneHotDesc>(t, make_kernel<OneHotKernel>);
}

}  // namespace dml::cuda
