// Candidate kernels outside the executor, to choose a scheme before changing it: layer norm rows, packed
// element-wise maps (bench/README.md, run K), pipelined layer norm rows and group norm by slabs (run N), and the
// read-once group norms of runs O to R (held on chip, clusters, through L2, producers, one grid-wide wait), float16,
// with extern "C" launchers that bench_cuda_variants.py calls through ctypes next to torch. Build:
// nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC cuda_variants.cu -o cuda_variants.so. A block's thread count is a multiple of 32 (the reductions assume whole warps).
#include <cuda_fp16.h>
#include <cuda/atomic>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#include <algorithm>
#include <cstdint>
struct alignas(16) V8 { __half2 h[4]; };

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int m = 16; m; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}
template <int T> __device__ __forceinline__ float block_sum(float v, float* sh) {
  v = warp_sum(v);
  if constexpr (T > 32) {
    __syncthreads();
    if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0;
#pragma unroll
    for (int w = 0; w < T / 32; ++w) v += sh[w];
  }
  return v;
}
template <int T> __device__ __forceinline__ float2 block_sum2(float2 v, float2* sh) {
#pragma unroll
  for (int m = 16; m; m >>= 1) { v.x += __shfl_xor_sync(~0u, v.x, m); v.y += __shfl_xor_sync(~0u, v.y, m); }
  if constexpr (T > 32) {
    __syncthreads();
    if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
    __syncthreads();
    v = {0, 0};
#pragma unroll
    for (int w = 0; w < T / 32; ++w) { v.x += sh[w].x; v.y += sh[w].y; }
  }
  return v;
}

// The sum of the elements of a thread's K vectors, and their squared deviations from m.
template <int K>
__device__ __forceinline__ float vectors_sum(const V8 (&v)[K]) {
  float sum = 0;
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int j = 0; j < 4; ++j) { float2 f = __half22float2(v[k].h[j]); sum += f.x + f.y; }
  return sum;
}
template <int K>
__device__ __forceinline__ float vectors_squares(const V8 (&v)[K], float m) {
  float sq = 0;
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float2 f = __half22float2(v[k].h[j]);
      sq += (f.x - m) * (f.x - m) + (f.y - m) * (f.y - m);
    }
  return sq;
}

// The mean of the n elements a block of T threads holds (K vectors a thread) and their squared deviations from it,
// in two passes over the registers.
template <int T, int K>
__device__ __forceinline__ float2 held_stats(const V8 (&v)[K], int n, float* sh) {
  const float mean = block_sum<T>(vectors_sum(v), sh) / n;
  return {mean, block_sum<T>(vectors_squares(v, mean), sh)};
}

// y = (x - mean) * rstd * s + b of the row's vectors a thread holds.
template <int T, int K>
__device__ __forceinline__ void ln_store(const V8 (&v)[K], const V8* sv, const V8* bv, V8* yr, float mean,
                                         float rstd) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const V8 sc = sv[threadIdx.x + k * T], bi = bv[threadIdx.x + k * T];
    V8 o;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float2 f = __half22float2(v[k].h[j]), fs = __half22float2(sc.h[j]), fb = __half22float2(bi.h[j]);
      o.h[j] = __floats2half2_rn((f.x - mean) * rstd * fs.x + fb.x, (f.y - mean) * rstd * fs.y + fb.y);
    }
    yr[threadIdx.x + k * T] = o;
  }
}

// One row per block of T threads, each holding K vectors of 8 halves. MODE 0: two reductions (mean, then squared
// deviations from registers); MODE 1: one reduction of shifted sums (shift = row's first element).
template <int T, int K, int MODE, int MINB>
__global__ void __launch_bounds__(T, MINB) ln_kernel(const __half* __restrict__ x, const __half* __restrict__ s,
                                                     const __half* __restrict__ b, __half* __restrict__ y, int C,
                                                     float eps) {
  __shared__ float sh[T / 32];
  __shared__ float2 sh2[T / 32];
  const uint64_t row = blockIdx.x;
  const V8* xr = reinterpret_cast<const V8*>(x + row * C);
  V8 v[K];
#pragma unroll
  for (int k = 0; k < K; ++k) v[k] = xr[threadIdx.x + k * T];
  float mean, rstd;
  if constexpr (MODE == 0) {
    const float2 st = held_stats<T, K>(v, C, sh);
    mean = st.x;
    rstd = rsqrtf(st.y / C + eps);
  } else {
    const float shift = __half2float(x[row * C]);
    float2 a = {0, 0};
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float2 f = __half22float2(v[k].h[j]);
        float d0 = f.x - shift, d1 = f.y - shift;
        a.x += d0 + d1;
        a.y += d0 * d0 + d1 * d1;
      }
    a = block_sum2<T>(a, sh2);
    const float m = a.x / C;
    mean = shift + m;
    rstd = rsqrtf(fmaxf(a.y / C - m * m, 0.f) + eps);
  }
  ln_store<T, K>(v, reinterpret_cast<const V8*>(s), reinterpret_cast<const V8*>(b), reinterpret_cast<V8*>(y + row * C),
                 mean, rstd);
}

// Element-wise: OP 0 add, 1 swish. SCHEME 0: grid-stride, U vectors a step (stride apart), blocks = SMs * BPS.
// SCHEME 1: one-shot blocks of U * T vectors, thread's vectors T apart.
template <int OP> __device__ __forceinline__ V8 f8(V8 a, V8 b) {
  V8 o;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float2 p = __half22float2(a.h[j]);
    if constexpr (OP == 0) { float2 q = __half22float2(b.h[j]); o.h[j] = __floats2half2_rn(p.x + q.x, p.y + q.y); }
    else o.h[j] = __floats2half2_rn(p.x / (1.f + __expf(-p.x)), p.y / (1.f + __expf(-p.y)));
  }
  return o;
}
template <int OP, int U, int T>
__global__ void __launch_bounds__(T) ew_gs(const V8* __restrict__ a, const V8* __restrict__ b, V8* __restrict__ y, uint64_t n) {
  const uint64_t stride = uint64_t(gridDim.x) * T;
  uint64_t v = uint64_t(blockIdx.x) * T + threadIdx.x;
  for (; v + (U - 1) * stride < n; v += U * stride) {
    V8 p[U], q[U];
#pragma unroll
    for (int k = 0; k < U; ++k) { p[k] = a[v + k * stride]; if (OP == 0) q[k] = b[v + k * stride]; }
#pragma unroll
    for (int k = 0; k < U; ++k) y[v + k * stride] = f8<OP>(p[k], q[k]);
  }
  for (; v < n; v += stride) { V8 q; if (OP == 0) q = b[v]; y[v] = f8<OP>(a[v], q); }
}
template <int OP, int U, int T>
__global__ void __launch_bounds__(T) ew_os(const V8* __restrict__ a, const V8* __restrict__ b, V8* __restrict__ y, uint64_t n) {
  const uint64_t base = uint64_t(blockIdx.x) * U * T + threadIdx.x;
  V8 p[U], q[U];
#pragma unroll
  for (int k = 0; k < U; ++k) if (base + k * T < n) { p[k] = a[base + k * T]; if (OP == 0) q[k] = b[base + k * T]; }
#pragma unroll
  for (int k = 0; k < U; ++k) if (base + k * T < n) y[base + k * T] = f8<OP>(p[k], q[k]);
}

static int sms() { int d, n; cudaGetDevice(&d); cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d); return n; }

#define LN(T, K, M, B) if (t == T && k == K && mode == M && minb == B) { ln_kernel<T, K, M, B><<<rows, T, 0, st>>>(x, s, b, y, C, eps); return 0; }
extern "C" int ln(int t, int k, int mode, int minb, const __half* x, const __half* s, const __half* b, __half* y,
                  int rows, int C, float eps, cudaStream_t st) {
  if (t * k * 8 != C) return 2;
  LN(128, 4, 0, 8) LN(128, 4, 1, 8) LN(128, 4, 0, 12) LN(128, 4, 1, 12) LN(128, 4, 0, 16) LN(128, 4, 1, 16)
  LN(256, 2, 0, 4) LN(256, 2, 1, 4) LN(256, 2, 0, 8) LN(256, 2, 1, 8) LN(512, 1, 0, 4) LN(512, 1, 1, 4)
  LN(64, 8, 0, 16) LN(64, 8, 1, 16) LN(64, 8, 0, 8) LN(64, 8, 1, 8)
  LN(256, 4, 0, 4) LN(256, 4, 1, 4) LN(256, 4, 0, 8) LN(256, 4, 1, 8) LN(512, 2, 0, 2) LN(512, 2, 1, 4)
  LN(128, 8, 0, 8) LN(128, 8, 1, 8) LN(1024, 1, 1, 2)
  LN(32, 5, 0, 16) LN(32, 5, 1, 16)
  return 1;
}
#define EW(O, S, U, T, B) if (op == O && scheme == S && u == U && t == T && bps == B) { \
  if (S == 0) ew_gs<O, U, T><<<sms() * B, T, 0, st>>>(a, b, y, n); \
  else ew_os<O, U, T><<<(n + U * T - 1) / (U * T), T, 0, st>>>(a, b, y, n); return 0; }
extern "C" int ew(int op, int scheme, int u, int t, int bps, const V8* a, const V8* b, V8* y, uint64_t n, cudaStream_t st) {
  EW(0, 0, 2, 256, 8) EW(1, 0, 2, 256, 8) EW(0, 0, 4, 256, 8) EW(1, 0, 4, 256, 8) EW(0, 0, 2, 256, 16) EW(1, 0, 2, 256, 16)
  EW(0, 0, 1, 256, 8) EW(1, 0, 1, 256, 8) EW(0, 0, 2, 512, 4) EW(1, 0, 2, 512, 4)
  EW(0, 1, 1, 128, 0) EW(1, 1, 1, 128, 0) EW(0, 1, 2, 128, 0) EW(1, 1, 2, 128, 0) EW(0, 1, 4, 128, 0) EW(1, 1, 4, 128, 0)
  EW(0, 1, 2, 256, 0) EW(1, 1, 2, 256, 0) EW(0, 1, 4, 256, 0) EW(1, 1, 4, 256, 0) EW(0, 1, 8, 128, 0) EW(1, 1, 8, 128, 0)
  return 1;
}

// --- run N: rows pipelined, groups by slabs ------------------------------------------------------------------------

// Layer norm rows, a block of T threads x K vectors walking rows blockIdx.x, + gridDim.x, ...: the next row's vectors
// are loaded before the current row is reduced, so that a block keeps its loads in flight through its reductions.
template <int T, int K>
__device__ __forceinline__ void ln_row_out(const V8 (&v)[K], const V8* sv, const V8* bv, V8* yr, int C, float eps,
                                           float* sh) {
  const float2 st = held_stats<T, K>(v, C, sh);
  ln_store<T, K>(v, sv, bv, yr, st.x, rsqrtf(st.y / C + eps));
}

template <int T, int K, int MINB>
__global__ void __launch_bounds__(T, MINB) ln_prefetch(const __half* __restrict__ x, const __half* __restrict__ s,
                                                       const __half* __restrict__ b, __half* __restrict__ y, int rows,
                                                       int C, float eps) {
  __shared__ float sh[T / 32];
  const V8* sv = reinterpret_cast<const V8*>(s);
  const V8* bv = reinterpret_cast<const V8*>(b);
  int row = blockIdx.x;
  V8 cur[K];
#pragma unroll
  for (int k = 0; k < K; ++k) cur[k] = reinterpret_cast<const V8*>(x + uint64_t(row) * C)[threadIdx.x + k * T];
  for (; row < rows; row += gridDim.x) {
    const int next = row + gridDim.x;
    V8 nxt[K];
    if (next < rows)
#pragma unroll
      for (int k = 0; k < K; ++k) nxt[k] = reinterpret_cast<const V8*>(x + uint64_t(next) * C)[threadIdx.x + k * T];
    ln_row_out<T, K>(cur, sv, bv, reinterpret_cast<V8*>(y + uint64_t(row) * C), C, eps, sh);
#pragma unroll
    for (int k = 0; k < K; ++k) cur[k] = nxt[k];
  }
}

// The same rows through a ring of S row buffers in shared memory filled by the bulk copy engine (cp.async.bulk, one
// thread issuing, an mbarrier a buffer): S - 1 rows in flight a block while it reduces one, in no registers.
__device__ __forceinline__ uint32_t smem_u32(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void bulk_row(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void wait_parity(uint64_t* bar, uint32_t parity) {
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}"
               ::"r"(smem_u32(bar)), "r"(parity) : "memory");
}
template <int T, int K, int S>
__global__ void __launch_bounds__(T) ln_bulk(const __half* __restrict__ x, const __half* __restrict__ s,
                                             const __half* __restrict__ b, __half* __restrict__ y, int rows, int C,
                                             float eps) {
  extern __shared__ __align__(128) unsigned char ring_bytes[];
  V8* ring = reinterpret_cast<V8*>(ring_bytes);  // S rows of T * K vectors
  __shared__ __align__(8) uint64_t bar[S];
  __shared__ float sh[T / 32];
  const uint32_t bytes = uint32_t(C) * 2;
  if (threadIdx.x == 0) {
    for (int i = 0; i < S; ++i) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&bar[i])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int i = 0; i < S; ++i) {
      const int r = blockIdx.x + i * gridDim.x;
      if (r < rows) bulk_row(ring + i * T * K, x + uint64_t(r) * C, bytes, &bar[i]);
    }
  }
  __syncthreads();
  const V8* sv = reinterpret_cast<const V8*>(s);
  const V8* bv = reinterpret_cast<const V8*>(b);
  int i = 0;
  for (int row = blockIdx.x; row < rows; row += gridDim.x, ++i) {
    const int slot = i % S;
    wait_parity(&bar[slot], uint32_t(i / S) & 1u);
    V8 v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = ring[slot * T * K + threadIdx.x + k * T];
    __syncthreads();  // every thread has its vectors: the slot may be refilled
    if (threadIdx.x == 0) {
      const int r = row + S * gridDim.x;
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      if (r < rows) bulk_row(ring + slot * T * K, x + uint64_t(r) * C, bytes, &bar[slot]);
    }
    ln_row_out<T, K>(v, sv, bv, reinterpret_cast<V8*>(y + uint64_t(row) * C), C, eps, sh);
  }
}

#define LNP(TT, KK, B) if (t == TT && k == KK && minb == B) { ln_prefetch<TT, KK, B><<<std::min(rows, sms() * B), TT, 0, st>>>(x, s, b, y, rows, C, eps); return 0; }
#define LNB(TT, KK, SS, B) if (t == TT && k == KK && stages == SS && minb == B) { \
  const int smem = SS * TT * KK * 16; \
  cudaFuncSetAttribute(ln_bulk<TT, KK, SS>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); \
  ln_bulk<TT, KK, SS><<<std::min(rows, sms() * B), TT, smem, st>>>(x, s, b, y, rows, C, eps); return 0; }
// stages 0: ln_prefetch with blocks = SMs * minb; else ln_bulk with that many buffers a block.
extern "C" int ln2(int t, int k, int stages, int minb, const __half* x, const __half* s, const __half* b, __half* y,
                   int rows, int C, float eps, cudaStream_t st) {
  if (t * k * 8 != C) return 2;
  if (stages == 0) { LNP(256, 2, 4) LNP(256, 2, 6) LNP(256, 2, 8) LNP(128, 4, 8) LNP(128, 4, 12) LNP(256, 4, 4) LNP(256, 4, 6) LNP(512, 2, 3) }
  LNB(256, 2, 2, 4) LNB(256, 2, 3, 4) LNB(256, 2, 4, 4) LNB(256, 2, 3, 6) LNB(256, 2, 4, 6) LNB(128, 4, 3, 6) LNB(128, 4, 4, 8)
  LNB(256, 4, 2, 3) LNB(256, 4, 3, 3) LNB(512, 2, 2, 3) LNB(512, 2, 3, 2)
  return 1;
}

// Group norm, x [G][CPG][HW] with a scale and bias per channel: work items are chunks of E = T * K * 8 elements of a
// channel's image. Partials: (count, mean, squared deviations) of a chunk; combine: a block per group, the chunks in
// order (Chan); apply: y = (x - mean) * rstd * scale + bias. By slabs of groups: the partials of slab s + 1 and the
// outputs of slab s in one launch, so that the outputs' second read of slab s finds it in L2 (read there by the
// previous launch). HINT 1: the partials' loads ask L2 to keep their lines (evict_last), the outputs' loads and
// stores to drop theirs first (evict_first).
struct Stat { float n, m, q; };
__device__ __forceinline__ Stat chan(Stat p, Stat q) {
  const float n = p.n + q.n;
  if (n == 0.f) return p;
  const float d = q.m - p.m, f = q.n / n;
  return {n, p.m + d * f, p.q + q.q + d * d * p.n * f};
}
__device__ __forceinline__ V8 ld_hint(const V8* p, uint64_t pol) {
  V8 v;
  uint32_t* r = reinterpret_cast<uint32_t*>(&v);
  asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "l"(p), "l"(pol));
  return v;
}
__device__ __forceinline__ void st_hint(V8* p, V8 v, uint64_t pol) {
  const uint32_t* r = reinterpret_cast<const uint32_t*>(&v);
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;"
               ::"l"(p), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "l"(pol) : "memory");
}
__device__ __forceinline__ uint64_t policy(bool last) {
  uint64_t pol;
  if (last) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  else asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
struct GnArgs {
  const __half *x, *s, *b;
  __half* y;
  Stat *partials, *totals;
  int cpg, hw;                    // channels a group, elements a channel
  int items;                      // chunks a group
};
template <int T, int K, int HINT>
__device__ __forceinline__ void gn_item(const GnArgs& a, int item, bool apply, uint64_t read, uint64_t write) {
  constexpr int E = T * K * 8;
  __shared__ float sh[T / 32];
  const int group = item / a.items, chan_ = (item % a.items) / (a.hw / E);
  const V8* xv = reinterpret_cast<const V8*>(a.x + uint64_t(item) * E);
  V8 v[K];
#pragma unroll
  for (int k = 0; k < K; ++k) v[k] = HINT ? ld_hint(xv + threadIdx.x + k * T, read) : xv[threadIdx.x + k * T];
  if (!apply) {
    const float2 st = held_stats<T, K>(v, E, sh);
    if (threadIdx.x == 0) a.partials[item] = {float(E), st.x, st.y};
    return;
  }
  const Stat t = a.totals[group];
  const int c = group * a.cpg + chan_;
  const float rstd = rsqrtf(t.q / t.n + 1e-5f);
  const float sc = __half2float(a.s[c]) * rstd, bi = __half2float(a.b[c]) - t.m * sc;
  V8* yv = reinterpret_cast<V8*>(a.y + uint64_t(item) * E);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    V8 o;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float2 f = __half22float2(v[k].h[j]);
      o.h[j] = __floats2half2_rn(fmaf(f.x, sc, bi), fmaf(f.y, sc, bi));
    }
    if (HINT) st_hint(yv + threadIdx.x + k * T, o, write);
    else yv[threadIdx.x + k * T] = o;
  }
}
// Blocks take apply items [a0, a0 + na) and partial items [p0, p0 + np), alternately while both last.
template <int T, int K, int HINT>
__global__ void __launch_bounds__(T) gn_pass(GnArgs a, int a0, int na, int p0, int np) {
  const int both = 2 * min(na, np), b = blockIdx.x;
  bool apply;
  int item;
  if (b < both) apply = (b & 1) == 0, item = (apply ? a0 : p0) + b / 2;
  else if (na > np) apply = true, item = a0 + (b - both) / 1 + both / 2;
  else apply = false, item = p0 + (b - both) + both / 2;
  const uint64_t pol = HINT ? policy(!apply) : 0;
  gn_item<T, K, HINT>(a, item, apply, pol, pol);
}
// The Chan combine of one Stat a thread over a block of T threads; every thread gets the total.
template <int T>
__device__ __forceinline__ Stat block_chan(Stat t, Stat* sh) {
#pragma unroll
  for (int m = 16; m; m >>= 1)
    t = chan(t, Stat{__shfl_xor_sync(~0u, t.n, m), __shfl_xor_sync(~0u, t.m, m), __shfl_xor_sync(~0u, t.q, m)});
  __syncthreads();
  if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = t;
  __syncthreads();
  Stat r = sh[0];
#pragma unroll
  for (int w = 1; w < T / 32; ++w) r = chan(r, sh[w]);
  return r;
}
__global__ void __launch_bounds__(256) gn_combine(GnArgs a, int g0) {
  const int group = g0 + blockIdx.x;
  const Stat* p = a.partials + uint64_t(group) * a.items;
  Stat t{0, 0, 0};
  for (int j = threadIdx.x; j < a.items; j += 256) t = chan(t, p[j]);
  __shared__ Stat sh[8];
  t = block_chan<256>(t, sh);
  if (threadIdx.x == 0) a.totals[group] = t;
}
// MIXED: a launch takes the outputs of slab s and the partials of slab s + 1; else a slab's partials, combine and
// outputs are three launches back to back.
template <int T, int K, int HINT>
void gn_slabs(GnArgs a, int groups, int slab, bool mixed, cudaStream_t st) {
  const int ipg = a.items;
  auto pass = [&](int ga, int nga, int gp, int ngp) {
    const int na = nga * ipg, np = ngp * ipg;
    if (na + np) gn_pass<T, K, HINT><<<na + np, T, 0, st>>>(a, ga * ipg, na, gp * ipg, np);
  };
  int prev = 0, prev_n = 0;
  for (int g = 0; g < groups; g += slab) {
    const int n = std::min(slab, groups - g);
    pass(mixed ? prev : 0, mixed ? prev_n : 0, g, n);
    gn_combine<<<n, 256, 0, st>>>(a, g);
    if (!mixed) pass(g, n, 0, 0);
    prev = g, prev_n = n;
  }
  if (mixed) pass(prev, prev_n, 0, 0);
}
// hint 0: no cache hints, 1: hints, 2: hints and unmixed launches.
#define GN(TT, KK, HH) if (t == TT && k == KK && (hint == HH || (HH == 1 && hint == 2))) { \
  gn_slabs<TT, KK, HH>(a, groups, slab, hint != 2, st); return 0; }
// x [groups][cpg][hw] float16; ws: groups * (hw * cpg / (t * k * 8) + 1) Stats.
extern "C" int gn(int t, int k, int hint, int slab, const __half* x, const __half* s, const __half* b, __half* y,
                  void* ws, int groups, int cpg, int hw, cudaStream_t st) {
  if (hw % (t * k * 8)) return 2;
  GnArgs a{x, s, b, y, static_cast<Stat*>(ws), nullptr, cpg, hw, cpg * (hw / (t * k * 8))};
  a.totals = a.partials + uint64_t(groups) * a.items;
  GN(128, 2, 0) GN(128, 2, 1) GN(256, 2, 0) GN(256, 2, 1) GN(128, 4, 0) GN(128, 4, 1) GN(256, 4, 1)
  return 1;
}
extern "C" int l2_bytes() { int d, n; cudaGetDevice(&d); cudaDeviceGetAttribute(&n, cudaDevAttrL2CacheSize, d); return n; }

// A vector's group norm outputs v * sc + bi (the coefficients of its channel); ACT 1: their swish.
template <int ACT>
__device__ __forceinline__ V8 gn_out(const V8& v, float sc, float bi) {
  V8 o;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float2 f = __half22float2(v.h[j]);
    float z0 = fmaf(f.x, sc, bi), z1 = fmaf(f.y, sc, bi);
    if (ACT) z0 = __fdividef(z0, 1.f + __expf(-z0)), z1 = __fdividef(z1, 1.f + __expf(-z1));
    o.h[j] = __floats2half2_rn(z0, z1);
  }
  return o;
}

// The sum of this thread's elements of the n vectors buf[i * T + threadIdx.x], and their squared deviations from m.
template <int T>
__device__ __forceinline__ float held_sum(const V8* buf, int n) {
  float sum = 0;
  for (int i = 0; i < n; ++i) {
    const V8 v = buf[i * T + threadIdx.x];
#pragma unroll
    for (int j = 0; j < 4; ++j) { float2 f = __half22float2(v.h[j]); sum += f.x + f.y; }
  }
  return sum;
}
template <int T>
__device__ __forceinline__ float held_squares(const V8* buf, int n, float m) {
  float sq = 0;
  for (int i = 0; i < n; ++i) {
    const V8 v = buf[i * T + threadIdx.x];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float2 f = __half22float2(v.h[j]);
      sq += (f.x - m) * (f.x - m) + (f.y - m) * (f.y - m);
    }
  }
  return sq;
}

// --- run O: group norm held on chip ---------------------------------------------------------------------------------

// Group norm whose groups pass through shared memory once: a grid that the GPU holds at once (a cooperative launch)
// walks the groups in order, each block taking chunks b, b + P, ... of every group (chunks of E = T * 8 elements, a
// vector a thread, inside one channel), through a ring of S buffers filled by bulk copies S - 1 groups ahead. At
// group g a block starts loading group g + S - 1, publishes the (count, mean, squared deviations) of its chunks of
// group g + 1 (a counter a group, zeroed before the launch), waits until the P blocks have published group g,
// combines their partials in one fixed order (every block computes the same totals) and writes group g's outputs
// from shared memory. So x is read from DRAM once, and the wait for the slowest block overlaps the loads ahead.
// ACT 1: swish of the outputs.
constexpr int kMaxRing = 16;
template <int T, int ACT>
__global__ void __launch_bounds__(T) gn_chip(GnArgs a, int groups, int per_image, int held, int S, unsigned* counters,
                                             float eps) {
  extern __shared__ __align__(128) unsigned char chip_bytes[];
  V8* ring = reinterpret_cast<V8*>(chip_bytes);  // S buffers of `held` chunks of T vectors
  __shared__ __align__(8) uint64_t bar[kMaxRing];
  __shared__ Stat shs[T / 32];
  __shared__ float sh[T / 32];
  constexpr int E = T * 8;
  const int P = gridDim.x, b = blockIdx.x;
  const int mine = b < a.items ? (a.items - b + P - 1) / P : 0;  // chunks of each group this block takes
  const uint64_t group_elems = uint64_t(a.items) * E;
  auto buffer = [&](int g) { return ring + uint64_t(g % S) * held * T; };
  auto load = [&](int g) {  // thread 0: group g's chunks into its buffer
    if (mine == 0 || g >= groups) return;
    uint64_t* bb = &bar[g % S];
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bb)), "r"(mine * E * 2)
                 : "memory");
    for (int i = 0; i < mine; ++i)
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   ::"r"(smem_u32(buffer(g) + i * T)), "l"(a.x + g * group_elems + uint64_t(b + i * P) * E),
                   "r"(E * 2), "r"(smem_u32(bb)) : "memory");
  };
  auto publish = [&](int g) {  // this block's partial of group g: its mean, then its squared deviations
    if (g >= groups) return;
    const V8* v8 = buffer(g);
    if (mine) wait_parity(&bar[g % S], uint32_t(g / S) & 1u);
    const float sum = held_sum<T>(v8, mine);
    const float n = float(mine) * E;
    const float mean = mine ? block_sum<T>(sum, sh) / n : 0.f;
    float sq = held_squares<T>(v8, mine, mean);
    if (mine) sq = block_sum<T>(sq, sh);
    if (threadIdx.x == 0) {
      a.partials[uint64_t(g) * P + b] = {n, mean, sq};
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(counters[g]).fetch_add(1, cuda::memory_order_release);
    }
  };
  if (threadIdx.x == 0) {
    for (int i = 0; i < S; ++i) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&bar[i])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int g = 0; g + 1 < S; ++g) load(g);
  }
  __syncthreads();
  publish(0);
  for (int g = 0; g < groups; ++g) {
    if (threadIdx.x == 0) {
      // The buffer of group g + S - 1 was last read by group g - 1's outputs, which passed the barrier that ended
      // that group; the fence orders those reads before the bulk copies' writes.
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      load(g + S - 1);
    }
    publish(g + 1);
    if (threadIdx.x == 0) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(counters[g]);
      while (done.load(cuda::memory_order_acquire) < unsigned(P)) __nanosleep(32);
    }
    __syncthreads();
    Stat t{0, 0, 0};
    for (int j = threadIdx.x; j < P; j += T) {
      const Stat* p = a.partials + uint64_t(g) * P + j;
      t = chan(t, Stat{__ldcg(&p->n), __ldcg(&p->m), __ldcg(&p->q)});
    }
    t = block_chan<T>(t, shs);
    const float rstd = rsqrtf(t.q / t.n + eps);
    const int c0 = g % per_image * a.cpg;
    const V8* v8 = buffer(g);
    for (int i = 0; i < mine; ++i) {
      const int chunk = b + i * P;
      const int c = c0 + chunk / (a.hw / E);
      const float sc = __half2float(a.s[c]) * rstd, bi = __half2float(a.b[c]) - t.m * sc;
      const V8 v = v8[i * T + threadIdx.x];
      const V8 o = gn_out<ACT>(v, sc, bi);
      reinterpret_cast<V8*>(a.y + g * group_elems + uint64_t(chunk) * E)[threadIdx.x] = o;
    }
    __syncthreads();  // group g's buffer is free for group g + S
  }
}
// stages 0: as many buffers as fit (at most kMaxRing).
template <int T, int ACT>
int gn_chip_launch(GnArgs a, int images, int G, int blocks_per_sm, int stages, unsigned* counters, cudaStream_t st) {
  if (a.hw % (T * 8)) return 2;
  int P = sms() * blocks_per_sm, held = (a.items + P - 1) / P, groups = images * G;
  const size_t per_buffer = size_t(held) * T * 16;
  int S = stages ? stages : std::min<int>(kMaxRing, int(227 * 1024 / blocks_per_sm / per_buffer));
  S = std::min(S, std::max(groups, 2));
  float eps = 1e-5f;
  const size_t smem = S * per_buffer;
  if (S < 2 || cudaFuncSetAttribute(gn_chip<T, ACT>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)) != cudaSuccess)
    return 3;
  int occ = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, gn_chip<T, ACT>, T, smem);
  if (occ < blocks_per_sm) return 4;
  cudaMemsetAsync(counters, 0, sizeof(unsigned) * groups, st);
  void* args[] = {&a, &groups, &G, &held, &S, &counters, &eps};
  return cudaLaunchCooperativeKernel(reinterpret_cast<void*>(gn_chip<T, ACT>), dim3(P), dim3(T), args, smem, st)
             == cudaSuccess ? 0 : 5;
}
#define GNC(TT, AA) if (t == TT && act == AA) return gn_chip_launch<TT, AA>(a, images, G, blocks_per_sm, stages, counters, st);
// x [images][G][cpg][hw] float16; ws: images * G * sms * blocks_per_sm Stats, then images * G counters.
extern "C" int gn_held(int t, int act, int blocks_per_sm, int stages, const __half* x, const __half* s, const __half* b, __half* y,
                       void* ws, int images, int G, int cpg, int hw, cudaStream_t st) {
  GnArgs a{x, s, b, y, static_cast<Stat*>(ws), nullptr, cpg, hw, cpg * (hw / (t * 8))};
  unsigned* counters = reinterpret_cast<unsigned*>(a.partials + uint64_t(images) * G * sms() * blocks_per_sm);
  GNC(128, 0) GNC(256, 0) GNC(256, 1) GNC(512, 0)
  return 1;
}

// --- nineteenth session: group norm held by clusters ----------------------------------------------------------------

// Group norm whose groups a cluster of C blocks holds: cluster q of the Q resident clusters takes groups q, q + Q, ...;
// block r of a cluster takes chunks r, r + C, ... of a group (E = T * 8 elements of one channel), the first `held` of
// them bulk-copied into its shared memory, the rest read from global memory twice (statistics, then outputs). Each
// block's partial (count, mean, squared deviations) sits in its shared memory; after a cluster barrier every block
// combines the C partials through distributed shared memory in one fixed order, then writes its outputs. No
// grid-wide wait: clusters run their groups independently. ACT 1: swish of the outputs.
__device__ __forceinline__ Stat vec_stat(const V8& v) {
  float f[8];
#pragma unroll
  for (int j = 0; j < 4; ++j) { float2 p = __half22float2(v.h[j]); f[2 * j] = p.x; f[2 * j + 1] = p.y; }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) s += f[j];
  const float m = s * 0.125f;
  float q = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) q += (f[j] - m) * (f[j] - m);
  return {8.f, m, q};
}
template <int T, int ACT>
__global__ void __launch_bounds__(T) gn_clu(GnArgs a, int groups, int per_image, int held, float eps) {
  extern __shared__ __align__(128) unsigned char clu_bytes[];
  V8* buf = reinterpret_cast<V8*>(clu_bytes);
  __shared__ __align__(8) uint64_t bar;
  __shared__ Stat part[2], shs[T / 32], total;
  cg::cluster_group cl = cg::this_cluster();
  const int C = int(cl.num_blocks()), r = int(cl.block_rank());
  const int Q = gridDim.x / C, q = blockIdx.x / C;
  constexpr int E = T * 8;
  const int mine = r < a.items ? (a.items - r + C - 1) / C : 0;
  const int hold = min(mine, held);
  const uint64_t group_elems = uint64_t(a.items) * E;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  int it = 0;
  for (int g = q; g < groups; g += Q, ++it) {
    const __half* xg = a.x + g * group_elems;
    if (threadIdx.x == 0 && hold) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(&bar)), "r"(hold * E * 2)
                   : "memory");
      for (int i = 0; i < hold; ++i)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(smem_u32(buf + i * T)), "l"(xg + uint64_t(r + i * C) * E), "r"(E * 2), "r"(smem_u32(&bar))
                     : "memory");
    }
    Stat st{0, 0, 0};
#pragma unroll 4
    for (int i = hold; i < mine; ++i)
      st = chan(st, vec_stat(reinterpret_cast<const V8*>(xg + uint64_t(r + i * C) * E)[threadIdx.x]));
    if (hold) {
      wait_parity(&bar, uint32_t(it) & 1u);
      const float n = float(hold) * 8, mean = held_sum<T>(buf, hold) / n;
      st = chan(st, Stat{n, mean, held_squares<T>(buf, hold, mean)});
    }
    st = block_chan<T>(st, shs);
    if (threadIdx.x == 0) part[it & 1] = st;
    cl.sync();
    if (threadIdx.x < 32) {
      Stat p{0, 0, 0};
      if (int(threadIdx.x) < C) p = *cl.map_shared_rank(&part[it & 1], int(threadIdx.x));
#pragma unroll
      for (int m = 1; m < 32; m <<= 1)
        p = chan(p, Stat{__shfl_xor_sync(~0u, p.n, m), __shfl_xor_sync(~0u, p.m, m), __shfl_xor_sync(~0u, p.q, m)});
      if (threadIdx.x == 0) total = p;
    }
    __syncthreads();
    const Stat t = total;
    const float rstd = rsqrtf(t.q / t.n + eps);
    const int c0 = g % per_image * a.cpg;
    for (int i = 0; i < mine; ++i) {
      const int chunk = r + i * C;
      const int c = c0 + chunk / (a.hw / E);
      const float sc = __half2float(a.s[c]) * rstd, bi = __half2float(a.b[c]) - t.m * sc;
      const V8 v = i < hold ? buf[i * T + threadIdx.x] : reinterpret_cast<const V8*>(xg + uint64_t(chunk) * E)[threadIdx.x];
      const V8 o = gn_out<ACT>(v, sc, bi);
      reinterpret_cast<V8*>(a.y + g * group_elems + uint64_t(chunk) * E)[threadIdx.x] = o;
    }
    __syncthreads();  // the buffer is free for the next group's copies
  }
  cl.sync();  // no block leaves while another may still read its partials
}
template <int T, int ACT>
int gn_clu_launch(GnArgs a, int groups, int G, int C, int budget_kb, float eps, cudaStream_t st, int* clusters) {
  if (a.hw % (T * 8)) return 2;
  const int mine = (a.items + C - 1) / C;
  const int held = std::min(mine, budget_kb * 1024 / (T * 16));
  const size_t smem = size_t(held) * T * 16;
  auto k = gn_clu<T, ACT>;
  if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)) != cudaSuccess) return 3;
  if (C > 8 && cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) return 3;
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = C, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr, cfg.numAttrs = 1, cfg.blockDim = dim3(T), cfg.dynamicSmemBytes = smem, cfg.stream = st;
  cfg.gridDim = dim3(C * 64);
  int Q = 0;
  if (cudaOccupancyMaxActiveClusters(&Q, k, &cfg) != cudaSuccess || Q < 1) return 4;
  Q = std::min(Q, groups);
  if (clusters) *clusters = Q;
  cfg.gridDim = dim3(Q * C);
  return cudaLaunchKernelEx(&cfg, k, a, groups, G, held, eps) == cudaSuccess ? 0 : 5;
}
// x [images][G][cpg][hw] float16; budget_kb: shared memory for held chunks a block; clusters: the resident count.
extern "C" int gn_cluster(int t, int act, int c, int budget_kb, const __half* x, const __half* s, const __half* b,
                          __half* y, int images, int G, int cpg, int hw, cudaStream_t st, int* clusters) {
  GnArgs a{x, s, b, y, nullptr, nullptr, cpg, hw, cpg * (hw / (t * 8))};
  const int groups = images * G;
#define GNQ(TT, AA) if (t == TT && act == AA) return gn_clu_launch<TT, AA>(a, groups, G, c, budget_kb, 1e-5f, st, clusters);
  GNQ(256, 0) GNQ(512, 0) GNQ(1024, 0) GNQ(256, 1) GNQ(512, 1)
#undef GNQ
  return 1;
}

// Group norm through L2 in one cooperative launch: steps of k whole groups (about `slab` bytes); block b of the P
// resident blocks takes chunks b, b + P, ... of a step (E = T * 8 elements of one channel). A block reads step s + 1
// (its statistics: a partial per group it touches, published with a counter a step), then waits until the P blocks
// have published step s, combines each group's P partials in one fixed order and writes step s's outputs, reading x
// again, from L2 if the two steps' 2 * slab bytes stayed there. So the wait for the slowest block overlaps the next
// step's reads. HINT 1: statistics loads evict_last, the second reads and the stores evict_first. MAXV: vectors a
// thread holds at once.
template <int T, int MAXV, int HINT, int ACT>
__global__ void __launch_bounds__(T) gn_l2(GnArgs a, int groups, int per_image, int k, unsigned* counters, float eps) {
  __shared__ Stat shs[T / 32];
  __shared__ Stat totals[64];
  constexpr int E = T * 8;
  const int P = gridDim.x, b = blockIdx.x;
  const int steps = (groups + k - 1) / k;
  const uint64_t group_elems = uint64_t(a.items) * E;
  const uint64_t keep = HINT ? policy(true) : 0, drop = HINT ? policy(false) : 0;
  auto step_chunks = [&](int s) { return min(k, groups - s * k) * a.items; };
  auto stats = [&](int s) {
    const int n = step_chunks(s);
    const V8* xs = reinterpret_cast<const V8*>(a.x + uint64_t(s) * k * group_elems);
    Stat acc{0, 0, 0};
    int cur = -1;
    uint64_t touched = 0;
    auto flush = [&]() {
      const Stat t = block_chan<T>(acc, shs);
      if (threadIdx.x == 0) a.partials[uint64_t(s * k + cur) * P + b] = t;
      touched |= 1ull << cur;
      acc = {0, 0, 0};
    };
    for (int i0 = b; i0 < n; i0 += MAXV * P) {
      V8 v[MAXV];
#pragma unroll
      for (int u = 0; u < MAXV; ++u) {
        const int j = i0 + u * P;
        if (j < n) v[u] = HINT ? ld_hint(xs + uint64_t(j) * T + threadIdx.x, keep) : xs[uint64_t(j) * T + threadIdx.x];
      }
#pragma unroll
      for (int u = 0; u < MAXV; ++u) {
        const int j = i0 + u * P;
        if (j >= n) break;
        const int gl = j / a.items;
        if (gl != cur) {
          if (cur >= 0) flush();
          cur = gl;
        }
        acc = chan(acc, vec_stat(v[u]));
      }
    }
    if (cur >= 0) flush();
    if (threadIdx.x == 0) {
      const int kk = min(k, groups - s * k);
      for (int gl = 0; gl < kk; ++gl)
        if (!(touched >> gl & 1)) a.partials[uint64_t(s * k + gl) * P + b] = Stat{0, 0, 0};
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(counters[s]).fetch_add(1, cuda::memory_order_release);
    }
  };
  auto apply = [&](int s) {
    if (threadIdx.x == 0) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(counters[s]);
      while (done.load(cuda::memory_order_acquire) < unsigned(P)) __nanosleep(32);
    }
    __syncthreads();
    const int kk = min(k, groups - s * k);
    for (int gl = 0; gl < kk; ++gl) {
      Stat t{0, 0, 0};
      for (int j = threadIdx.x; j < P; j += T) {
        const Stat* p = a.partials + uint64_t(s * k + gl) * P + j;
        t = chan(t, Stat{__ldcg(&p->n), __ldcg(&p->m), __ldcg(&p->q)});
      }
      t = block_chan<T>(t, shs);
      if (threadIdx.x == 0) totals[gl] = t;
    }
    __syncthreads();
    const int n = step_chunks(s);
    const V8* xs = reinterpret_cast<const V8*>(a.x + uint64_t(s) * k * group_elems);
    V8* ys = reinterpret_cast<V8*>(a.y + uint64_t(s) * k * group_elems);
#pragma unroll 4
    for (int j = b; j < n; j += P) {
      const int gl = j / a.items, g = s * k + gl;
      const Stat t = totals[gl];
      const float rstd = rsqrtf(t.q / t.n + eps);
      const int c = g % per_image * a.cpg + (j - gl * a.items) / (a.hw / E);
      const float sc = __half2float(a.s[c]) * rstd, bi = __half2float(a.b[c]) - t.m * sc;
      const V8 v = HINT ? ld_hint(xs + uint64_t(j) * T + threadIdx.x, drop) : xs[uint64_t(j) * T + threadIdx.x];
      const V8 o = gn_out<ACT>(v, sc, bi);
      if (HINT) st_hint(ys + uint64_t(j) * T + threadIdx.x, o, drop);
      else ys[uint64_t(j) * T + threadIdx.x] = o;
    }
    __syncthreads();  // totals and shs are reused by the next step
  };
  stats(0);
  for (int s = 0; s < steps; ++s) {
    if (s + 1 < steps) stats(s + 1);
    apply(s);
  }
}
template <int T, int MAXV, int HINT, int ACT>
int gn_l2_launch(GnArgs a, int groups, int G, int bps, int slab_kb, unsigned* counters, cudaStream_t st) {
  if (a.hw % (T * 8)) return 2;
  const uint64_t group_bytes = uint64_t(a.items) * T * 16;
  const int k = int(std::clamp<uint64_t>(uint64_t(slab_kb) * 1024 / group_bytes, 1, 64));
  int occ = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, gn_l2<T, MAXV, HINT, ACT>, T, 0);
  if (occ < bps) return 4;
  int P = sms() * bps;
  const int steps = (groups + k - 1) / k;
  cudaMemsetAsync(counters, 0, sizeof(unsigned) * steps, st);
  float eps = 1e-5f;
  void* args[] = {&a, &groups, &G, const_cast<int*>(&k), &counters, &eps};
  return cudaLaunchCooperativeKernel(reinterpret_cast<void*>(gn_l2<T, MAXV, HINT, ACT>), dim3(P), dim3(T), args, 0, st)
             == cudaSuccess ? 0 : 5;
}
// x [images][G][cpg][hw] float16; ws: images * G * sms * bps Stats, then images * G counters.
extern "C" int gn_through_l2(int t, int maxv, int hint, int act, int bps, int slab_kb, const __half* x, const __half* s,
                             const __half* b, __half* y, void* ws, int images, int G, int cpg, int hw, cudaStream_t st) {
  GnArgs a{x, s, b, y, static_cast<Stat*>(ws), nullptr, cpg, hw, cpg * (hw / (t * 8))};
  const int groups = images * G;
  unsigned* counters = reinterpret_cast<unsigned*>(a.partials + uint64_t(groups) * sms() * bps);
#define GNL(TT, VV, HH, AA) if (t == TT && maxv == VV && hint == HH && act == AA) \
  return gn_l2_launch<TT, VV, HH, AA>(a, groups, G, bps, slab_kb, counters, st);
  GNL(256, 8, 0, 0) GNL(256, 8, 1, 0) GNL(256, 4, 1, 0) GNL(512, 4, 1, 0) GNL(128, 8, 1, 0) GNL(256, 8, 1, 1)
#undef GNL
  return 1;
}

// Three passes over the whole tensor (partials, combine, outputs) with the outputs walking the chunks backwards and
// the partials' loads of the last `keep` chunks marked L2 evict_last (every other load and every store evict_first),
// so that the outputs' first reads find those chunks in L2.
template <int T, int K>
__global__ void __launch_bounds__(T) gn_tail_pass(GnArgs a, int total, int keep, bool apply) {
  const int item = apply ? total - 1 - int(blockIdx.x) : int(blockIdx.x);
  gn_item<T, K, 1>(a, item, apply, policy(!apply && item >= total - keep), policy(false));
}
extern "C" int gn_tail(int t, int k, int keep_kb, const __half* x, const __half* s, const __half* b, __half* y, void* ws,
                       int groups, int cpg, int hw, cudaStream_t st) {
  if (hw % (t * k * 8)) return 2;
  GnArgs a{x, s, b, y, static_cast<Stat*>(ws), nullptr, cpg, hw, cpg * (hw / (t * k * 8))};
  a.totals = a.partials + uint64_t(groups) * a.items;
  const int total = groups * a.items, keep = int(std::min<uint64_t>(total, uint64_t(keep_kb) * 1024 / (t * k * 16)));
#define GNT(TT, KK) if (t == TT && k == KK) { \
    gn_tail_pass<TT, KK><<<total, TT, 0, st>>>(a, total, keep, false); \
    gn_combine<<<groups, 256, 0, st>>>(a, 0); \
    gn_tail_pass<TT, KK><<<total, TT, 0, st>>>(a, total, keep, true); return 0; }
  GNT(128, 2) GNT(128, 4) GNT(256, 2)
#undef GNT
  return 1;
}

// --- twentieth session: group norm by producer and consumer blocks -------------------------------------------------

// Group norm whose groups are read for their statistics by producer blocks and written by consumer blocks in one
// cooperative launch (every block resident, so the waits cannot deadlock): block b of each S + 1 is a producer, the
// others consumers of set 0..S-1. Producer p of the P reads chunks p, p + P, ... of every group in order (E = T * 8
// elements of one channel, V vectors a thread in flight), publishes its partial and takes a ticket; the last producer
// of a group combines the P partials in one fixed order and marks the group ready. Consumer p of set k takes groups
// k, k + S, ...: it waits until one is ready, then reads the same chunks again and writes their outputs, so S groups
// are written at once (a consumer's wait and its short walk through a group are round trips that one set alone
// cannot overlap). A producer starts group g only once the consumers are done with group g - lead, so the groups in
// between are what L2 must hold for the consumers' reads to hit it. HINT 1: producers' loads evict_last, consumers'
// loads and stores evict_first; 2: only the consumers' hints. ACT 1: swish.
__device__ __forceinline__ void wait_at_least(unsigned* counter, unsigned n) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(*counter);
  while (c.load(cuda::memory_order_acquire) < n) __nanosleep(20);
}
template <int T, int V, int HINT, int ACT>
__global__ void __launch_bounds__(T) gn_pc(GnArgs a, int groups, int per_image, int S, int lead, unsigned* sync,
                                           float eps) {
  __shared__ Stat shs[T / 32];
  __shared__ float coef[2];
  __shared__ bool last;
  constexpr int E = T * 8;
  const int P = gridDim.x / (S + 1), p = blockIdx.x / (S + 1), role = blockIdx.x % (S + 1);
  const uint64_t group_elems = uint64_t(a.items) * E;
  unsigned *arrived = sync, *ready = sync + groups, *consumed = sync + 2 * groups;
  const uint64_t keep = policy(HINT == 1), drop = policy(false);
  if (role == 0) {
    for (int g = 0; g < groups; ++g) {
      const V8* xg = reinterpret_cast<const V8*>(a.x + g * group_elems) + threadIdx.x;
      if (g >= lead) {
        if (threadIdx.x == 0) wait_at_least(&consumed[g - lead], unsigned(P));
        __syncthreads();
      }
      Stat acc{0, 0, 0};
      for (int j0 = p; j0 < a.items; j0 += V * P) {
        V8 v[V];
#pragma unroll
        for (int u = 0; u < V; ++u)
          if (j0 + u * P < a.items) v[u] = HINT == 1 ? ld_hint(xg + uint64_t(j0 + u * P) * T, keep) : xg[uint64_t(j0 + u * P) * T];
        float sum = 0, n = 0;
#pragma unroll
        for (int u = 0; u < V; ++u)
          if (j0 + u * P < a.items) {
            n += 8;
#pragma unroll
            for (int h = 0; h < 4; ++h) { const float2 f = __half22float2(v[u].h[h]); sum += f.x + f.y; }
          }
        const float m = sum / n;
        float q = 0;
#pragma unroll
        for (int u = 0; u < V; ++u)
          if (j0 + u * P < a.items) {
#pragma unroll
            for (int h = 0; h < 4; ++h) {
              const float2 f = __half22float2(v[u].h[h]);
              q += (f.x - m) * (f.x - m) + (f.y - m) * (f.y - m);
            }
          }
        acc = chan(acc, Stat{n, m, q});
      }
      acc = block_chan<T>(acc, shs);
      if (threadIdx.x == 0) {
        a.partials[uint64_t(g) * P + p] = acc;
        last = cuda::atomic_ref<unsigned, cuda::thread_scope_device>(arrived[g]).fetch_add(1, cuda::memory_order_acq_rel)
               == unsigned(P - 1);
      }
      __syncthreads();
      if (last) {
        Stat t{0, 0, 0};
        for (int j = threadIdx.x; j < P; j += T) {
          const Stat* s = a.partials + uint64_t(g) * P + j;
          t = chan(t, Stat{__ldcg(&s->n), __ldcg(&s->m), __ldcg(&s->q)});
        }
        t = block_chan<T>(t, shs);
        if (threadIdx.x == 0) {
          a.totals[g] = Stat{t.n, t.m, rsqrtf(t.q / t.n + eps)};
          cuda::atomic_ref<unsigned, cuda::thread_scope_device>(ready[g]).store(1, cuda::memory_order_release);
        }
      }
    }
    return;
  }
  for (int g = role - 1; g < groups; g += S) {
    const V8* xg = reinterpret_cast<const V8*>(a.x + g * group_elems) + threadIdx.x;
    if (threadIdx.x == 0) {
      wait_at_least(&ready[g], 1);
      coef[0] = __ldcg(&a.totals[g].m), coef[1] = __ldcg(&a.totals[g].q);
    }
    __syncthreads();
    const float mean = coef[0], rstd = coef[1];
    V8* yg = reinterpret_cast<V8*>(a.y + g * group_elems) + threadIdx.x;
    const int c0 = g % per_image * a.cpg, per_channel = a.hw / E;
#pragma unroll 4
    for (int j = p; j < a.items; j += P) {
      const int c = c0 + j / per_channel;
      const float sc = __half2float(a.s[c]) * rstd, bi = __half2float(a.b[c]) - mean * sc;
      const V8 v = HINT ? ld_hint(xg + uint64_t(j) * T, drop) : xg[uint64_t(j) * T];
      const V8 o = gn_out<ACT>(v, sc, bi);
      if (HINT) st_hint(yg + uint64_t(j) * T, o, drop);
      else yg[uint64_t(j) * T] = o;
    }
    __syncthreads();  // every thread's reads of group g done before the producers may move past it
    if (threadIdx.x == 0)
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(consumed[g]).fetch_add(1, cuda::memory_order_release);
  }
}
template <int T, int V, int HINT, int ACT>
int gn_pc_launch(GnArgs a, int groups, int G, int S, int lead, unsigned* sync, cudaStream_t st) {
  if (a.hw % (T * 8)) return 2;
  auto k = gn_pc<T, V, HINT, ACT>;
  int occ = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, T, 0);
  if (occ < S + 1) return 4;
  int grid = sms() * (S + 1);
  cudaMemsetAsync(sync, 0, sizeof(unsigned) * 3 * groups, st);
  float eps = 1e-5f;
  void* args[] = {&a, &groups, &G, &S, &lead, &sync, &eps};
  return cudaLaunchCooperativeKernel(reinterpret_cast<void*>(k), dim3(grid), dim3(T), args, 0, st) == cudaSuccess ? 0 : 5;
}
// x [images][G][cpg][hw] float16; ws: images * G * (sms + 1) Stats, then 3 * images * G counters. S: consumer sets.
extern "C" int gn_producers(int t, int v, int hint, int act, int S, int lead, const __half* x, const __half* s,
                            const __half* b, __half* y, void* ws, int images, int G, int cpg, int hw, cudaStream_t st) {
  const int groups = images * G;
  GnArgs a{x, s, b, y, static_cast<Stat*>(ws), nullptr, cpg, hw, cpg * (hw / (t * 8))};
  a.totals = a.partials + uint64_t(groups) * sms();
  unsigned* sync = reinterpret_cast<unsigned*>(a.totals + groups);
#define GNP(TT, VV, HH, AA) if (t == TT && v == VV && hint == HH && act == AA) \
  return gn_pc_launch<TT, VV, HH, AA>(a, groups, G, S, lead, sync, st);
  GNP(256, 4, 1, 0) GNP(256, 4, 2, 0) GNP(256, 8, 1, 0) GNP(256, 8, 2, 0) GNP(256, 16, 1, 0) GNP(128, 8, 1, 0)
  GNP(128, 16, 1, 0) GNP(256, 8, 1, 1)
#undef GNP
  return 1;
}

// --- twenty-third session: group norm read once with the tail of each block's share held on chip -------------------

// Group norm in one cooperative launch with a single grid-wide wait. Block b takes a contiguous share of the
// tensor's chunks (E = T * K * 8 elements of one channel) and reads it once for statistics: each warp keeps a
// running (count, mean, squared deviations) of its vectors per group (shuffles only, no block barrier), written out
// when its group changes. The share's last `held` chunks stay in shared memory (each thread keeps its own vectors,
// so no barrier either) and the `keep` chunks before them are read with L2 evict_last. After the grid-wide wait every
// block combines the warp partials of the groups it touched in one fixed order (every block gets the same totals),
// then writes the held chunks' outputs from shared memory and the rest of its share last to first, reading x a
// second time, from L2 where it is still there. ACT 1: swish of the outputs.
struct OnceArgs {
  GnArgs a;
  int total, held, keep, slots;   // chunks in all, held and kept a block, group slots a block
  uint64_t group_elems;
  int channels;                   // channels an image
  float eps;
};
constexpr int kOnceSlots = 8;  // groups a block's share may touch
template <int T, int K, int ACT>
__global__ void __launch_bounds__(T, 1024 / T) gn_once_kernel(OnceArgs o) {
  extern __shared__ __align__(16) unsigned char once_bytes[];
  V8* held_buf = reinterpret_cast<V8*>(once_bytes);
  __shared__ Stat shs[T / 32];
  __shared__ float2 coef[kOnceSlots];  // (mean, rstd) of the block's groups, slot order
  constexpr int E = T * K * 8, W = T / 32;
  const GnArgs& a = o.a;
  const int P = gridDim.x, b = blockIdx.x, w = threadIdx.x / 32, lane = threadIdx.x % 32;
  auto share_begin = [&](int block) { return int(int64_t(block) * o.total / P); };  // block's first chunk
  const int lo = share_begin(b), hi = share_begin(b + 1);
  const int hold_from = max(lo, hi - o.held), keep_from = max(lo, hold_from - o.keep);
  // this thread's vector k of held chunk `item`
  auto held = [&](int item, int k) -> V8& { return held_buf[(item - hold_from) * T * K + k * T + threadIdx.x]; };
  auto group_of = [&](int item) { return int(uint64_t(item) * E / o.group_elems); };
  const int g0 = group_of(lo);
  const uint64_t first = policy(false), last = policy(true);
  Stat run{0, 0, 0};
  int g = g0;
  for (int item = lo; item < hi; ++item) {
    const int gi = group_of(item);
    if (gi != g) {
      if (lane == 0) a.partials[(uint64_t(b) * o.slots + (g - g0)) * W + w] = run;
      run = {0, 0, 0}, g = gi;
    }
    const V8* xv = reinterpret_cast<const V8*>(a.x + uint64_t(item) * E);
    const uint64_t pol = item >= keep_from && item < hold_from ? last : first;
    V8 v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = ld_hint(xv + threadIdx.x + k * T, pol);
    const float m = warp_sum(vectors_sum(v)) * (1.f / (32 * K * 8));
    run = chan(run, Stat{32.f * K * 8, m, warp_sum(vectors_squares(v, m))});
    if (item >= hold_from)
#pragma unroll
      for (int k = 0; k < K; ++k) held(item, k) = v[k];
  }
  if (lane == 0 && lo < hi) a.partials[(uint64_t(b) * o.slots + (g - g0)) * W + w] = run;
  cg::this_grid().sync();
  // Totals of the block's groups: for group gg, the warp partials of every block whose share touches it, in order.
  auto owner = [&](int item) { return int((int64_t(item + 1) * P - 1) / o.total); };
  const int g1 = lo < hi ? group_of(hi - 1) : g0 - 1;
  const int items_per_group = int(o.group_elems / E);
  for (int gg = g0; gg <= g1; ++gg) {
    const int bf = owner(gg * items_per_group), bl = owner((gg + 1) * items_per_group - 1);
    Stat t{0, 0, 0};
    for (int e = threadIdx.x; e < (bl - bf + 1) * W; e += T) {
      const int bb = bf + e / W, g0b = group_of(share_begin(bb));
      const Stat* p = a.partials + (uint64_t(bb) * o.slots + (gg - g0b)) * W + e % W;
      t = chan(t, Stat{__ldcg(&p->n), __ldcg(&p->m), __ldcg(&p->q)});
    }
    t = block_chan<T>(t, shs);
    if (threadIdx.x == 0) coef[gg - g0] = {t.m, rsqrtf(t.q / t.n + o.eps)};
  }
  __syncthreads();
  const int per_channel = a.hw / E;
  auto write = [&](int item, const V8* v) {
    const float2 cf = coef[group_of(item) - g0];
    const int c = (item / per_channel) % o.channels;
    const float sc = __half2float(a.s[c]) * cf.y, bi = __half2float(a.b[c]) - cf.x * sc;
    V8* yv = reinterpret_cast<V8*>(a.y + uint64_t(item) * E);
#pragma unroll
    for (int k = 0; k < K; ++k) st_hint(yv + threadIdx.x + k * T, gn_out<ACT>(v[k], sc, bi), first);
  };
  for (int item = hi - 1; item >= hold_from; --item) {
    V8 v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = held(item, k);
    write(item, v);
  }
  for (int item = hold_from - 1; item >= lo; --item) {
    const V8* xv = reinterpret_cast<const V8*>(a.x + uint64_t(item) * E);
    V8 v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = ld_hint(xv + threadIdx.x + k * T, first);
    write(item, v);
  }
}
template <int T, int K, int ACT>
int gn_once_launch(GnArgs a, int groups, int channels, int bps, int held_kb, int keep_kb, cudaStream_t st) {
  constexpr int E = T * K * 8;
  if (a.hw % E) return 2;
  const int P = sms() * bps, total = int(uint64_t(groups) * a.cpg * a.hw / E);
  const uint64_t group_elems = uint64_t(a.cpg) * a.hw;
  const int share = (total + P - 1) / P;
  const int slots = int((uint64_t(share) * E + group_elems - 1) / group_elems) + 1;
  if (slots > kOnceSlots || total < P) return 3;
  const int held = std::min(share, held_kb * 1024 / (E * 2));
  const int keep = int(std::min<uint64_t>(share, uint64_t(keep_kb) * 1024 / P / (E * 2)));
  const size_t smem = size_t(held) * E * 2;
  auto k = gn_once_kernel<T, K, ACT>;
  if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)) != cudaSuccess) return 4;
  int occ = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, T, smem);
  if (occ < bps) return 5;
  OnceArgs o{a, total, held, keep, slots, group_elems, channels, 1e-5f};
  void* args[] = {&o};
  const cudaError_t launched = cudaLaunchCooperativeKernel(reinterpret_cast<void*>(k), dim3(P), dim3(T), args, smem, st);
  return launched == cudaSuccess ? 0 : 6;
}
// x [images][G][cpg][hw] float16; ws: sms * bps * kOnceSlots * (t / 32) Stats. held_kb: shared memory a block;
// keep_kb: L2 in all; bps: blocks a multiprocessor.
extern "C" int gn_once(int t, int k, int act, int bps, int held_kb, int keep_kb, const __half* x, const __half* s,
                       const __half* b, __half* y, void* ws, int images, int G, int cpg, int hw, cudaStream_t st) {
  GnArgs a{x, s, b, y, static_cast<Stat*>(ws), nullptr, cpg, hw, 0};
#define GNO(TT, KK, AA) if (t == TT && k == KK && act == AA) \
  return gn_once_launch<TT, KK, AA>(a, images * G, G * cpg, bps, held_kb, keep_kb, st);
  GNO(1024, 1, 0) GNO(1024, 2, 0) GNO(512, 2, 0) GNO(512, 4, 0) GNO(256, 4, 0) GNO(1024, 2, 1)
#undef GNO
  return 1;
}
