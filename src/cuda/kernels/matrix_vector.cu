// GEMM of one output row or column (M == 1 or N == 1: a matrix times a vector) on kernels of ours, not cuBLASLt.
// Such a product reads its matrix once and does two flops a weight: it is bound by memory, and its kernels only have
// to keep enough 16-byte loads in flight. cuBLASLt's own kernels for it (nvjet_sm90_hsh_64x8_*) gave racecheck
// hazards on Hopper, as torch's product of the same shape does (docs/reliability.md).
//
// The product is seen as J sums of K terms, y[b, j] = act(alpha * sum_k W(b, j, k) v(b, k) + beta * c(b, j)), each
// operand read where it lies through its strides (broadcasts too: nothing is packed). Two kernels, by which of W's
// strides is 1: `rows` (a warp a sum, reading W's row along k, as in x @ W^T of a linear layer) and `columns` (a
// thread a few adjacent sums, reading W's row along j, as in x @ W). Where the sums are too few to fill the device,
// K is split over more blocks, each writing its partial sums to the workspace, and a third kernel adds them in a
// fixed order (the result does not depend on timing) and finishes the outputs.
#include "matrix_vector.h"

#include <algorithm>

#include "../../core/ops/gemm.h"
#include "common.cuh"
#include "matrix_view.h"
#include "workspace.h"

namespace dml::cuda {

namespace {

struct Shape {
    uint32_t J, K;            // sums per batch entry, terms per sum
    uint32_t batches, B1;     // batch entries (the grid's z) and the size of batch dimension 1 (z = b0 * B1 + b1)
    uint32_t k_slice;         // terms a block takes (the grid's y splits K): a multiple of 8, or K
    int64_t w_j, w_k, v_k, c_j;
    int64_t w_b[2], v_b[2], c_b[2];  // strides of batch dimensions 0 and 1
    float alpha, beta;
    FusedActivation act;
};

template <class T>
struct Pointers {
    const T *w, *v, *c;  // c null: no beta * c term
    T* y;                // packed [batches, J]
    float* partial;      // [splits][batches][J] where K is split
};

__device__ __forceinline__ int64_t batch_offset(const int64_t (&s)[2], uint32_t z, uint32_t B1) {
    return int64_t(z / B1) * s[0] + int64_t(z % B1) * s[1];
}

// Output (z, j) from its whole sum.
template <class T>
__device__ __forceinline__ void finish(const Shape& s, const Pointers<T>& p, uint32_t z, uint32_t j, float sum) {
    float r = s.alpha * sum;
    if (p.c) r += s.beta * float(load(p.c + batch_offset(s.c_b, z, s.B1) + int64_t(j) * s.c_j));
    store(p.y + uint64_t(z) * s.J + j, apply_activation(s.act, r));
}

// A block's sum for (z, j) over its slice of K: finished where K is not split, else left for finish_split_kernel.
template <class T>
__device__ __forceinline__ void hand_over(const Shape& s, const Pointers<T>& p, uint32_t z, uint32_t j, float sum) {
    if (gridDim.y == 1) return finish(s, p, z, j, sum);
    p.partial[(uint64_t(blockIdx.y) * s.batches + z) * s.J + j] = sum;
}

constexpr int kWarps = 8;     // a block of 256 threads
constexpr int kUnroll = 4;    // loads a thread keeps in flight

// A warp a sum: lane l takes the terms l, l + 32, ... in vectors of VW (16 bytes; W's row and v contiguous and
// aligned at every multiple of VW, which the host checked) or one at a time (VW == 1). Two sums a warp, each vector of
// v loaded once for both, ran slower on an H100 (bench/README.md, run U).
template <class T, int VW>
__global__ void __launch_bounds__(kWarps * 32) rows_kernel(Shape s, Pointers<T> p) {
    const uint32_t lane = threadIdx.x % 32, j = blockIdx.x * kWarps + threadIdx.x / 32, z = blockIdx.z;
    if (j >= s.J) return;
    const uint32_t k0 = blockIdx.y * s.k_slice, k1 = min(s.K, k0 + s.k_slice);
    const T* w = p.w + batch_offset(s.w_b, z, s.B1) + int64_t(j) * s.w_j;
    const T* v = p.v + batch_offset(s.v_b, z, s.B1);
    float sum = 0.0f;
    uint32_t k = k0 + lane * VW;
    if constexpr (VW > 1) {
        constexpr uint32_t step = 32 * VW;
        const uint32_t vectors_end = k0 + (k1 - k0) / VW * VW;
        for (; k + (kUnroll - 1) * step + VW <= vectors_end; k += kUnroll * step) {
            Vector<T, VW> wv[kUnroll], vv[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) wv[u] = load_vector<VW>(w + k + u * step);
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) vv[u] = load_vector<VW>(v + k + u * step);
#pragma unroll
            for (int u = 0; u < kUnroll; ++u)
#pragma unroll
                for (int e = 0; e < VW; ++e) sum = fmaf(wv[u][e], vv[u][e], sum);
        }
        for (; k + VW <= vectors_end; k += step) {
            const Vector<T, VW> wv = load_vector<VW>(w + k), vv = load_vector<VW>(v + k);
#pragma unroll
            for (int e = 0; e < VW; ++e) sum = fmaf(wv[e], vv[e], sum);
        }
        k = vectors_end + lane;  // the slice's last terms, fewer than a vector
    }
    for (; k < k1; k += 32) sum = fmaf(float(load(w + int64_t(k) * s.w_k)), float(load(v + int64_t(k) * s.v_k)), sum);
#pragma unroll
    for (int m = 16; m > 0; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
    if (lane == 0) hand_over(s, p, z, j, sum);
}

// A thread VW adjacent sums (W's row contiguous along j and aligned, which the host checked, or VW == 1): the block's
// 32 threads of a warp take 32 * VW adjacent sums, its 8 warps the terms k, k + 8, ... of its slice, and add their
// sums in shared memory.
template <class T, int VW>
__global__ void __launch_bounds__(kWarps * 32) columns_kernel(Shape s, Pointers<T> p) {
    const uint32_t x = threadIdx.x % 32, r = threadIdx.x / 32, z = blockIdx.z;
    const uint32_t j0 = (blockIdx.x * 32 + x) * VW;
    const uint32_t k0 = blockIdx.y * s.k_slice, k1 = min(s.K, k0 + s.k_slice);
    float acc[VW] = {};
    if (j0 < s.J) {
        const T* w = p.w + batch_offset(s.w_b, z, s.B1) + int64_t(j0) * s.w_j;
        const T* v = p.v + batch_offset(s.v_b, z, s.B1);
        uint32_t k = k0 + r;
        if (j0 + VW <= s.J) {
            auto row = [&](uint32_t kk) {
                if constexpr (VW > 1) return load_vector<VW>(w + int64_t(kk) * s.w_k);
                else return Vector<T, 1>{{w[int64_t(kk) * s.w_k]}};
            };
            for (; k + (kUnroll - 1) * kWarps < k1; k += kUnroll * kWarps) {
                Vector<T, VW> wv[kUnroll];
                float vk[kUnroll];
#pragma unroll
                for (int u = 0; u < kUnroll; ++u) wv[u] = row(k + u * kWarps);
#pragma unroll
                for (int u = 0; u < kUnroll; ++u) vk[u] = load(v + int64_t(k + u * kWarps) * s.v_k);
#pragma unroll
                for (int u = 0; u < kUnroll; ++u)
#pragma unroll
                    for (int e = 0; e < VW; ++e) acc[e] = fmaf(wv[u][e], vk[u], acc[e]);
            }
            for (; k < k1; k += kWarps) {
                const Vector<T, VW> wv = row(k);
                const float vk = load(v + int64_t(k) * s.v_k);
#pragma unroll
                for (int e = 0; e < VW; ++e) acc[e] = fmaf(wv[e], vk, acc[e]);
            }
        } else {  // the row's last sums, fewer than VW
            for (; k < k1; k += kWarps) {
                const float vk = load(v + int64_t(k) * s.v_k);
                for (uint32_t e = 0; e < s.J - j0; ++e)
                    acc[e] = fmaf(float(load(w + int64_t(k) * s.w_k + e)), vk, acc[e]);
            }
        }
    }
    __shared__ float sums[kWarps][32 * VW];
#pragma unroll
    for (int e = 0; e < VW; ++e) sums[r][x * VW + e] = acc[e];
    __syncthreads();
    const uint32_t j = blockIdx.x * 32 * VW + threadIdx.x;
    if (threadIdx.x < 32 * VW && j < s.J) {
        float sum = 0.0f;
#pragma unroll
        for (int q = 0; q < kWarps; ++q) sum += sums[q][threadIdx.x];
        hand_over(s, p, z, j, sum);
    }
}

// Adds the splits' partial sums of each output in split order and finishes it.
template <class T>
__global__ void __launch_bounds__(kThreads) finish_split_kernel(Shape s, Pointers<T> p, uint32_t splits) {
    const uint64_t outputs = uint64_t(s.batches) * s.J;
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < outputs; i += stride) {
        float sum = 0.0f;
        for (uint32_t q = 0; q < splits; ++q) sum += p.partial[q * outputs + i];
        finish(s, p, uint32_t(i / s.J), uint32_t(i % s.J), sum);
    }
}

class MatrixVectorKernel : public CudaKernel {
public:
    MatrixVectorKernel(const Node& node, CudaDevice& device) : device_(device) {
        const auto& desc = static_cast<const GemmDesc&>(*node.desc);
        const TensorDesc &a = node.inputs[0]->desc, &b = node.inputs[1]->desc, &y = node.outputs[0];
        type_ = y.data_type;
        const bool ta = desc.trans_a == MatrixTransform::Transpose, tb = desc.trans_b == MatrixTransform::Transpose;
        const uint32_t M = y.sizes[2], N = y.sizes[3];
        const MatrixView av(a), bv(b);
        s_.K = ta ? av.rows : av.cols;
        s_.batches = y.sizes[0] * y.sizes[1];
        // A batch dimension of one entry is never stepped along: its strides, whatever the views say, are 0.
        auto batch_strides = [&](const MatrixView& m, int64_t (&out)[2]) {
            for (int d = 0; d < 2; ++d) out[d] = y.sizes[d] == 1 ? 0 : m.batch_stride[d];
        };
        s_.B1 = y.sizes[1];
        // One output row: v is op(A)'s row, W(j, k) = op(B)[k, j]. Else one column: W(j, k) = op(A)[j, k], v is op(B)'s
        // column.
        one_row_ = M == 1;
        s_.J = one_row_ ? N : M;
        const MatrixView &wv = one_row_ ? bv : av, &vv = one_row_ ? av : bv;
        const bool w_transposed = one_row_ ? !tb : ta;  // W(j, k) lies at [k, j] of the stored matrix
        s_.w_j = w_transposed ? wv.col_stride : wv.row_stride;
        s_.w_k = w_transposed ? wv.row_stride : wv.col_stride;
        s_.v_k = one_row_ ? (ta ? vv.row_stride : vv.col_stride) : (tb ? vv.col_stride : vv.row_stride);
        batch_strides(wv, s_.w_b);
        batch_strides(vv, s_.v_b);
        has_c_ = node.inputs[2] && desc.beta != 0.0f;  // as cuBLASLt's path: C is not read where beta is 0
        if (has_c_) {
            const MatrixView cv(node.inputs[2]->desc);
            s_.c_j = one_row_ ? cv.col_stride : cv.row_stride;
            batch_strides(cv, s_.c_b);
        } else {
            s_.c_j = s_.c_b[0] = s_.c_b[1] = 0;
        }
        s_.alpha = desc.alpha;
        s_.beta = desc.beta;
        s_.act = desc.fused;

        // Rows where W's terms are contiguous and a warp has some to share; otherwise columns.
        by_rows_ = s_.w_k == 1 && s_.K >= 256;
        const int64_t es = int64_t(element_size(type_)), vw = 16 / es;
        auto aligned = [&](std::initializer_list<int64_t> strides) {
            for (int64_t st : strides)
                if (st * es % 16) return false;
            return true;
        };
        // Vectors where every vector the kernel loads starts 16-byte aligned, given aligned base addresses (checked
        // at enqueue): rows, W's rows and v contiguous; columns, W's rows contiguous along j.
        vectors_ = by_rows_ ? s_.v_k == 1 && aligned({s_.w_j, s_.w_b[0], s_.w_b[1], s_.v_b[0], s_.v_b[1]})
                         : s_.w_j == 1 && aligned({s_.w_k, s_.w_b[0], s_.w_b[1]});

        // Enough blocks for every multiprocessor to keep several in flight, splitting K where the sums are too few;
        // a block takes at least a few loads a thread of the split terms (rows: 4 vectors a lane; columns: 4 terms
        // a warp).
        const uint64_t blocks = uint64_t(grid_x(vectors_ ? int(vw) : 1)) * s_.batches;
        const uint64_t sms = uint64_t(std::max(device.sm_count(), 1));
        const uint64_t least_slice = by_rows_ ? 32 * kUnroll * uint64_t(vw) : uint64_t(kUnroll) * kWarps;
        uint64_t splits = 1;
        if (blocks < 2 * sms)
            splits = std::min((4 * sms + blocks - 1) / blocks, (s_.K + least_slice - 1) / least_slice);
        splits = std::max<uint64_t>(splits, 1);
        const uint64_t slice = (s_.K + splits - 1) / splits;
        s_.k_slice = splits == 1 ? s_.K : uint32_t((slice + 7) / 8 * 8);
        splits_ = uint32_t((s_.K + s_.k_slice - 1) / s_.k_slice);
        if (splits_ > 1) partial_offset_ = ws_.reserve(uint64_t(splits_) * s_.batches * s_.J * sizeof(float));
    }

    uint64_t workspace_size() const override { return ws_.size; }

    void enqueue(const LaunchArgs& args) const override {
        visit_float16_32(type_, [&]<class T>() {
            Pointers<T> p{static_cast<const T*>(args.inputs[one_row_ ? 1 : 0]),
                          static_cast<const T*>(args.inputs[one_row_ ? 0 : 1]),
                          has_c_ ? static_cast<const T*>(args.inputs[2]) : nullptr, static_cast<T*>(args.outputs[0]),
                          reinterpret_cast<float*>(static_cast<std::byte*>(args.workspace) + partial_offset_)};
            const bool vectors = vectors_ && aligned16(p.w) && (!by_rows_ || aligned16(p.v));
            constexpr int VW = 16 / sizeof(T);
            const dim3 grid(grid_x(vectors ? VW : 1), splits_, s_.batches);
            if (by_rows_ && vectors) rows_kernel<T, VW><<<grid, kWarps * 32, 0, args.stream>>>(s_, p);
            else if (by_rows_) rows_kernel<T, 1><<<grid, kWarps * 32, 0, args.stream>>>(s_, p);
            else if (vectors) columns_kernel<T, VW><<<grid, kWarps * 32, 0, args.stream>>>(s_, p);
            else columns_kernel<T, 1><<<grid, kWarps * 32, 0, args.stream>>>(s_, p);
            check_launch("matrix-vector product");
            if (splits_ > 1) {
                finish_split_kernel<T><<<blocks_for(uint64_t(s_.batches) * s_.J, device_.sm_count()), kThreads, 0,
                                         args.stream>>>(s_, p, splits_);
                check_launch("matrix-vector product (adding the splits)");
            }
        });
    }

private:
    // Blocks along j: a warp a sum (rows), or 32 threads of `vw` sums each (columns).
    unsigned grid_x(int vw) const {
        const uint64_t sums = by_rows_ ? kWarps : 32 * uint64_t(vw);
        return unsigned((s_.J + sums - 1) / sums);
    }

    const CudaDevice& device_;
    DataType type_;
    Shape s_{};
    bool one_row_ = true, by_rows_ = false, vectors_ = false, has_c_ = false;
    uint32_t splits_ = 1;
    WorkspaceLayout ws_;
    uint64_t partial_offset_ = 0;
};

}  // namespace

std::unique_ptr<CudaKernel> make_matrix_vector_kernel(const Node& node, CudaDevice& device) {
    const TensorDesc& y = node.outputs[0];
    const uint64_t batches = uint64_t(y.sizes[0]) * y.sizes[1];
    const bool float16_32 = y.data_type == DataType::Float16 || y.data_type == DataType::Float32;
    if (!float16_32 || (y.sizes[2] != 1 && y.sizes[3] != 1) || batches > 65535)  // 65,535: the grid's z
        return nullptr;
    return std::make_unique<MatrixVectorKernel>(node, device);
}

}  // namespace dml::cuda
