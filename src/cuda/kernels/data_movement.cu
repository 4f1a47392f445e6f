// Slice, join and split, and the strided copy under them (also used for identity and for packing operands):
// copies that never convert elements, so they move 1-, 2-, 4- or 8-byte words.
#include "../../core/ops/data_movement.h"
#include "common.cuh"
#include "kernel.h"

namespace dml::cuda {

struct StridedCopy::State {
    Indexer<2> ix;  // operand 0 is the destination
    size_t element_size;
    int64_t dst_offset, src_offset;  // elements
    int sm_count;
    bool contiguous;
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
    auto run = [&]<class U>() {
        for_each<2>(s.ix, CopyOp<U>{reinterpret_cast<U*>(d), reinterpret_cast<const U*>(from)}, s.sm_count, stream,
                    "strided copy");
    };
    switch (s.element_size) {
        case 1: return run.template operator()<uint8_t>();
        case 2: return run.template operator()<uint16_t>();
        case 4: return run.template operator()<uint32_t>();
        default: return run.template operator()<uint64_t>();
    }
}

namespace {

// One strided copy per (input, output) pair the node moves: input `in` to output `out`.
class CopiesKernel : public CudaKernel {
public:
    struct Part {
        size_t in, out;
        StridedCopy copy;
    };
    explicit CopiesKernel(std::vector<Part> parts) : parts_(std::move(parts)) {}
    void enqueue(const LaunchArgs& a) const override {
        for (const Part& p : parts_) p.copy.enqueue(a.outputs[p.out], a.inputs[p.in], a.stream);
    }

private:
    std::vector<Part> parts_;
};

std::unique_ptr<CudaKernel> make_slice(const Node& node, CudaDevice& device) {
    const auto& d = static_cast<const SliceDesc&>(*node.desc);
    const TensorDesc &x = node.inputs[0]->desc, &y = node.outputs[0];
    const std::vector<int64_t> in = signed_strides(x);
    // A negative stride starts at the window's far end and walks back.
    int64_t base = 0;
    std::vector<int64_t> src(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        int64_t start = d.strides[i] > 0 ? d.offsets[i] : int64_t(d.offsets[i]) + d.sizes[i] - 1;
        base += start * in[i];
        src[i] = in[i] * d.strides[i];
    }
    std::vector<CopiesKernel::Part> parts;
    parts.push_back({0, 0, StridedCopy(device, y.sizes, element_size(y.data_type), signed_strides(y), 0, src, base)});
    return std::make_unique<CopiesKernel>(std::move(parts));
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

}  // namespace

void register_data_movement_kernels(KernelTable& t) {
    add_kernel<SliceDesc>(t, make_slice);
    add_kernel<JoinDesc>(t, make_join);
    add_kernel<SplitDesc>(t, make_split);
}

}  // namespace dml::cuda
