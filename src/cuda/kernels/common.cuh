// What the CUDA kernel files share: element types (float16 is __half and computes as float), strided indexing
// of DirectML's views (sizes and strides passed by value), grid-stride launches, and the scalar math of
// executor/scalar_math.h (apply_activation, which kernels fuse into their outputs).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cuda/std/limits>
#include <type_traits>
#include <vector>

#include "../../core/data_type.h"
#include "../../core/errors.h"
#include "../../executor/scalar_math.h"
#include "../../executor/strided_layout.h"
#include "../../executor/type_visits.h"
#include "../cuda_device.h"
#include "kernel.h"

namespace dml::cuda {

// --- element types ------------------------------------------------------------------------------------------

template <class T> struct Compute { using type = T; };
template <> struct Compute<__half> { using type = float; };
template <class T> using compute_of = typename Compute<T>::type;
template <class T> constexpr bool is_float_v = std::is_floating_point_v<compute_of<T>>;

template <class T> __device__ __forceinline__ compute_of<T> load(const T* p) {
    if constexpr (std::is_same_v<T, __half>) return __half2float(*p);
    else return *p;
}
// Whether an address can move 16-byte vectors (null can: it is never read).
inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// A compute value as T stores it (float16 rounds to nearest).
template <class T> __device__ __forceinline__ T to_stored(compute_of<T> v) {
    if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
    else return v;
}
template <class T> __device__ __forceinline__ void store(T* p, compute_of<T> v) { *p = to_stored<T>(v); }

// W elements of T that move as one load or store: W * sizeof(T) is at most 16 bytes, and the address a multiple of
// it. Kept as stored (float16 packed two to a register) and read as compute values: v[j].
template <class T, int W>
struct alignas(sizeof(T) * W) Vector {
    T v[W];
    __device__ __forceinline__ compute_of<T> operator[](int j) const { return load(&v[j]); }
};
template <int W, class T> __device__ __forceinline__ Vector<T, W> load_vector(const T* p) {
    return *reinterpret_cast<const Vector<T, W>*>(p);
}
template <int W, class T> __device__ __forceinline__ void store_vector(T* p, const Vector<T, W>& v) {
    *reinterpret_cast<Vector<T, W>*>(p) = v;
}

// An L2 eviction priority for 16-byte vectors (PTX createpolicy): a stream read or written once can leave L2 first,
// and the part of it read again soon leave last. L2Policy{} is a plain access.
struct L2Policy {
    uint64_t bits = 0;
    bool on = false;
};
__device__ __forceinline__ L2Policy l2_policy(bool keep) {
    L2Policy p{0, true};
    if (keep) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p.bits));
    else asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p.bits));
    return p;
}
template <int W, class T> __device__ __forceinline__ Vector<T, W> load_vector(const T* p, L2Policy pol) {
    if constexpr (sizeof(Vector<T, W>) == 16)
        if (pol.on) {
            Vector<T, W> v;
            uint32_t* r = reinterpret_cast<uint32_t*>(&v);
            asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                         : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                         : "l"(p), "l"(pol.bits));
            return v;
        }
    return load_vector<W>(p);
}
template <int W, class T> __device__ __forceinline__ void store_vector(T* p, const Vector<T, W>& v, L2Policy pol) {
    if constexpr (sizeof(Vector<T, W>) == 16)
        if (pol.on) {
            const uint32_t* r = reinterpret_cast<const uint32_t*>(&v);
            asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(p), "r"(r[0]), "r"(r[1]),
                         "r"(r[2]), "r"(r[3]), "l"(pol.bits)
                         : "memory");
            return;
        }
    store_vector(p, v);
}

// --- activations fused into outputs ------------------------------------------------------------------------------

// An activation whose function is fixed at compile time: apply_activation's switch folds away. FLOAT16: the result
// is stored as float16, and swish and sigmoid take MUFU's exponential and reciprocal (__expf, __fdividef), whose
// error of a few float ulps is far below float16's rounding, where expf and an IEEE division cost a normalization's
// outputs pass about 25 instructions an element (group norm + swish ran at three quarters of group norm's
// bandwidth).
template <ActivationFunction A, bool FLOAT16 = false>
struct FixedActivation {
    FusedActivation f;  // alpha and beta
    template <class C>
    __device__ __forceinline__ C operator()(C x) const {
        if constexpr (FLOAT16 && A == ActivationFunction::Swish && std::is_same_v<C, float>) {
            return __fdividef(x, 1.0f + __expf(-f.alpha * x));
        } else if constexpr (FLOAT16 && A == ActivationFunction::Sigmoid && std::is_same_v<C, float>) {
            return __fdividef(1.0f, 1.0f + __expf(-x));
        } else {
            FusedActivation fixed = f;
            fixed.function = A;
            return apply_activation(fixed, x);
        }
    }
};
// Any activation, chosen at run time.
struct AnyActivation {
    FusedActivation f;
    template <class C>
    __device__ __forceinline__ C operator()(C x) const { return apply_activation(f, x); }
};

// body(activation) with the function fixed for the ones normalizations carry most (none, relu, swish), else
// chosen per element: a vector's loop then runs without a switch per element, which made kernels bound by
// instructions rather than memory.
template <bool FLOAT16 = false, class F>
__device__ __forceinline__ void with_activation(const FusedActivation& f, F&& body) {
    switch (f.function) {
        case ActivationFunction::None: return body(FixedActivation<ActivationFunction::None, FLOAT16>{f});
        case ActivationFunction::Relu: return body(FixedActivation<ActivationFunction::Relu, FLOAT16>{f});
        case ActivationFunction::Swish: return body(FixedActivation<ActivationFunction::Swish, FLOAT16>{f});
        default: return body(AnyActivation{f});
    }
}

// The executor's stored type for the host's: __half for dml::half (also visit_numeric<device_type>, type_visits.h).
template <class T>
using device_type = std::conditional_t<std::is_same_v<T, half>, __half, T>;

// visit_data_type with the device's stored types.
template <class F>
decltype(auto) visit_type(DataType type, F&& f) {
    return visit_data_type(type, [&]<class T>() -> decltype(auto) { return f.template operator()<device_type<T>>(); });
}

// The same for the float types only (the builders admit nothing else where this is used).
template <class F>
void visit_float_type(DataType type, F&& f) {
    switch (type) {
        case DataType::Float32: return f.template operator()<float>();
        case DataType::Float16: return f.template operator()<__half>();
        case DataType::Float64: return f.template operator()<double>();
        default: throw ValueError("expected a float tensor, got " + std::string(data_type_name(type)));
    }
}

// The same for float16 and float32 alone, for kernels whose builders admit no other type.
template <class F>
void visit_float16_32(DataType type, F&& f) {
    if (type == DataType::Float16) f.template operator()<__half>();
    else f.template operator()<float>();
}

// --- strided indexing ----------------------------------------------------------------------------------------

// Element offsets of N operands walking one shape, after the host merged what it could (StridedLoop,
// executor/strided_layout.h): usually one or two dimensions remain.
template <int N>
struct Indexer {
    uint64_t count = 1;
    int rank = 1;
    uint32_t sizes[kMaxDimensions] = {1};
    int64_t strides[N][kMaxDimensions] = {};

    __device__ __forceinline__ void offsets(uint64_t i, int64_t (&off)[N]) const {
        // 32-bit division where the count allows: 64-bit division is many instructions.
        if (count <= UINT32_MAX) return offsets32(uint32_t(i), off);
#pragma unroll
        for (int k = 0; k < N; ++k) off[k] = 0;
        add_offsets(i, off);
    }
    // offsets(i) where the host made sure that count <= UINT32_MAX: only the 32-bit division is compiled.
    __device__ __forceinline__ void offsets32(uint32_t i, int64_t (&off)[N]) const {
#pragma unroll
        for (int k = 0; k < N; ++k) off[k] = 0;
        add_offsets(i, off);
    }

    // Adds the offsets of element r, dividing in the width of U. One dimension (a packed run, a row of groups) takes
    // no division at all: the unrolled loop below is hundreds of instructions, most of a short kernel's issue slots
    // where a block does little else (a held row's prologue).
    template <class U>
    __device__ __forceinline__ void add_offsets(U r, int64_t (&off)[N]) const {
        if (rank == 1) {
#pragma unroll
            for (int k = 0; k < N; ++k) off[k] += int64_t(r) * strides[k][0];
            return;
        }
#pragma unroll
        for (int d = kMaxDimensions - 1; d > 0; --d) {
            if (d >= rank) continue;
            U q = r / sizes[d], idx = r - q * sizes[d];
            r = q;
#pragma unroll
            for (int k = 0; k < N; ++k) off[k] += int64_t(idx) * strides[k][d];
        }
#pragma unroll
        for (int k = 0; k < N; ++k) off[k] += int64_t(r) * strides[k][0];
    }
};

template <int N>
Indexer<N> make_indexer(const Sizes& shape, const std::array<std::vector<int64_t>, N>& strides) {
    if (shape.size() > kMaxDimensions)  // the fallback below indexes the shape as given
        throw ValueError("the cuda executor indexes at most " + std::to_string(kMaxDimensions) + " dimensions");
    StridedLoop<N> loop(shape, strides);
    Indexer<N> ix;
    ix.rank = int(loop.sizes.size());
    ix.count = 1;
    for (int d = 0; d < ix.rank; ++d) {
        ix.sizes[d] = uint32_t(loop.sizes[d]);  // a merged size can pass 2^32: then it stays split (below)
        ix.count *= loop.sizes[d];
        for (int k = 0; k < N; ++k) ix.strides[k][d] = loop.strides[k][d];
    }
    for (int d = 0; d < ix.rank; ++d)
        if (loop.sizes[d] > UINT32_MAX) {
            // Rare (over 4G elements in one merged run): index the original dimensions instead.
            ix.rank = int(shape.size());
            for (int e = 0; e < ix.rank; ++e) {
                ix.sizes[e] = shape[e];
                for (int k = 0; k < N; ++k) ix.strides[k][e] = strides[k][e];
            }
            break;
        }
    return ix;
}

// --- launches ------------------------------------------------------------------------------------------------

constexpr unsigned kThreads = 256;

// Grid-stride launches fill the device once (2048 threads per multiprocessor) and loop.
inline unsigned blocks_for(uint64_t count, int sm_count) {
    uint64_t want = (count + kThreads - 1) / kThreads;
    uint64_t cap = uint64_t(std::max(sm_count, 1)) * (2048 / kThreads);
    return unsigned(std::max<uint64_t>(1, std::min(want, cap)));
}

// A walk over `vectors` packed vectors in tiles of U * blockDim.x, a block per tile (a grid-stride loop over tiles
// past 2^31 blocks): f.template operator()<K>(v, stride) takes vectors v + k * stride for k < K, a thread's U
// vectors of a tile blockDim.x apart, their loads in flight together. On the H200 a block per tile ran add and
// swish at 0.99x and 1.06x torch's bandwidth where a grid-stride loop over as many blocks as the device holds at
// once ran 0.85x and 0.87x (bench/cuda_variants.cu, fp16 [64M], 2026-12-03); one vector a thread per step left a
// unary map at about 80% of the copy bandwidth.
template <int U, class F>
__device__ __forceinline__ void tiled_vectors(uint64_t vectors, F&& f) {
    const uint64_t tile = uint64_t(U) * blockDim.x;
    for (uint64_t first = uint64_t(blockIdx.x) * tile; first < vectors; first += uint64_t(gridDim.x) * tile) {
        const uint64_t v = first + threadIdx.x;
        if (first + tile <= vectors) {
            f.template operator()<U>(v, blockDim.x);
        } else {
#pragma unroll
            for (int k = 0; k < U; ++k)
                if (v + uint64_t(k) * blockDim.x < vectors) f.template operator()<1>(v + uint64_t(k) * blockDim.x, 0);
        }
    }
}

// The blocks of a tiled_vectors launch of kThreads threads: a block per tile, at least one.
template <int U>
unsigned tile_blocks(uint64_t vectors) {
    const uint64_t tiles = (vectors + uint64_t(U) * kThreads - 1) / (uint64_t(U) * kThreads);
    return unsigned(std::clamp<uint64_t>(tiles, 1, INT32_MAX));
}

template <int N, class F>
__global__ void __launch_bounds__(kThreads) for_each_kernel(Indexer<N> ix, F f) {
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < ix.count;
         i += uint64_t(gridDim.x) * blockDim.x) {
        int64_t off[N];
        ix.offsets(i, off);
        f(i, off);
    }
}

// Runs f(i, offsets) for every element of the indexer on `stream`.
template <int N, class F>
void for_each(const Indexer<N>& ix, const F& f, int sm_count, cudaStream_t stream, const char* what) {
    for_each_kernel<N, F><<<blocks_for(ix.count, sm_count), kThreads, 0, stream>>>(ix, f);
    check_launch(what);
}

}  // namespace dml::cuda
