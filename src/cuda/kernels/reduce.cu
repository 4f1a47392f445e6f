// The reduce family on CUDA, with the CPU kernels' semantics (cpu/kernels/reduce.cpp).
// DML_OPERATOR_REDUCE / ARGMAX / ARGMIN: a team of threads folds each output element's group. Floats accumulate in
// their compute type (float for float16 and float32), integers in 64 bits, wrapping when stored back.
// CUMULATIVE_SUMMATION / PRODUCT: a team scans each line in chunks of its size, carrying the tally.
// TOP_K1: every line is sorted by (order key, index) with a bitonic network, then the first k are written.
// NONZERO_COORDINATES: count per block, scan of the counts, then each block writes its rows in order.
#include "../../core/ops/reduce.h"
#include "group.cuh"
#include "kernel.h"

namespace dml::cuda {

namespace {

template <class T>
using accum_of = std::conditional_t<is_float_v<T>, compute_of<T>,
                                    std::conditional_t<std::is_signed_v<compute_of<T>>, int64_t, uint64_t>>;

template <class I>
__device__ __forceinline__ void store_index(void* y, int64_t off, uint64_t index) {
    static_cast<I*>(y)[off] = I(index);
}

template <class T>
struct ReduceGroup {
    void* y;  // T, or the index type of ArgMax / ArgMin
    const T* x;
    ReduceFunction fn;
    DataType index_type;

    template <int TEAM>
    __device__ void run(const GroupLayout& g, const int64_t (&base)[2], unsigned lane) const {
        using A = accum_of<T>;
        using L = ::cuda::std::numeric_limits<A>;
        const uint64_t n = g.inner.count;
        auto at = [&](uint64_t i) {
            int64_t o[2];
            g.inner.offsets(i, o);
            return A(load(x + base[0] + o[0]));
        };
        if (fn == ReduceFunction::ArgMax || fn == ReduceFunction::ArgMin) {
            // The first index of the extreme value (lowest index on ties), as DirectML's default. NaN never wins,
            // as on GPUs; with nothing but NaN the index is 0.
            const bool largest = fn == ReduceFunction::ArgMax;
            ValueIndex<A> best{A(0), UINT64_MAX};
            for (uint64_t i = lane; i < n; i += TEAM) {
                A v = at(i);
                if constexpr (is_float_v<T>)
                    if (isnan(v)) continue;
                if (best.index == UINT64_MAX || (largest ? v > best.value : v < best.value)) best = {v, i};
            }
            best = team_reduce<TEAM>(best, [largest](ValueIndex<A> p, ValueIndex<A> q) {
                if (q.index == UINT64_MAX) return p;
                if (p.index == UINT64_MAX) return q;
                bool better = largest ? q.value > p.value : q.value < p.value;
                return (better || (q.value == p.value && q.index < p.index)) ? q : p;
            });
            if (lane != 0) return;
            const uint64_t index = best.index == UINT64_MAX ? 0 : best.index;
            switch (index_type) {
                case DataType::UInt32: return store_index<uint32_t>(y, base[1], index);
                case DataType::Int32: return store_index<int32_t>(y, base[1], index);
                case DataType::UInt64: return store_index<uint64_t>(y, base[1], index);
                default: return store_index<int64_t>(y, base[1], index);
            }
        }
        A acc;
        switch (fn) {
            case ReduceFunction::Max:
            case ReduceFunction::Min: {
                const bool largest = fn == ReduceFunction::Max;
                if constexpr (is_float_v<T>) {
                    // fmax / fmin skip NaN: it is the result only where every element is NaN (the start value).
                    acc = L::quiet_NaN();
                    for (uint64_t i = lane; i < n; i += TEAM) acc = largest ? fmax(acc, at(i)) : fmin(acc, at(i));
                    acc = team_reduce<TEAM>(acc, [largest](A p, A q) { return largest ? fmax(p, q) : fmin(p, q); });
                } else {
                    acc = largest ? L::lowest() : L::max();
                    for (uint64_t i = lane; i < n; i += TEAM) {
                        A v = at(i);
                        acc = largest ? (acc < v ? v : acc) : (v < acc ? v : acc);
                    }
                    acc = team_reduce<TEAM>(acc, [largest](A p, A q) { return largest ? (p < q ? q : p)
                                                                                        : (q < p ? q : p); });
                }
                break;
            }
            case ReduceFunction::Multiply:
                acc = A(1);
                for (uint64_t i = lane; i < n; i += TEAM) acc = A(acc * at(i));
                acc = team_reduce<TEAM>(acc, [](A p, A q) { return A(p * q); });
                break;
            case ReduceFunction::LogSumExp:
                if constexpr (is_float_v<T>) {
                    A mx = -L::infinity();
                    for (uint64_t i = lane; i < n; i += TEAM) mx = fmax(mx, at(i));
                    mx = team_reduce<TEAM>(mx, [](A p, A q) { return fmax(p, q); });
                    A sum = 0;
                    for (uint64_t i = lane; i < n; i += TEAM) sum += exp(at(i) - mx);
                    sum = team_reduce<TEAM>(sum, [](A p, A q) { return p + q; });
                    acc = isinf(mx) ? mx : mx + log(sum);
                    break;
                }
                [[fallthrough]];
            default: {
                acc = A(0);
                for (uint64_t i = lane; i < n; i += TEAM) {
                    A v = at(i);
                    switch (fn) {
                        case ReduceFunction::L1:
                            if constexpr (std::is_unsigned_v<A>) acc += v;
                            else acc += v < A(0) ? A(-v) : v;
                            break;
                        case ReduceFunction::L2:
                        case ReduceFunction::SumSquare: acc += A(v * v); break;
                        default: acc += v;  // Sum, Average, LogSum
                    }
                }
                acc = team_reduce<TEAM>(acc, [](A p, A q) { return A(p + q); });
                if (fn == ReduceFunction::Average) acc = A(acc / A(n));
                if (fn == ReduceFunction::L2) acc = A(sqrt(double(acc)));
                if (fn == ReduceFunction::LogSum) acc = A(log(double(acc)));
            }
        }
        if (lane == 0) store(static_cast<T*>(y) + base[1], compute_of<T>(acc));
    }
};

class ReduceKernel : public CudaKernel {
public:
    ReduceKernel(const Node& node, const CudaDevice& device)
        : desc_(static_cast<const ReduceDesc&>(*node.desc)),
          input_type_(node.inputs[0]->desc.data_type),
          output_type_(node.outputs[0].data_type),
          sm_count_(device.sm_count()) {
        const TensorDesc& x = node.inputs[0]->desc;
        // The output keeps the rank with reduced axes of size 1: address it with the input's sizes, stride 0 there.
        Strides s = node.outputs[0].effective_strides();
        for (uint32_t a : desc_.axes) s[a] = 0;
        layout_ = make_group_layout(x, TensorDesc(output_type_, x.sizes, s), desc_.axes);
    }
    void enqueue(const LaunchArgs& a) const override {
        visit_type(input_type_, [&]<class T>() {
            ReduceGroup<T> f{a.outputs[0], static_cast<const T*>(a.inputs[0]), desc_.function, output_type_};
            for_each_group(layout_, f, sm_count_, a.stream, "reduce");
        });
    }

private:
    const ReduceDesc& desc_;
    DataType input_type_, output_type_;
    GroupLayout layout_;
    int sm_count_;
};

// A grid-stride walk over [0, count): for_each with an indexer whose only offset is the index itself.
Indexer<1> linear_indexer(uint64_t count) {
    Indexer<1> ix;
    ix.count = count;
    ix.strides[0][0] = 1;
    return ix;
}

// --- CUMULATIVE_SUMMATION / PRODUCT ------------------------------------------------------------------------------

template <class A>
__device__ __forceinline__ A shuffle_up(A v, unsigned delta) {
    if constexpr (std::is_integral_v<A>) return A(__shfl_up_sync(0xffffffffu, (unsigned long long)v, delta));
    else return __shfl_up_sync(0xffffffffu, v, delta);
}
template <class A>
__device__ __forceinline__ A shuffle_from(A v, int lane) {
    if constexpr (std::is_integral_v<A>) return A(__shfl_sync(0xffffffffu, (unsigned long long)v, lane));
    else return __shfl_sync(0xffffffffu, v, lane);
}

template <class A>
struct ScanResult {
    A exclusive, inclusive, total;
};

// Scans one value per thread of a TEAM-thread team in lane order: each thread gets the combination of the values
// before its own (exclusive), up to its own (inclusive), and of the whole team. Every thread of the team calls it.
template <int TEAM, class A, class Op>
__device__ ScanResult<A> team_scan(A v, A identity, Op op, unsigned lane) {
    const unsigned l = lane % 32;
    A inc = v;
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        A u = shuffle_up(inc, d);
        if (l >= d) inc = op(u, inc);
    }
    A exc = shuffle_up(inc, 1);
    if (l == 0) exc = identity;
    A total = shuffle_from(inc, 31);
    if constexpr (TEAM > 32) {
        __shared__ A warp_total[TEAM / 32];
        __syncthreads();  // the previous scan may still be reading warp_total
        if (l == 31) warp_total[lane / 32] = inc;
        __syncthreads();
        A prefix = identity;
        total = identity;
        for (unsigned w = 0; w < TEAM / 32; ++w) {
            if (w == lane / 32) prefix = total;
            total = op(total, warp_total[w]);
        }
        inc = op(prefix, inc);
        exc = op(prefix, exc);
    }
    return {exc, inc, total};
}

// The CPU's accumulators: floats in double, integers in uint64_t (wrapping, stored back modulo the element's width).
template <class T>
using scan_accum_of = std::conditional_t<is_float_v<T>, double, uint64_t>;

template <class T>
struct CumulativeGroup {
    T* y;
    const T* x;
    bool product, reverse, exclusive;

    template <int TEAM>
    __device__ void run(const GroupLayout& g, const int64_t (&base)[2], unsigned lane) const {
        using A = scan_accum_of<T>;
        const bool prod = product;
        const A identity = prod ? A(1) : A(0);
        auto op = [prod](A p, A q) { return prod ? A(p * q) : A(p + q); };
        const uint64_t n = g.inner.count;
        A carry = identity;
        for (uint64_t start = 0; start < n; start += TEAM) {
            const uint64_t j = start + lane;  // the position in the scan's direction
            int64_t o[2] = {0, 0};
            A v = identity;
            if (j < n) {
                g.inner.offsets(reverse ? n - 1 - j : j, o);
                v = A(load(x + base[0] + o[0]));
            }
            const ScanResult<A> s = team_scan<TEAM>(v, identity, op, lane);
            if (j < n) store(y + base[1] + o[1], compute_of<T>(op(carry, exclusive ? s.exclusive : s.inclusive)));
            carry = op(carry, s.total);
        }
    }
};

class CumulativeKernel : public CudaKernel {
public:
    CumulativeKernel(const Node& node, const CudaDevice& device)
        : desc_(static_cast<const CumulativeDesc&>(*node.desc)),
          type_(node.outputs[0].data_type),
          layout_(make_group_layout(node.inputs[0]->desc, node.outputs[0], {desc_.axis})),
          sm_count_(device.sm_count()) {}
    void enqueue(const LaunchArgs& a) const override {
        visit_type(type_, [&]<class T>() {
            CumulativeGroup<T> f{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]), desc_.product,
                                 desc_.direction == AxisDirection::Decreasing, desc_.exclusive};
            for_each_group(layout_, f, sm_count_, a.stream, "cumulative");
        });
    }

private:
    const CumulativeDesc& desc_;
    DataType type_;
    GroupLayout layout_;
    int sm_count_;
};

// --- TOP_K1 ------------------------------------------------------------------------------------------------------

// An unsigned key whose order is the CPU's ascending order: NaN above everything (all NaNs equal), -0 equal to +0.
template <class C>
__device__ __forceinline__ uint64_t ascending_key(C v) {
    if constexpr (std::is_floating_point_v<C>) {
        if (isnan(v)) return UINT64_MAX;
        if (v == C(0)) v = C(0);
        uint64_t u;
        if constexpr (sizeof(C) == 8) u = uint64_t(__double_as_longlong(v));
        else u = __float_as_uint(v);
        const uint64_t sign = uint64_t(1) << (8 * sizeof(C) - 1), mask = sign | (sign - 1);
        return (u & sign) ? ~u & mask : u | sign;  // negatives reversed below the positives
    } else if constexpr (std::is_signed_v<C>) {
        return uint64_t(int64_t(v)) ^ (uint64_t(1) << 63);
    } else {
        return uint64_t(v);
    }
}

// Orders the entries i < j of a bitonic network ascending or descending by (key, index).
__device__ __forceinline__ void compare_exchange(uint64_t* key, uint32_t* index, uint64_t i, uint64_t j,
                                                 bool ascending) {
    const uint64_t ki = key[i], kj = key[j];
    const uint32_t ii = index[i], ij = index[j];
    if ((kj < ki || (kj == ki && ij < ii)) == ascending) {
        key[i] = kj, key[j] = ki;
        index[i] = ij, index[j] = ii;
    }
}

// Lines are padded to P = 2^log_p entries (keys and indices at UINT64_MAX / UINT32_MAX sort last) and sorted as
// one array of lines: in network stage `size`, entry i sorts ascending where bit `size` of its position in the
// line is clear (so each line ends ascending), and no exchange crosses a line.
constexpr unsigned kSortTile = 2048;  // entries one block sorts in shared memory (kSortTile / 2 threads)

template <class T>
struct TopKKeys {
    uint64_t* key;
    uint32_t* index;
    const T* x;
    GroupLayout g;
    uint64_t n;
    unsigned log_p;
    bool largest;
    __device__ void operator()(uint64_t e, const int64_t (&)[1]) const {
        const uint64_t p = e & ((uint64_t(1) << log_p) - 1);
        if (p >= n) {
            key[e] = UINT64_MAX;
            index[e] = UINT32_MAX;
            return;
        }
        int64_t line[2], at[2];
        g.outer.offsets(e >> log_p, line);
        g.inner.offsets(p, at);
        const uint64_t k = ascending_key(load(x + line[0] + at[0]));
        key[e] = largest ? ~k : k;  // NaN first, ties still by ascending index
        index[e] = uint32_t(p);
    }
};

// Network stages `size_from` to `size_to`, each from the exchange distance min(size, kSortTile) / 2 down, on
// tiles of kSortTile entries.
__global__ void __launch_bounds__(kSortTile / 2)
    bitonic_tile_kernel(uint64_t* key, uint32_t* index, uint64_t total, uint64_t line_mask, uint64_t size_from,
                        uint64_t size_to) {
    __shared__ uint64_t k[kSortTile];
    __shared__ uint32_t ix[kSortTile];
    const uint64_t start = uint64_t(blockIdx.x) * kSortTile;
    const unsigned count = total - start < kSortTile ? unsigned(total - start) : kSortTile;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) k[i] = key[start + i], ix[i] = index[start + i];
    __syncthreads();
    for (uint64_t size = size_from; size <= size_to; size <<= 1)
        for (unsigned stride = unsigned(size < kSortTile ? size : kSortTile) / 2; stride > 0; stride >>= 1) {
            const unsigned q = threadIdx.x, i = 2 * q - (q & (stride - 1));
            if (i + stride < count) compare_exchange(k, ix, i, i + stride, (((start + i) & line_mask) & size) == 0);
            __syncthreads();
        }
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) key[start + i] = k[i], index[start + i] = ix[i];
}

// One exchange distance of one stage over the whole array, for distances of a tile or more.
struct BitonicStep {
    uint64_t* key;
    uint32_t* index;
    uint64_t line_mask, size, stride;
    __device__ void operator()(uint64_t q, const int64_t (&)[1]) const {
        const uint64_t i = 2 * q - (q & (stride - 1));
        compare_exchange(key, index, i, i + stride, ((i & line_mask) & size) == 0);
    }
};

template <class T>
struct TopKOutput {
    T* values;
    void* indices;
    bool wide_indices;  // UINT64, else UINT32
    const T* x;
    const uint32_t* index;
    GroupLayout g;
    uint32_t k;
    unsigned log_p;
    __device__ void operator()(uint64_t e, const int64_t (&)[1]) const {
        const uint64_t line = e / k, j = e - line * k;
        const uint32_t i = index[(line << log_p) + j];
        int64_t base[2], from[2], to[2];
        g.outer.offsets(line, base);
        g.inner.offsets(i, from);
        g.inner.offsets(j, to);
        const int64_t out = base[1] + to[1];
        values[out] = x[base[0] + from[0]];
        if (wide_indices) static_cast<uint64_t*>(indices)[out] = i;
        else static_cast<uint32_t*>(indices)[out] = i;
    }
};

class TopKKernel : public CudaKernel {
public:
    TopKKernel(const Node& node, const CudaDevice& device)
        : desc_(static_cast<const TopKDesc&>(*node.desc)),
          type_(node.inputs[0]->desc.data_type),
          wide_indices_(node.outputs[1].data_type == DataType::UInt64),
          sm_count_(device.sm_count()) {
        const TensorDesc& x = node.inputs[0]->desc;
        // The outputs (k along the axis) addressed with the input's split: position j of a line is output j.
        layout_ = make_group_layout(x, node.outputs[0], {desc_.axis});
        n_ = x.sizes[desc_.axis];
        while ((uint64_t(1) << log_p_) < n_) ++log_p_;
        total_ = layout_.outer.count << log_p_;
    }
    uint64_t workspace_size() const override { return index_offset() + total_ * sizeof(uint32_t); }

    void enqueue(const LaunchArgs& a) const override {
        auto* key = static_cast<uint64_t*>(a.workspace);
        auto* index = reinterpret_cast<uint32_t*>(static_cast<std::byte*>(a.workspace) + index_offset());
        visit_type(type_, [&]<class T>() {
            const T* x = static_cast<const T*>(a.inputs[0]);
            TopKKeys<T> keys{key, index, x, layout_, n_, log_p_, desc_.direction == AxisDirection::Decreasing};
            for_each<1>(linear_indexer(total_), keys, sm_count_, a.stream, "top_k keys");
            sort(key, index, a.stream);
            TopKOutput<T> out{static_cast<T*>(a.outputs[0]), a.outputs[1], wide_indices_, x, index, layout_, desc_.k,
                              log_p_};
            for_each<1>(linear_indexer(layout_.outer.count * desc_.k), out, sm_count_, a.stream, "top_k");
        });
    }

private:
    uint64_t index_offset() const { return (total_ * sizeof(uint64_t) + 255) & ~uint64_t(255); }

    // A bitonic sort of every line: stages up to a tile in shared memory; longer stages exchange through global
    // memory down to the tile's distance, then finish in shared memory.
    void sort(uint64_t* key, uint32_t* index, cudaStream_t stream) const {
        const uint64_t length = uint64_t(1) << log_p_, mask = length - 1;  // of a padded line
        if (length == 1) return;
        const unsigned tiles = unsigned((total_ + kSortTile - 1) / kSortTile);
        bitonic_tile_kernel<<<tiles, kSortTile / 2, 0, stream>>>(key, index, total_, mask, 2,
                                                                  std::min<uint64_t>(length, kSortTile));
        check_launch("top_k sort");
        for (uint64_t size = 2 * kSortTile; size <= length; size <<= 1) {
            for (uint64_t stride = size / 2; stride >= kSortTile; stride >>= 1)
                for_each<1>(linear_indexer(total_ / 2), BitonicStep{key, index, mask, size, stride}, sm_count_, stream,
                            "top_k sort");
            bitonic_tile_kernel<<<tiles, kSortTile / 2, 0, stream>>>(key, index, total_, mask, size, size);
            check_launch("top_k sort");
        }
    }

    const TopKDesc& desc_;
    DataType type_;
    bool wide_indices_;
    int sm_count_;
    GroupLayout layout_;
    uint64_t n_ = 0, total_ = 0;
    unsigned log_p_ = 0;
};

// --- NONZERO_COORDINATES -----------------------------------------------------------------------------------------

constexpr unsigned kNonZeroChunk = kThreads * 16;  // elements per block, visited kThreads at a time

template <class T>
struct NonZeroInput {
    const T* x;
    Indexer<1> ix;  // the input's elements in row-major order
    __device__ bool at(uint64_t i) const {
        if (i >= ix.count) return false;
        int64_t o[1];
        ix.offsets(i, o);
        return load(x + o[0]) != compute_of<T>(0);  // -0.0 is zero; NaN is not
    }
};

template <class T>
__global__ void __launch_bounds__(kThreads) non_zero_count_kernel(NonZeroInput<T> in, uint32_t* block_counts) {
    const uint64_t start = uint64_t(blockIdx.x) * kNonZeroChunk;
    uint32_t found = 0;
    for (unsigned r = 0; r < kNonZeroChunk && start + r < in.ix.count; r += kThreads)
        found += __syncthreads_count(in.at(start + r + threadIdx.x));
    if (threadIdx.x == 0) block_counts[blockIdx.x] = found;
}

// One block of 1024 threads turns the block counts into each block's first row, and writes the total count.
__global__ void __launch_bounds__(1024) non_zero_offsets_kernel(uint32_t* block_counts, uint64_t blocks,
                                                                uint32_t* count) {
    auto add = [](uint32_t p, uint32_t q) { return p + q; };
    uint32_t carry = 0;
    for (uint64_t base = 0; base < blocks; base += 1024) {
        const uint64_t b = base + threadIdx.x;
        const ScanResult<uint32_t> s = team_scan<1024>(b < blocks ? block_counts[b] : 0u, 0u, add, threadIdx.x);
        if (b < blocks) block_counts[b] = carry + s.exclusive;
        carry += s.total;
    }
    if (threadIdx.x == 0) count[0] = carry;
}

struct Coordinates {
    uint32_t* out;  // [element count, rank]
    int rank;
    uint32_t sizes[kMaxDimensions];
};

template <class T>
__global__ void __launch_bounds__(kThreads) non_zero_write_kernel(NonZeroInput<T> in, const uint32_t* block_rows,
                                                                  Coordinates c) {
    auto add = [](uint32_t p, uint32_t q) { return p + q; };
    const uint64_t start = uint64_t(blockIdx.x) * kNonZeroChunk;
    uint64_t row = block_rows[blockIdx.x];
    for (unsigned r = 0; r < kNonZeroChunk && start + r < in.ix.count; r += kThreads) {
        uint64_t i = start + r + threadIdx.x;
        const bool found = in.at(i);
        const ScanResult<uint32_t> s = team_scan<kThreads>(uint32_t(found), 0u, add, threadIdx.x);
        if (found) {
            uint32_t* o = c.out + (row + s.exclusive) * uint64_t(c.rank);
            for (int d = c.rank - 1; d >= 0; --d) {
                o[d] = uint32_t(i % c.sizes[d]);
                i /= c.sizes[d];
            }
        }
        row += s.total;
    }
}

class NonZeroKernel : public CudaKernel {
public:
    NonZeroKernel(const Node& node, const CudaDevice&) : type_(node.inputs[0]->desc.data_type) {
        const TensorDesc& x = node.inputs[0]->desc;
        ix_ = make_indexer<1>(x.sizes, {signed_strides(x)});
        coords_.rank = int(x.rank());
        for (size_t d = 0; d < x.rank(); ++d) coords_.sizes[d] = x.sizes[d];
        blocks_ = (ix_.count + kNonZeroChunk - 1) / kNonZeroChunk;
    }
    uint64_t workspace_size() const override { return blocks_ * sizeof(uint32_t); }

    void enqueue(const LaunchArgs& a) const override {
        auto* count = static_cast<uint32_t*>(a.outputs[0]);
        Coordinates c = coords_;
        c.out = static_cast<uint32_t*>(a.outputs[1]);
        // Rows past the count are undefined in DirectML; zero, as on the CPU.
        check(cudaMemsetAsync(c.out, 0, ix_.count * uint64_t(c.rank) * sizeof(uint32_t), a.stream), "cudaMemsetAsync");
        auto* block_rows = static_cast<uint32_t*>(a.workspace);
        visit_type(type_, [&]<class T>() {
            NonZeroInput<T> in{static_cast<const T*>(a.inputs[0]), ix_};
            non_zero_count_kernel<T><<<unsigned(blocks_), kThreads, 0, a.stream>>>(in, block_rows);
            check_launch("non_zero_coordinates count");
            non_zero_offsets_kernel<<<1, 1024, 0, a.stream>>>(block_rows, blocks_, count);
            check_launch("non_zero_coordinates offsets");
            non_zero_write_kernel<T><<<unsigned(blocks_), kThreads, 0, a.stream>>>(in, block_rows, c);
            check_launch("non_zero_coordinates");
        });
    }

private:
    DataType type_;
    Indexer<1> ix_;
    Coordinates coords_{};
    uint64_t blocks_ = 0;
};

}  // namespace

void register_reduce_kernels(KernelTable& t) {
    add_kernel<ReduceDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        if (int(static_cast<const ReduceDesc&>(*n.desc).function) > int(ReduceFunction::SumSquare)) unsupported(n);
        return std::make_unique<ReduceKernel>(n, d);
    });
    add_kernel<CumulativeDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<CumulativeKernel>(n, d);
    });
    add_kernel<TopKDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<TopKKernel>(n, d);
    });
    add_kernel<NonZeroCoordinatesDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<NonZeroKernel>(n, d);
    });
}

}  // namespace dml::cuda
