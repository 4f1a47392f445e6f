// Indexing kernels. Each first resolves its index tensor into a table of positions (-1 for an index out of
// range), then walks the output with the table as one more strided operand: an index out of range reads 0 (the
// gathers), is skipped (the scatters) or matches no position (one_hot), and never touches memory.
#include "../../core/ops/indexing.h"

#include <array>
#include <limits>

#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

std::vector<int64_t> strides_of(const TensorArg& t) { return signed_strides(t.desc->effective_strides()); }

std::vector<int64_t> packed(const Sizes& sizes) { return signed_strides(packed_strides(sizes)); }

int64_t read_index(DataType type, const std::byte* base, int64_t at) {
    switch (type) {
        case DataType::Int32: return reinterpret_cast<const int32_t*>(base)[at];
        case DataType::UInt32: return reinterpret_cast<const uint32_t*>(base)[at];
        case DataType::Int64: return reinterpret_cast<const int64_t*>(base)[at];
        default: {
            const uint64_t v = reinterpret_cast<const uint64_t*>(base)[at];
            return v > uint64_t(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                    : int64_t(v);
        }
    }
}

// The index tensor's elements in packed order as positions: element i addresses a dimension of
// bounds[i % bounds.size()] elements. A negative index counts from the end (only signed types hold one); what is
// still outside [0, bound) becomes -1.
std::vector<int64_t> resolve_indices(ThreadPool& pool, const TensorArg& idx, const std::vector<int64_t>& bounds) {
    const Sizes& sizes = idx.desc->sizes;
    std::vector<int64_t> table(idx.desc->element_count());
    const DataType type = idx.desc->data_type;
    const int64_t period = int64_t(bounds.size());
    for_each_row<2>(pool, sizes, {packed(sizes), strides_of(idx)}, [&](auto off, auto st, uint64_t n) {
        for (uint64_t j = 0; j < n; ++j) {
            const int64_t at = off[0] + int64_t(j) * st[0], bound = bounds[at % period];
            int64_t v = read_index(type, idx.data, off[1] + int64_t(j) * st[1]);
            if (v < 0) v += bound;
            table[at] = v >= 0 && v < bound ? v : -1;
        }
    });
    return table;
}

void copy_input_to_output(const KernelArgs& args) {
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    copy_strided(args.pool, y.desc->sizes, element_size(y.desc->data_type), y.data, strides_of(y), x.data,
                 strides_of(x));
}

// Positions scaled to element offsets along a dimension of `step`; -1 (out of range) stays -1.
std::vector<int64_t> offsets_of(std::vector<int64_t> positions, int64_t step) {
    for (int64_t& p : positions)
        if (p >= 0) p *= step;
    return positions;
}

// How a gather walks its packed output: per dimension, its size and the steps of the input and of the table.
struct GatherWalk {
    Sizes shape;
    std::vector<int64_t> input_steps, table_steps;
    void add(uint32_t size, int64_t input_step, int64_t table_step) {
        shape.push_back(size);
        input_steps.push_back(input_step);
        table_steps.push_back(table_step);
    }
};

// Every gather: output element o reads x at the table's offset (the indexed part) plus the walk's input offset
// (the rest); a table entry of -1 (an index out of range) reads 0.
void gather_through(const KernelArgs& args, const GatherWalk& walk, const std::vector<int64_t>& table) {
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    visit_storage(x.desc->data_type, [&]<class U>() {
        const U* src = x.as<U>();
        U* dst = y.as<U>();
        const std::array<std::vector<int64_t>, 3> operands = {packed(walk.shape), walk.input_steps, walk.table_steps};
        for_each_row<3>(args.pool, walk.shape, operands, [&](auto off, auto st, uint64_t n) {
            for (uint64_t j = 0; j < n; ++j) {
                const int64_t at = table[off[2] + int64_t(j) * st[2]];
                dst[off[0] + int64_t(j) * st[0]] = at < 0 ? U(0) : src[at + off[1] + int64_t(j) * st[1]];
            }
        });
    });
}

// The output as [input dims before axis, index dims, input dims after axis]: the input steps through its own
// dimensions, the table through the index dimensions.
void run_gather(const KernelArgs& args) {
    const auto& d = args.desc<GatherDesc>();
    const TensorArg &x = args.inputs[0], &idx = args.inputs[1];
    const Sizes& in = x.desc->sizes;
    const std::vector<int64_t> is = strides_of(x);
    const Sizes index_sizes(idx.desc->sizes.end() - d.index_dimensions, idx.desc->sizes.end());
    const std::vector<int64_t> index_strides = packed(index_sizes);
    GatherWalk walk;
    for (uint32_t i = 0; i < d.axis; ++i) walk.add(in[i], is[i], 0);
    for (size_t i = 0; i < index_sizes.size(); ++i) walk.add(index_sizes[i], 0, index_strides[i]);
    for (size_t i = d.axis + 1; i < in.size(); ++i) walk.add(in[i], is[i], 0);
    gather_through(args, walk, offsets_of(resolve_indices(args.pool, idx, {int64_t(in[d.axis])}), is[d.axis]));
}

// The output has the indices' shape: the table steps with it, the input everywhere but along the axis.
void run_gather_elements(const KernelArgs& args) {
    const uint32_t axis = args.desc<GatherElementsDesc>().axis;
    const TensorArg &x = args.inputs[0], &idx = args.inputs[1];
    const Sizes& shape = idx.desc->sizes;
    const std::vector<int64_t> is = strides_of(x), ts = packed(shape);
    GatherWalk walk;
    for (size_t i = 0; i < shape.size(); ++i) walk.add(shape[i], i == axis ? 0 : is[i], ts[i]);
    gather_through(args, walk, offsets_of(resolve_indices(args.pool, idx, {int64_t(x.desc->sizes[axis])}), is[axis]));
}

// The element offset in `x` of each index tuple in the last dimension of `idx` (the tuple addresses the
// `tuple` dimensions of x starting at `first`), or -1 when a coordinate is out of range.
std::vector<int64_t> tuple_offsets(ThreadPool& pool, const TensorArg& idx, const TensorArg& x, size_t first) {
    const size_t tuple = idx.desc->sizes.back();
    const std::vector<int64_t> xs = strides_of(x);
    std::vector<int64_t> bounds;
    for (size_t j = 0; j < tuple; ++j) bounds.push_back(x.desc->sizes[first + j]);
    const std::vector<int64_t> coords = resolve_indices(pool, idx, bounds);
    std::vector<int64_t> offsets(coords.size() / tuple);
    for (size_t t = 0; t < offsets.size(); ++t) {
        int64_t o = 0;
        for (size_t j = 0; j < tuple && o >= 0; ++j) {
            const int64_t c = coords[t * tuple + j];
            o = c < 0 ? -1 : o + c * xs[first + j];
        }
        offsets[t] = o;
    }
    return offsets;
}

// The output as [batch dims, tuple grid dims, trailing input dims]: the input steps through batch and trailing
// dimensions, the table (one offset per tuple) through batch and grid dimensions.
void run_gather_nd(const KernelArgs& args) {
    const auto& d = args.desc<GatherNdDesc>();
    const TensorArg &x = args.inputs[0], &idx = args.inputs[1];
    const size_t rank = x.desc->rank(), lead = rank - d.input_dimension_count, batch = d.batch_dimension_count;
    const size_t tuple = idx.desc->sizes.back();
    const Sizes grid(idx.desc->sizes.end() - d.indices_dimension_count, idx.desc->sizes.end() - 1);
    const std::vector<int64_t> grid_strides = packed(grid), is = strides_of(x);
    GatherWalk walk;
    for (size_t i = 0; i < grid.size(); ++i) walk.add(grid[i], i < batch ? is[lead + i] : 0, grid_strides[i]);
    for (size_t i = lead + batch + tuple; i < rank; ++i) walk.add(x.desc->sizes[i], is[i], 0);
    gather_through(args, walk, tuple_offsets(args.pool, idx, x, lead + batch));
}

// Output = input, then each line along the axis takes its updates in order (a later update to the same
// element wins). Lines are disjoint, so they run in parallel without meeting.
void run_scatter_elements(const KernelArgs& args) {
    const uint32_t axis = args.desc<ScatterElementsDesc>().axis;
    const TensorArg &idx = args.inputs[1], &upd = args.inputs[2], &y = args.outputs[0];
    copy_input_to_output(args);
    const std::vector<int64_t> table = resolve_indices(args.pool, idx, {int64_t(y.desc->sizes[axis])});
    const std::vector<int64_t> us = strides_of(upd), os = strides_of(y), ts = packed(idx.desc->sizes);
    const int64_t n = idx.desc->sizes[axis];
    Sizes lines = idx.desc->sizes;
    lines[axis] = 1;
    visit_storage(y.desc->data_type, [&]<class U>() {
        const U* src = upd.as<U>();
        U* dst = y.as<U>();
        for_each_row<3>(args.pool, lines, {us, os, ts}, [&](auto off, auto st, uint64_t count) {
            for (uint64_t j = 0; j < count; ++j) {
                const int64_t u = off[0] + int64_t(j) * st[0], o = off[1] + int64_t(j) * st[1],
                              t = off[2] + int64_t(j) * st[2];
                for (int64_t k = 0; k < n; ++k) {
                    const int64_t v = table[t + k * ts[axis]];
                    if (v >= 0) dst[o + v * os[axis]] = src[u + k * us[axis]];
                }
            }
        });
    });
}

// Output = input, then each tuple's block of updates in tuple order (a later tuple wins). Threads split the
// positions within a block and each walks every tuple, so no two threads write one element.
void run_scatter_nd(const KernelArgs& args) {
    const auto& d = args.desc<ScatterNdDesc>();
    const TensorArg &idx = args.inputs[1], &upd = args.inputs[2], &y = args.outputs[0];
    copy_input_to_output(args);
    const size_t rank = y.desc->rank(), lead = rank - d.input_dimension_count;
    const size_t tuple = idx.desc->sizes.back(), block_rank = d.input_dimension_count - tuple;
    const std::vector<int64_t> table = tuple_offsets(args.pool, idx, y, lead);
    // Updates are [leading 1s, tuple grid, block]: the grid's offsets per tuple, the block walked per thread.
    const Sizes& us = upd.desc->sizes;
    const std::vector<int64_t> ust = strides_of(upd), os = strides_of(y);
    const size_t block_first = rank - block_rank;
    std::vector<int64_t> grid_offsets(table.size());
    for (size_t t = 0; t < table.size(); ++t) {
        uint64_t rest = t;
        for (size_t i = block_first; i-- > 0;) {
            grid_offsets[t] += int64_t(rest % us[i]) * ust[i];
            rest /= us[i];
        }
    }
    const Sizes block(us.begin() + block_first, us.end());
    const std::vector<int64_t> block_upd(ust.begin() + block_first, ust.end());
    const std::vector<int64_t> block_out(os.end() - block_rank, os.end());
    visit_storage(y.desc->data_type, [&]<class U>() {
        const U* src = upd.as<U>();
        U* dst = y.as<U>();
        for_each_row<2>(args.pool, block, {block_upd, block_out}, [&](auto off, auto st, uint64_t n) {
            for (size_t t = 0; t < table.size(); ++t) {
                if (table[t] < 0) continue;
                const U* s = src + grid_offsets[t] + off[0];
                U* o = dst + table[t] + off[1];
                for (uint64_t j = 0; j < n; ++j) o[int64_t(j) * st[1]] = s[int64_t(j) * st[0]];
            }
        });
    });
}

// The on value sits at the sequence position the table names; every other position (all of them for an index
// out of range) takes the off value. A third operand steps 1 along the axis only: it is the position.
void run_one_hot(const KernelArgs& args) {
    const uint32_t axis = args.desc<OneHotDesc>().axis;
    const TensorArg &idx = args.inputs[0], &values = args.inputs[1], &y = args.outputs[0];
    const Sizes& out = y.desc->sizes;
    const std::vector<int64_t> table = resolve_indices(args.pool, idx, {int64_t(out[axis])});
    std::vector<int64_t> table_steps = packed(idx.desc->sizes), position(out.size(), 0);
    table_steps[axis] = 0;
    position[axis] = 1;
    // DirectML's off value is values' first element, its on value the next one along the fastest-changing
    // dimension of size > 1.
    const std::vector<int64_t> vs = strides_of(values);
    int64_t on_at = 0;
    for (size_t i = values.desc->rank(); i-- > 0;)
        if (values.desc->sizes[i] > 1) {
            on_at = vs[i];
            break;
        }
    visit_storage(y.desc->data_type, [&]<class U>() {
        const U off_value = values.as<U>()[0], on_value = values.as<U>()[on_at];
        U* dst = y.as<U>();
        for_each_row<3>(args.pool, out, {strides_of(y), table_steps, position}, [&](auto off, auto st, uint64_t n) {
            for (uint64_t j = 0; j < n; ++j)
                dst[off[0] + int64_t(j) * st[0]] =
                    table[off[1] + int64_t(j) * st[1]] == off[2] + int64_t(j) * st[2] ? on_value : off_value;
        });
    });
}

}  // namespace

void register_indexing_kernels(KernelTable& t) {
    add_kernel<GatherDesc>(t, {run_gather});
    add_kernel<GatherElementsDesc>(t, {run_gather_elements});
    add_kernel<GatherNdDesc>(t, {run_gather_nd});
    add_kernel<ScatterElementsDesc>(t, {run_scatter_elements});
    add_kernel<ScatterNdDesc>(t, {run_scatter_nd});
    add_kernel<OneHotDesc>(t, {run_one_hot});
}

}  // namespace dml::cpu
