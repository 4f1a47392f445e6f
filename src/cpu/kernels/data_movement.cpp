// Slice, join and split: strided copies that never convert elements.
#include "../../core/ops/data_movement.h"

#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

void run_slice(const KernelArgs& args) {
    const auto& d = args.desc<SliceDesc>();
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    Strides in = x.desc->effective_strides();
    const size_t es = element_size(y.desc->data_type);
    // A negative stride starts at the window's far end and walks back.
    int64_t base = 0;
    std::vector<int64_t> src(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        int64_t start = d.strides[i] > 0 ? d.offsets[i] : int64_t(d.offsets[i]) + d.sizes[i] - 1;
        base += start * int64_t(in[i]);
        src[i] = int64_t(in[i]) * d.strides[i];
    }
    copy_strided(args.pool, y.desc->sizes, es, y.data, signed_strides(y.desc->effective_strides()),
                 x.data + base * int64_t(es), src);
}

void run_join(const KernelArgs& args) {
    const uint32_t axis = args.desc<JoinDesc>().axis;
    const TensorArg& y = args.outputs[0];
    const Strides out = y.desc->effective_strides();
    const size_t es = element_size(y.desc->data_type);
    uint64_t offset = 0;
    for (const TensorArg& x : args.inputs) {
        copy_strided(args.pool, x.desc->sizes, es, y.data + offset * out[axis] * es, signed_strides(out), x.data,
                     signed_strides(x.desc->effective_strides()));
        offset += x.desc->sizes[axis];
    }
}

void run_split(const KernelArgs& args) {
    const uint32_t axis = args.desc<SplitDesc>().axis;
    const TensorArg& x = args.inputs[0];
    const Strides in = x.desc->effective_strides();
    const size_t es = element_size(x.desc->data_type);
    uint64_t offset = 0;
    for (const TensorArg& y : args.outputs) {
        copy_strided(args.pool, y.desc->sizes, es, y.data, signed_strides(y.desc->effective_strides()),
                     x.data + offset * in[axis] * es, signed_strides(in));
        offset += y.desc->sizes[axis];
    }
}

}  // namespace

void register_data_movement_kernels(KernelTable& t) {
    add_kernel<SliceDesc>(t, {run_slice});
    add_kernel<JoinDesc>(t, {run_join});
    add_kernel<SplitDesc>(t, {run_split});
}

}  // namespace dml::cpu
