// Candidate kernels outside the executor, to choose a scheme before changing it: layer norm rows and packed
// element-wise maps, float16, with extern "C" launchers that bench_cuda_variants.py calls through ctypes next to torch
// (bench/README.md, run K). Build: nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC cuda_variants.cu -o
// cuda_variants.so. A block's thread count is a multiple of 32 (the reductions assume whole warps).
#include <cuda_fp16.h>
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
    float sum = 0;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int j = 0; j < 4; ++j) { float2 f = __half22float2(v[k].h[j]); sum += f.x + f.y; }
    mean = block_sum<T>(sum, sh) / C;
    float sq = 0;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float2 f = __half22float2(v[k].h[j]);
        sq += (f.x - mean) * (f.x - mean) + (f.y - mean) * (f.y - mean);
      }
    rstd = rsqrtf(block_sum<T>(sq, sh) / C + eps);
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
  const V8* sv = reinterpret_cast<const V8*>(s);
  const V8* bv = reinterpret_cast<const V8*>(b);
  V8* yr = reinterpret_cast<V8*>(y + row * C);
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
