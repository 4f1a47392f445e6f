// Data movement (cpu/kernels/data_movement.cpp is the spec), and the strided copy under it (also used for
// identity and for packing operands): nothing converts elements, so everything moves 1-, 2-, 4- or 8-byte words,
// or 16-byte ones where both sides run contiguously along the innermost dimension in whole, aligned vectors.
// Slice, slice_grad, join, split and depth/space are strided copies; padding and tile map each output coordinate
// to a source coordinate per dimension; reverse_subsequences reads each line's lengths.
#include "../../core/ops/data_movement.h"

#include <cstring>

#include "../../executor/index_math.h"
#include "common.cuh"
#include "kernel.h"
#include "factory.h"
#include "../../executor/type_visits.h"

namespace dml::cuda {

struct StridedCopy::State {
    Indexer<2> ix;  // operand 0 is the destination
    size_t element_size;
    int64_t dst_offset, src_offset;  // elements
    int sm_count;
    bool contiguous;
    bool vectors;     // `wide` holds the copy in 16-byte units (the addresses are checked at dispatch)
    Indexer<2> wide;
};

namespace {

template <class U>
struct CopyOp {
    U* dst;
    const U* src;
    __device__ void operator()(uint64_t, const int64_t (&off)[2]) const { dst[off[0]] = src[off[1]]; }
};

}  // namespace

StridedCopy::StridedCopy(const CudaDevice& device, const Sizes& shape, size_t element_size,
                         const std::vector<int64_t>& dst_strides, int64_t dst_offset,
                         const std::vector<int64_t>& src_strides, int64_t src_offset)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.ix = make_indexer<2>(shape, {dst_strides, src_strides});
    s.element_size = element_size;
    s.dst_offset = dst_offset;
    s.src_offset = src_offset;
    s.sm_count = device.sm_count();
    s.contiguous = s.ix.rank == 1 && (s.ix.count == 1 || (s.ix.strides[0][0] == 1 && s.ix.strides[1][0] == 1));
    // 16-byte units: both innermost strides 1, the innermost size and every other stride whole units.
    const int last = s.ix.rank - 1;
    const int64_t unit = element_size < 16 ? int64_t(16 / element_size) : 0;
    s.vectors = unit > 1 && s.ix.sizes[last] % unit == 0 && s.ix.strides[0][last] == 1 && s.ix.strides[1][last] == 1;
    for (int d = 0; d < last; ++d)
        for (int k = 0; k < 2; ++k) s.vectors = s.vectors && s.ix.strides[k][d] % unit == 0;
    if (s.vectors) {
        s.wide = s.ix;
        s.wide.sizes[last] = uint32_t(s.ix.sizes[last] / unit);
        s.wide.count = s.ix.count / unit;
        for (int d = 0; d < last; ++d)
            for (int k = 0; k < 2; ++k) s.wide.strides[k][d] = s.ix.strides[k][d] / unit;
    }
}

StridedCopy StridedCopy::packing(const CudaDevice& device, const TensorDesc& view) {
    return StridedCopy(device, view.sizes, element_size(view.data_type),
                       signed_strides(TensorDesc(view.data_type, view.sizes)), 0, signed_strides(view), 0);
}

StridedCopy::~StridedCopy() = default;
StridedCopy::StridedCopy(StridedCopy&&) noexcept = default;
StridedCopy& StridedCopy::operator=(StridedCopy&&) noexcept = default;

void StridedCopy::enqueue(void* dst, const void* src, cudaStream_t stream) const {
    const State& s = *state_;
    auto* d = static_cast<std::byte*>(dst) + s.dst_offset * int64_t(s.element_size);
    auto* from = static_cast<const std::byte*>(src) + s.src_offset * int64_t(s.element_size);
    if (s.contiguous) {
        check(cudaMemcpyAsync(d, from, s.ix.count * s.element_size, cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync on the device");
        return;
    }
    if (s.vectors && aligned16(d) && aligned16(from))
        return for_each<2>(s.wide, CopyOp<uint4>{reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(from)},
                           s.sm_count, stream, "strided copy");
    visit_storage(s.element_size, [&]<class U>() {
        for_each<2>(s.ix, CopyOp<U>{reinterpret_cast<U*>(d), reinterpret_cast<const U*>(from)}, s.sm_count, stream,
                    "strided copy");
    });
}

namespace {

// One strided copy per (input, output) pair the node moves: input `in` to output `out`, after zeroing the first
// `zeroed` bytes of output 0 when the copies do not cover it (slice_grad).
class CopiesKernel : public CudaKernel {
public:
    struct Part {
        size_t in, out;
        StridedCopy copy;
    };
    explicit CopiesKernel(std::vector<Part> parts, uint64_t zeroed = 0) : parts_(std::move(parts)), zeroed_(zeroed) {}
    void enqueue(const LaunchArgs& a) const override {
        if (zeroed_) check(cudaMemsetAsync(a.outputs[0], 0, zeroed_, a.stream), "cudaMemsetAsync");
        for (const Part& p : parts_) p.copy.enqueue(a.outputs[p.out], a.inputs[p.in], a.stream);
    }

private:
    std::vector<Part> parts_;
    uint64_t zeroed_;
};

std::unique_ptr<CudaKernel> single_copy(CudaDevice& device, const Sizes& shape, const TensorDesc& y,
                                        const std::vector<int64_t>& dst, int64_t dst_offset,
                                        const std::vector<int64_t>& src, int64_t src_offset, uint64_t zeroed = 0) {
    std::vector<CopiesKernel::Part> parts;
    parts.push_back({0, 0, StridedCopy(device, shape, element_size(y.data_type), dst, dst_offset, src, src_offset)});
    return std::make_unique<CopiesKernel>(std::move(parts), zeroed);
}

std::unique_ptr<CudaKernel> make_slice(const Node& node, CudaDevice& device) {
    const TensorDesc& y = node.outputs[0];
    SliceWindow w = slice_window(static_cast<const SliceDesc&>(*node.desc), signed_strides(node.inputs[0]->desc));
    return single_copy(device, y.sizes, y, signed_strides(y), 0, w.steps, w.base);
}

// Zeros, then each gradient element written where SLICE1 read it (the window never meets itself).
std::unique_ptr<CudaKernel> make_slice_grad(const Node& node, CudaDevice& device) {
    const TensorDesc &dy = node.inputs[0]->desc, &dx = node.outputs[0];
    SliceWindow w = slice_window(static_cast<const SliceGradDesc&>(*node.desc), signed_strides(dx));
    return single_copy(device, dy.sizes, dx, w.steps, w.base, signed_strides(dy), 0,
                       dx.element_count() * element_size(dx.data_type));
}

std::unique_ptr<CudaKernel> make_join(const Node& node, CudaDevice& device) {
    const uint32_t axis = static_cast<const JoinDesc&>(*node.desc).axis;
    const TensorDesc& y = node.outputs[0];
    const std::vector<int64_t> out = signed_strides(y);
    std::vector<CopiesKernel::Part> parts;
    int64_t offset = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
        const TensorDesc& x = node.inputs[i]->desc;
        parts.push_back({i, 0, StridedCopy(device, x.sizes, element_size(y.data_type), out, offset * out[axis],
                                           signed_strides(x), 0)});
        offset += x.sizes[axis];
    }
    return std::make_unique<CopiesKernel>(std::move(parts));
}

std::unique_ptr<CudaKernel> make_split(const Node& node, CudaDevice& device) {
    const uint32_t axis = static_cast<const SplitDesc&>(*node.desc).axis;
    const TensorDesc& x = node.inputs[0]->desc;
    const std::vector<int64_t> in = signed_strides(x);
    std::vector<CopiesKernel::Part> parts;
    int64_t offset = 0;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
        const TensorDesc& y = node.outputs[i];
        parts.push_back({0, i, StridedCopy(device, y.sizes, element_size(x.data_type), signed_strides(y), 0, in,
                                           offset * in[axis])});
        offset += y.sizes[axis];
    }
    return std::make_unique<CopiesKernel>(std::move(parts));
}

// One six-dimensional strided copy between the space and depth tensors' views (depth_space_view).
std::unique_ptr<CudaKernel> make_depth_space(const Node& node, CudaDevice& device) {
    const auto& d = static_cast<const DepthSpaceDesc&>(*node.desc);
    const TensorDesc &x = node.inputs[0]->desc, &y = node.outputs[0];
    const TensorDesc &space = d.to_depth ? x : y, &depth = d.to_depth ? y : x;
    const DepthSpaceView v = depth_space_view(d, space.sizes, signed_strides(space), signed_strides(depth));
    return d.to_depth ? single_copy(device, v.shape, y, v.depth, 0, v.space, 0)
                      : single_copy(device, v.shape, y, v.space, 0, v.depth, 0);
}

// Padding (and tile, which is WRAP padding at the end): each output coordinate maps to a source coordinate per
// dimension. Dimensions of output size 1 are left out (their coordinate is 0 on both sides).
struct PadMap {
    PaddingMode mode;
    int rank = 0;
    uint32_t out[kMaxDimensions] = {}, in[kMaxDimensions] = {}, start[kMaxDimensions] = {};
    int64_t stride[kMaxDimensions] = {};  // the input's

    // The source offset of packed output element i, or -1 where the constant goes.
    template <class I>
    __device__ __forceinline__ int64_t source(I i) const {
        int64_t offset = 0;
        for (int d = rank - 1; d >= 0; --d) {
            const I q = i / out[d];
            const int64_t s = padding_source(mode, int64_t(i - q * out[d]), start[d], in[d]);
            if (s < 0) return -1;
            offset += s * stride[d];
            i = q;
        }
        return offset;
    }
};

template <class U>
struct PadOp {
    U* y;
    const U* x;
    PadMap map;
    U value;
    bool narrow;  // 32-bit division suffices
    __device__ void operator()(uint64_t i, const int64_t (&)[1]) const {
        const int64_t s = narrow ? map.source(uint32_t(i)) : map.source(i);
        y[i] = s < 0 ? value : x[s];
    }
};

class PadKernel : public CudaKernel {
public:
    PadKernel(const Node& node, const CudaDevice& device, PaddingMode mode, const std::vector<uint32_t>& start,
              uint64_t value_bits)
        : element_size_(element_size(node.outputs[0].data_type)),
          value_bits_(value_bits),
          sm_count_(device.sm_count()) {
        const TensorDesc &x = node.inputs[0]->desc, &y = node.outputs[0];
        const std::vector<int64_t> is = signed_strides(x);
        map_.mode = mode;
        for (size_t d = 0; d < y.sizes.size(); ++d) {
            if (y.sizes[d] == 1) continue;
            map_.out[map_.rank] = y.sizes[d];
            map_.in[map_.rank] = x.sizes[d];
            map_.start[map_.rank] = start[d];
            map_.stride[map_.rank] = is[d];
            ++map_.rank;
        }
        ix_ = make_indexer<1>(y.sizes, {signed_strides(y)});  // drives the launch: packed, one dimension
    }
    void enqueue(const LaunchArgs& a) const override {
        visit_storage(element_size_, [&]<class U>() {
            U value;
            std::memcpy(&value, &value_bits_, sizeof(U));
            PadOp<U> op{static_cast<U*>(a.outputs[0]), static_cast<const U*>(a.inputs[0]), map_, value,
                        ix_.count <= UINT32_MAX};
            for_each<1>(ix_, op, sm_count_, a.stream, "padding");
        });
    }

private:
    size_t element_size_;
    uint64_t value_bits_;  // the constant, in the element's representation (its first bytes)
    PadMap map_;
    Indexer<1> ix_;
    int sm_count_;
};

std::unique_ptr<CudaKernel> make_padding(const Node& node, CudaDevice& device) {
    const auto& d = static_cast<const PaddingDesc&>(*node.desc);
    uint64_t bits = 0;
    // The constant as the CPU kernel converts it (only CONSTANT reads it; the builder checked it is exact there).
    if (d.mode == PaddingMode::Constant)
        visit_data_type(node.outputs[0].data_type, [&]<class T>() {
            const T v = T(compute_t<T>(d.value));
            std::memcpy(&bits, &v, sizeof(T));
        });
    return std::make_unique<PadKernel>(node, device, d.mode, d.start, bits);
}

// Tile as WRAP padding at the end: output coordinate o reads o mod n. (The CPU's [repeats, size] view of twice
// the rank can pass kMaxDimensions, which a StridedCopy cannot index.)
std::unique_ptr<CudaKernel> make_tile(const Node& node, CudaDevice& device) {
    return std::make_unique<PadKernel>(node, device, PaddingMode::Wrap,
                                       std::vector<uint32_t>(node.outputs[0].sizes.size(), 0), 0);
}

// Each line along the axis reverses its first `length` elements (clamped to the line, as DirectML does) and
// copies the rest. Operands: output, input and lengths at the line's start (stride 0 along the axis), and the
// position along the axis.
template <class U, class L>
struct ReverseOp {
    U* y;
    const U* x;
    const L* lengths;
    uint64_t n;
    int64_t step;  // the input's along the axis
    __device__ void operator()(uint64_t, const int64_t (&off)[4]) const {
        const uint64_t length = lengths[off[2]];
        const int64_t k = off[3], reversed = int64_t(length < n ? length : n);
        y[off[0]] = x[off[1] + (k < reversed ? reversed - 1 - k : k) * step];
    }
};

class ReverseKernel : public CudaKernel {
public:
    ReverseKernel(const Node& node, const CudaDevice& device)
        : axis_(static_cast<const ReverseSubsequencesDesc&>(*node.desc).axis),
          element_size_(element_size(node.outputs[0].data_type)),
          wide_(node.inputs[1]->desc.data_type == DataType::UInt64),
          sm_count_(device.sm_count()) {
        const TensorDesc &x = node.inputs[0]->desc, &y = node.outputs[0];
        std::vector<int64_t> is = signed_strides(x), ls = signed_strides(node.inputs[1]->desc),
                             position(y.sizes.size(), 0);
        n_ = x.sizes[axis_];
        step_ = is[axis_];
        is[axis_] = ls[axis_] = 0;
        position[axis_] = 1;
        ix_ = make_indexer<4>(y.sizes, {signed_strides(y), is, ls, position});
    }
    void enqueue(const LaunchArgs& a) const override {
        visit_storage(element_size_, [&]<class U>() {
            auto run = [&]<class L>() {
                ReverseOp<U, L> op{static_cast<U*>(a.outputs[0]), static_cast<const U*>(a.inputs[0]),
                                   static_cast<const L*>(a.inputs[1]), n_, step_};
                for_each<4>(ix_, op, sm_count_, a.stream, "reverse_subsequences");
            };
            if (wide_) run.template operator()<uint64_t>();
            else run.template operator()<uint32_t>();
        });
    }

private:
    uint32_t axis_;
    size_t element_size_;
    bool wide_;  // UINT64 lengths, else UINT32
    uint64_t n_;
    int64_t step_;
    Indexer<4> ix_;
    int sm_count_;
};

}  // namespace

void register_data_movement_kernels(KernelTable& t) {
    add_kernel<SliceDesc>(t, make_slice);
    add_kernel<SliceGradDesc>(t, make_slice_grad);
    add_kernel<JoinDesc>(t, make_join);
    add_kernel<SplitDesc>(t, make_split);
    add_kernel<PaddingDesc>(t, make_padding);
    add_kernel<TileDesc>(t, make_tile);
    add_kernel<DepthSpaceDesc>(t, make_depth_space);
    add_kernel<ReverseSubsequencesDesc>(t, make_kernel<ReverseKernel>);
}

}  // namespace dml::cuda
