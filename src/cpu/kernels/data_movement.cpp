// Data movement kernels: strided copies that never convert elements. Slice, slice_grad, tile and the
// depth/space pair are a single strided copy through a rearranged view; padding maps each output coordinate to a
// source coordinate per dimension.
#include "../../core/ops/data_movement.h"

#include <algorithm>
#include <cstring>

#include "../../executor/index_math.h"
#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

std::vector<int64_t> strides_of(const TensorArg& t) { return signed_strides(t.desc->effective_strides()); }

void run_slice(const KernelArgs& args) {
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    const size_t es = element_size(y.desc->data_type);
    SliceWindow w = slice_window(args.desc<SliceDesc>(), strides_of(x));
    copy_strided(args.pool, y.desc->sizes, es, y.data, strides_of(y), x.data + w.base * int64_t(es), w.steps);
}

// Zeros, then each gradient element written where SLICE1 read it. The window lies inside the output and steps
// by non-zero strides, so no two gradient elements meet.
void run_slice_grad(const KernelArgs& args) {
    const TensorArg &dy = args.inputs[0], &dx = args.outputs[0];
    const size_t es = element_size(dx.desc->data_type);
    std::memset(dx.data, 0, dx.desc->element_count() * es);
    SliceWindow w = slice_window(args.desc<SliceGradDesc>(), strides_of(dx));
    copy_strided(args.pool, dy.desc->sizes, es, dx.data + w.base * int64_t(es), w.steps, dy.data, strides_of(dy));
}

void run_join(const KernelArgs& args) {
    const uint32_t axis = args.desc<JoinDesc>().axis;
    const TensorArg& y = args.outputs[0];
    const std::vector<int64_t> out = strides_of(y);
    const size_t es = element_size(y.desc->data_type);
    int64_t offset = 0;
    for (const TensorArg& x : args.inputs) {
        std::byte* slice = y.data + offset * out[axis] * int64_t(es);
        if (x.data != slice)  // else the plan placed x there (MemoryPlan's joins_in_place): its producer wrote it
            copy_strided(args.pool, x.desc->sizes, es, slice, out, x.data, strides_of(x));
        offset += x.desc->sizes[axis];
    }
}

void run_split(const KernelArgs& args) {
    const uint32_t axis = args.desc<SplitDesc>().axis;
    const TensorArg& x = args.inputs[0];
    const std::vector<int64_t> in = strides_of(x);
    const size_t es = element_size(x.desc->data_type);
    int64_t offset = 0;
    for (const TensorArg& y : args.outputs) {
        copy_strided(args.pool, y.desc->sizes, es, y.data, strides_of(y), x.data + offset * in[axis] * int64_t(es),
                     in);
        offset += y.desc->sizes[axis];
    }
}

// The output seen as [repeats0, size0, repeats1, size1, ...]: the repeat dimensions read the input at stride 0.
void run_tile(const KernelArgs& args) {
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    const auto& repeats = args.desc<TileDesc>().repeats;
    const std::vector<int64_t> in = strides_of(x), out = strides_of(y);
    Sizes shape;
    std::vector<int64_t> dst, src;
    for (size_t i = 0; i < in.size(); ++i) {
        shape.insert(shape.end(), {repeats[i], x.desc->sizes[i]});
        dst.insert(dst.end(), {out[i] * x.desc->sizes[i], out[i]});
        src.insert(src.end(), {0, in[i]});
    }
    copy_strided(args.pool, shape, element_size(x.desc->data_type), y.data, dst, x.data, src);
}

// One strided copy between the space and depth tensors' views (depth_space_view).
void run_depth_space(const KernelArgs& args) {
    const auto& d = args.desc<DepthSpaceDesc>();
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    const TensorArg &space = d.to_depth ? x : y, &depth = d.to_depth ? y : x;
    const DepthSpaceView v = depth_space_view(d, space.desc->sizes, strides_of(space), strides_of(depth));
    const size_t es = element_size(x.desc->data_type);
    if (d.to_depth) copy_strided(args.pool, v.shape, es, y.data, v.depth, x.data, v.space);
    else copy_strided(args.pool, v.shape, es, y.data, v.space, x.data, v.depth);
}

template <class T>
void run_padding_typed(const KernelArgs& args) {
    const auto& d = args.desc<PaddingDesc>();
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    const Sizes &in = x.desc->sizes, &out = y.desc->sizes;
    const Strides st = x.desc->effective_strides();
    const size_t rank = out.size();
    // Per dimension and output coordinate: the source element offset, or -1 for the constant.
    std::vector<std::vector<int64_t>> source(rank);
    for (size_t i = 0; i < rank; ++i)
        for (int64_t o = 0; o < int64_t(out[i]); ++o) {
            int64_t s = padding_source(d.mode, o, d.start[i], in[i]);
            source[i].push_back(s < 0 ? -1 : s * int64_t(st[i]));
        }
    const T value = T(compute_t<T>(d.value));
    const T* src = x.as<T>();
    T* dst = y.as<T>();
    const uint64_t n = out[rank - 1], rows = y.desc->element_count() / n;
    const std::vector<int64_t>& last = source[rank - 1];
    args.pool.parallel_for(rows, std::max<uint64_t>(1, 16384 / n), [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r) {
            T* row = dst + r * n;
            int64_t base = 0;
            bool constant = false;
            uint64_t rest = r;
            for (size_t i = rank - 1; i-- > 0 && !constant; rest /= out[i]) {
                const int64_t s = source[i][rest % out[i]];
                constant = s < 0;
                base += s;
            }
            if (constant) std::fill(row, row + n, value);
            else
                for (uint64_t j = 0; j < n; ++j) row[j] = last[j] < 0 ? value : src[base + last[j]];
        }
    });
}

void run_padding(const KernelArgs& args) {
    visit_data_type(args.inputs[0].desc->data_type, [&]<class T>() { run_padding_typed<T>(args); });
}

// Each line along the axis reverses its first `length` elements (clamped to the line, as DirectML does) and
// copies the rest.
template <class T>
void run_reverse_typed(const KernelArgs& args) {
    const uint32_t axis = args.desc<ReverseSubsequencesDesc>().axis;
    const TensorArg &x = args.inputs[0], &lengths = args.inputs[1], &y = args.outputs[0];
    const int64_t n = x.desc->sizes[axis];
    Sizes lines = y.desc->sizes;
    lines[axis] = 1;
    const std::vector<int64_t> os = strides_of(y), is = strides_of(x);
    const bool wide = lengths.desc->data_type == DataType::UInt64;
    const T* src = x.as<T>();
    T* dst = y.as<T>();
    for_each_row<3>(args.pool, lines, {os, is, strides_of(lengths)}, [&](auto off, auto st, uint64_t count) {
        for (uint64_t j = 0; j < count; ++j) {
            const int64_t at = off[2] + int64_t(j) * st[2];
            const uint64_t len = wide ? lengths.as<uint64_t>()[at] : lengths.as<uint32_t>()[at];
            const int64_t reversed = int64_t(std::min<uint64_t>(len, uint64_t(n)));
            T* o = dst + off[0] + int64_t(j) * st[0];
            const T* i = src + off[1] + int64_t(j) * st[1];
            for (int64_t k = 0; k < n; ++k) o[k * os[axis]] = i[(k < reversed ? reversed - 1 - k : k) * is[axis]];
        }
    });
}

void run_reverse(const KernelArgs& args) {
    visit_data_type(args.inputs[0].desc->data_type, [&]<class T>() { run_reverse_typed<T>(args); });
}

}  // namespace

void register_data_movement_kernels(KernelTable& t) {
    add_kernel<SliceDesc>(t, {run_slice});
    add_kernel<SliceGradDesc>(t, {run_slice_grad});
    add_kernel<JoinDesc>(t, {run_join});
    add_kernel<SplitDesc>(t, {run_split});
    add_kernel<PaddingDesc>(t, {run_padding});
    add_kernel<TileDesc>(t, {run_tile});
    add_kernel<DepthSpaceDesc>(t, {run_depth_space});
    add_kernel<ReverseSubsequencesDesc>(t, {run_reverse});
}

}  // namespace dml::cpu
