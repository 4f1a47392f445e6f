// DirectML on native Linux driver (issues 6 and 16).
//
// Creates an ID3D12Device through our libd3d12.so bridge (vkd3d-proton or vkd3d
// underneath), loads libdirectml.so, calls DMLCreateDevice, then creates,
// compiles, initializes and dispatches GEMM, ELEMENT_WISE_ADD and CONVOLUTION
// (float32; GEMM and ADD also in float16: gemm16, add16), reads the results back
// and checks them against a reference computed here in double precision from the
// values actually uploaded.
//
// Usage: dml_linux_driver [--lib PATH/libdirectml.so] [--dump DIR] [--ops gemm,add,conv,gemm16,add16]
//                         [--bench N (GEMM NxNxN timing)] [--iters K]
// Output: machine-readable lines "STEP name ok|FAIL hr=0x...", "RESULT op max_abs_err=E ok=0|1",
//         "BENCH gemm N=... ms_per_dispatch=... gflops=...". Exit 0 only if every requested op matched.
#include <wsl/winadapter.h>
#include <directx/d3d12.h>
#include <dxguids/dxguids.h>

#include "dml_api.h"  // the executor's DirectML declarations (src/directml)

// dml_api.h numbers these as the executor's own enumerations; the values the driver names.
constexpr DML_TENSOR_DATA_TYPE DML_TENSOR_DATA_TYPE_FLOAT32 = DML_TENSOR_DATA_TYPE(1), DML_TENSOR_DATA_TYPE_FLOAT16 =
    DML_TENSOR_DATA_TYPE(2);
constexpr DML_CREATE_DEVICE_FLAGS DML_CREATE_DEVICE_FLAG_DEBUG = DML_CREATE_DEVICE_FLAGS(1);

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int g_failures = 0;

bool check(HRESULT hr, const char* what) {
    if (FAILED(hr)) {
        std::printf("STEP %s FAIL hr=0x%08x\n", what, (unsigned)hr);
        std::fflush(stdout);
        return false;
    }
    std::printf("STEP %s ok\n", what);
    std::fflush(stdout);
    return true;
}

#define CHECK(expr, what)          \
    do {                           \
        if (!check((expr), what)) { \
            return false;          \
        }                          \
    } while (0)

template <class T>
void release(T*& p) {
    if (p) p->Release();
    p = nullptr;
}

struct Gpu {
    ID3D12Device* dev = nullptr;
    ID3D12CommandQueue* queue = nullptr;
    ID3D12CommandAllocator* alloc = nullptr;
    ID3D12GraphicsCommandList* list = nullptr;
    ID3D12Fence* fence = nullptr;
    UINT64 fence_value = 0;
    IDMLDevice* dml = nullptr;
    IDMLCommandRecorder* recorder = nullptr;

    ID3D12Resource* buffer(UINT64 size, D3D12_HEAP_TYPE type, D3D12_RESOURCE_STATES state, bool uav) {
        D3D12_HEAP_PROPERTIES hp = {};
        hp.Type = type;
        hp.CreationNodeMask = hp.VisibleNodeMask = 1;
        D3D12_RESOURCE_DESC rd = {};
        rd.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
        rd.Width = size < 256 ? 256 : size;
        rd.Height = rd.DepthOrArraySize = rd.MipLevels = 1;
        rd.Format = DXGI_FORMAT_UNKNOWN;
        rd.SampleDesc.Count = 1;
        rd.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
        rd.Flags = uav ? D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS : D3D12_RESOURCE_FLAG_NONE;
        ID3D12Resource* r = nullptr;
        HRESULT hr = dev->CreateCommittedResource(&hp, D3D12_HEAP_FLAG_NONE, &rd, state, nullptr, IID_PPV_ARGS(&r));
        if (FAILED(hr)) {
            std::printf("STEP CreateCommittedResource FAIL hr=0x%08x\n", (unsigned)hr);
            return nullptr;
        }
        return r;
    }

    bool submit_and_wait(const char* what) {
        CHECK(list->Close(), (std::string(what) + ".Close").c_str());
        ID3D12CommandList* lists[] = {list};
        queue->ExecuteCommandLists(1, lists);
        CHECK(queue->Signal(fence, ++fence_value), "Signal");
        auto t0 = std::chrono::steady_clock::now();
        while (fence->GetCompletedValue() < fence_value) {
            usleep(50);
            if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(120)) {
                std::printf("STEP %s.wait FAIL timeout\n", what);
                return false;
            }
        }
        CHECK(alloc->Reset(), "CommandAllocator.Reset");
        CHECK(list->Reset(alloc, nullptr), "CommandList.Reset");
        return true;
    }

    void transition(ID3D12Resource* r, D3D12_RESOURCE_STATES a, D3D12_RESOURCE_STATES b) {
        D3D12_RESOURCE_BARRIER br = {};
        br.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
        br.Transition.pResource = r;
        br.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
        br.Transition.StateBefore = a;
        br.Transition.StateAfter = b;
        list->ResourceBarrier(1, &br);
    }

    void uav_barrier() {
        D3D12_RESOURCE_BARRIER br = {};
        br.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
        br.UAV.pResource = nullptr;
        list->ResourceBarrier(1, &br);
    }
};

// IEEE binary16 <-> float, round to nearest even (normal, subnormal, inf, nan).
uint16_t to_half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, mag = x & 0x7fffffffu;
    if (mag >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
    if (mag >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // rounds past 65504
    if (mag < 0x38800000u) {                                     // subnormal half (or zero)
        float a;
        std::memcpy(&a, &mag, 4);
        return (uint16_t)(sign | (uint32_t)std::nearbyint(a * 16777216.0f));  // units of 2^-24
    }
    uint32_t r = mag - 0x38000000u;                              // rebias 127 -> 15 (in the float's bits)
    r = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
    return (uint16_t)(sign | r);
}

float from_half(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    float v = e == 0 ? std::ldexp((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp((float)(m | 0x400u), (int)e - 25);
    uint32_t x;
    std::memcpy(&x, &v, 4);
    x |= sign;
    std::memcpy(&v, &x, 4);
    return v;
}

struct Tensor {
    std::vector<UINT> sizes;
    DML_BUFFER_TENSOR_DESC buf = {};
    DML_TENSOR_DESC desc = {};
    UINT64 elements = 1;
    explicit Tensor(std::vector<UINT> s, DML_TENSOR_DATA_TYPE type = DML_TENSOR_DATA_TYPE_FLOAT32) : sizes(std::move(s)) {
        for (UINT v : sizes) elements *= v;
        buf.DataType = type;
        buf.Flags = DML_TENSOR_FLAG_NONE;
        buf.DimensionCount = (UINT)sizes.size();
        buf.Sizes = sizes.data();
        buf.Strides = nullptr;
        buf.TotalTensorSizeInBytes = (elements * element_size() + 3) & ~UINT64(3);
        desc.Type = DML_TENSOR_TYPE_BUFFER;
        desc.Desc = &buf;
    }
    bool half() const { return buf.DataType == DML_TENSOR_DATA_TYPE_FLOAT16; }
    size_t element_size() const { return half() ? 2 : 4; }
    size_t count() const { return elements; }
    // What the device will see of `v` (float16 tensors round it).
    std::vector<float> representable(std::vector<float> v) const {
        if (half())
            for (float& x : v) x = from_half(to_half(x));
        return v;
    }
    void store(const std::vector<float>& v, void* dst) const {
        if (!half()) return (void)std::memcpy(dst, v.data(), v.size() * 4);
        for (size_t i = 0; i < v.size(); ++i) static_cast<uint16_t*>(dst)[i] = to_half(v[i]);
    }
    std::vector<float> load(const void* src) const {
        if (!half()) return std::vector<float>((const float*)src, (const float*)src + elements);
        std::vector<float> v(elements);
        for (size_t i = 0; i < v.size(); ++i) v[i] = from_half(static_cast<const uint16_t*>(src)[i]);
        return v;
    }
    Tensor(const Tensor&) = delete;
};

// Runs one operator: inputs (nullptr entries = optional unbound inputs), one output.
// Returns false on any API failure. If iters > 0 also times `iters` dispatches.
bool run_operator(Gpu& g, const char* name, const DML_OPERATOR_DESC& op_desc, const std::vector<const Tensor*>& in_t,
                  const std::vector<std::vector<float>>& in_data, const Tensor& out_t, std::vector<float>& out,
                  int iters = 0, double* ms_per_dispatch = nullptr) {
    std::string n(name);
    IDMLOperator* op = nullptr;
    IDMLCompiledOperator* cop = nullptr;
    IDMLOperatorInitializer* init = nullptr;
    CHECK(g.dml->CreateOperator(&op_desc, IID_PPV_ARGS(&op)), (n + ".CreateOperator").c_str());
    CHECK(g.dml->CompileOperator(op, DML_EXECUTION_FLAG_NONE, IID_PPV_ARGS(&cop)), (n + ".CompileOperator").c_str());
    IDMLCompiledOperator* cops[] = {cop};
    CHECK(g.dml->CreateOperatorInitializer(1, cops, IID_PPV_ARGS(&init)), (n + ".CreateOperatorInitializer").c_str());

    DML_BINDING_PROPERTIES ip = init->GetBindingProperties();
    DML_BINDING_PROPERTIES ep = cop->GetBindingProperties();
    std::printf("INFO %s binding: init(desc=%u temp=%llu) exec(desc=%u temp=%llu persistent=%llu)\n", name,
                ip.RequiredDescriptorCount, (unsigned long long)ip.TemporaryResourceSize, ep.RequiredDescriptorCount,
                (unsigned long long)ep.TemporaryResourceSize, (unsigned long long)ep.PersistentResourceSize);

    UINT ndesc = ip.RequiredDescriptorCount > ep.RequiredDescriptorCount ? ip.RequiredDescriptorCount
                                                                         : ep.RequiredDescriptorCount;
    if (ndesc == 0) ndesc = 1;
    D3D12_DESCRIPTOR_HEAP_DESC hd = {};
    hd.Type = D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV;
    hd.NumDescriptors = ndesc;
    hd.Flags = D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE;
    ID3D12DescriptorHeap* heap = nullptr;
    CHECK(g.dev->CreateDescriptorHeap(&hd, IID_PPV_ARGS(&heap)), (n + ".CreateDescriptorHeap").c_str());

    UINT64 temp_size = ip.TemporaryResourceSize > ep.TemporaryResourceSize ? ip.TemporaryResourceSize
                                                                           : ep.TemporaryResourceSize;
    ID3D12Resource* temp = temp_size ? g.buffer(temp_size, D3D12_HEAP_TYPE_DEFAULT, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, true) : nullptr;
    ID3D12Resource* persistent = ep.PersistentResourceSize
                                     ? g.buffer(ep.PersistentResourceSize, D3D12_HEAP_TYPE_DEFAULT, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, true)
                                     : nullptr;

    DML_BINDING_TABLE_DESC btd = {};
    btd.Dispatchable = init;
    btd.CPUDescriptorHandle = heap->GetCPUDescriptorHandleForHeapStart();
    btd.GPUDescriptorHandle = heap->GetGPUDescriptorHandleForHeapStart();
    btd.SizeInDescriptors = ndesc;
    IDMLBindingTable* bt = nullptr;
    CHECK(g.dml->CreateBindingTable(&btd, IID_PPV_ARGS(&bt)), (n + ".CreateBindingTable").c_str());

    DML_BUFFER_BINDING temp_bb = {temp, 0, temp_size};
    DML_BINDING_DESC temp_bd = {DML_BINDING_TYPE_BUFFER, &temp_bb};
    DML_BUFFER_BINDING pers_bb = {persistent, 0, ep.PersistentResourceSize};
    DML_BINDING_DESC pers_bd = {DML_BINDING_TYPE_BUFFER, &pers_bb};
    if (ip.TemporaryResourceSize) bt->BindTemporaryResource(&temp_bd);
    if (persistent) bt->BindOutputs(1, &pers_bd);

    ID3D12DescriptorHeap* heaps[] = {heap};
    g.list->SetDescriptorHeaps(1, heaps);
    g.recorder->RecordDispatch(g.list, init, bt);
    if (!g.submit_and_wait((n + ".initialize").c_str())) return false;
    std::printf("STEP %s.initialize-dispatch ok\n", name);

    // Inputs: upload -> default (UAV) buffers.
    std::vector<ID3D12Resource*> in_bufs(in_t.size(), nullptr), uploads;
    std::vector<DML_BUFFER_BINDING> in_bb(in_t.size());
    std::vector<DML_BINDING_DESC> in_bd(in_t.size());
    for (size_t i = 0; i < in_t.size(); ++i) {
        if (!in_t[i]) {
            in_bd[i] = {DML_BINDING_TYPE_NONE, nullptr};
            continue;
        }
        UINT64 bytes = in_t[i]->buf.TotalTensorSizeInBytes;
        in_bufs[i] = g.buffer(bytes, D3D12_HEAP_TYPE_DEFAULT, D3D12_RESOURCE_STATE_COPY_DEST, true);
        ID3D12Resource* up = g.buffer(bytes, D3D12_HEAP_TYPE_UPLOAD, D3D12_RESOURCE_STATE_GENERIC_READ, false);
        if (!in_bufs[i] || !up) return false;
        uploads.push_back(up);
        void* p = nullptr;
        CHECK(up->Map(0, nullptr, &p), (n + ".Map(upload)").c_str());
        in_t[i]->store(in_data[i], p);
        up->Unmap(0, nullptr);
        g.list->CopyBufferRegion(in_bufs[i], 0, up, 0, bytes);
        g.transition(in_bufs[i], D3D12_RESOURCE_STATE_COPY_DEST, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
        in_bb[i] = {in_bufs[i], 0, bytes};
        in_bd[i] = {DML_BINDING_TYPE_BUFFER, &in_bb[i]};
    }
    UINT64 out_bytes = out_t.buf.TotalTensorSizeInBytes;
    ID3D12Resource* out_buf = g.buffer(out_bytes, D3D12_HEAP_TYPE_DEFAULT, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, true);
    ID3D12Resource* readback = g.buffer(out_bytes, D3D12_HEAP_TYPE_READBACK, D3D12_RESOURCE_STATE_COPY_DEST, false);
    if (!out_buf || !readback) return false;

    btd.Dispatchable = cop;
    CHECK(bt->Reset(&btd), (n + ".BindingTable.Reset").c_str());
    bt->BindInputs((UINT)in_bd.size(), in_bd.data());
    DML_BUFFER_BINDING out_bb = {out_buf, 0, out_bytes};
    DML_BINDING_DESC out_bd = {DML_BINDING_TYPE_BUFFER, &out_bb};
    bt->BindOutputs(1, &out_bd);
    if (ep.TemporaryResourceSize) bt->BindTemporaryResource(&temp_bd);
    if (persistent) bt->BindPersistentResource(&pers_bd);

    g.list->SetDescriptorHeaps(1, heaps);
    g.recorder->RecordDispatch(g.list, cop, bt);
    g.uav_barrier();
    g.transition(out_buf, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_COPY_SOURCE);
    g.list->CopyBufferRegion(readback, 0, out_buf, 0, out_bytes);
    g.transition(out_buf, D3D12_RESOURCE_STATE_COPY_SOURCE, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
    if (!g.submit_and_wait((n + ".execute").c_str())) return false;
    std::printf("STEP %s.execute-dispatch ok\n", name);

    void* p = nullptr;
    D3D12_RANGE rr = {0, (SIZE_T)out_bytes};
    CHECK(readback->Map(0, &rr, &p), (n + ".Map(readback)").c_str());
    out = out_t.load(p);
    D3D12_RANGE wr = {0, 0};
    readback->Unmap(0, &wr);

    if (iters > 0 && ms_per_dispatch) {
        // warm-up done above; time `iters` back-to-back dispatches in one command list
        g.list->SetDescriptorHeaps(1, heaps);
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i) {
            g.recorder->RecordDispatch(g.list, cop, bt);
            g.uav_barrier();
        }
        if (!g.submit_and_wait((n + ".bench").c_str())) return false;
        auto t1 = std::chrono::steady_clock::now();
        *ms_per_dispatch = std::chrono::duration<double, std::milli>(t1 - t0).count() / iters;
    }

    for (auto* r : in_bufs) if (r) r->Release();
    for (auto* r : uploads) r->Release();
    release(out_buf);
    release(readback);
    release(temp);
    release(persistent);
    release(bt);
    release(heap);
    release(init);
    release(cop);
    release(op);
    return true;
}

std::vector<float> pattern(size_t n, unsigned seed) {
    std::vector<float> v(n);
    unsigned s = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        v[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;  // [-1, 1]
    }
    return v;
}

void dump(const std::string& dir, const std::string& file, const std::vector<float>& v) {
    if (dir.empty()) return;
    FILE* f = std::fopen((dir + "/" + file).c_str(), "wb");
    if (!f) return;
    std::fwrite(v.data(), 4, v.size(), f);
    std::fclose(f);
}

// One float16 ulp at the largest |want|: Vulkan lets a float32 -> float16 conversion round toward
// zero instead of to nearest (lavapipe does), so a float16 output may be off by up to one ulp.
double half_ulp_bound(const std::vector<float>& want) {
    double m = 0;
    for (float w : want) m = std::fmax(m, std::fabs((double)w));
    return m * std::ldexp(1.0, -10);
}

void report(const char* op, const std::vector<float>& got, const std::vector<float>& want, double tol) {
    double err = 0;
    bool finite = got.size() == want.size();
    for (size_t i = 0; finite && i < got.size(); ++i) {
        if (!std::isfinite(got[i])) finite = false;
        err = std::fmax(err, std::fabs((double)got[i] - want[i]));
    }
    bool ok = finite && err <= tol;
    if (!ok) ++g_failures;
    std::printf("RESULT %s max_abs_err=%.3g ok=%d\n", op, err, ok ? 1 : 0);
    if (!ok && !got.empty())
        std::printf("INFO %s got[0..3]=%g %g %g %g want=%g %g %g %g\n", op, got[0], got.size() > 1 ? got[1] : 0.0,
                    got.size() > 2 ? got[2] : 0.0, got.size() > 3 ? got[3] : 0.0, want[0], want.size() > 1 ? want[1] : 0.0,
                    want.size() > 2 ? want[2] : 0.0, want.size() > 3 ? want[3] : 0.0);
    std::fflush(stdout);
}

bool run_gemm(Gpu& g, UINT M, UINT K, UINT N, const std::string& dumpdir, int iters, const char* label,
              DML_TENSOR_DATA_TYPE type = DML_TENSOR_DATA_TYPE_FLOAT32) {
    Tensor a({1, 1, M, K}, type), b({1, 1, K, N}, type), o({1, 1, M, N}, type);
    DML_GEMM_OPERATOR_DESC gd = {};
    gd.ATensor = &a.desc;
    gd.BTensor = &b.desc;
    gd.OutputTensor = &o.desc;
    gd.TransA = gd.TransB = DML_MATRIX_TRANSFORM_NONE;
    gd.Alpha = 1.0f;
    gd.Beta = 0.0f;
    DML_OPERATOR_DESC od = {DML_OPERATOR_GEMM, &gd};
    auto A = a.representable(pattern(a.count(), 1)), B = b.representable(pattern(b.count(), 2));
    std::vector<float> out;
    double ms = 0;
    if (!run_operator(g, label, od, {&a, &b, nullptr}, {A, B, {}}, o, out, iters, &ms)) return false;
    if (iters > 0) {
        double gflops = 2.0 * M * N * K / (ms * 1e-3) / 1e9;
        std::printf("BENCH gemm N=%u ms_per_dispatch=%.3f gflops=%.2f iters=%d\n", M, ms, gflops, iters);
    }
    std::vector<float> want((size_t)M * N);
    for (UINT i = 0; i < M; ++i)
        for (UINT j = 0; j < N; ++j) {
            double s = 0;
            for (UINT k = 0; k < K; ++k) s += (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
            want[(size_t)i * N + j] = (float)s;
        }
    dump(dumpdir, std::string(label) + "_a.f32", A);
    dump(dumpdir, std::string(label) + "_b.f32", B);
    dump(dumpdir, std::string(label) + "_out.f32", out);
    report(label, out, want, 1e-3 * std::sqrt((double)K) + 1e-4 + (o.half() ? half_ulp_bound(want) : 0));
    return true;
}

bool run_add(Gpu& g, const std::string& dumpdir, const char* label, DML_TENSOR_DATA_TYPE type) {
    Tensor a({1, 1, 4, 8}, type), b({1, 1, 4, 8}, type), o({1, 1, 4, 8}, type);
    DML_BINARY_OPERATOR_DESC ad = {&a.desc, &b.desc, &o.desc, nullptr};  // ELEMENT_WISE_ADD's layout
    DML_OPERATOR_DESC od = {DML_OPERATOR_ELEMENT_WISE_ADD, &ad};
    auto A = a.representable(pattern(a.count(), 3)), B = b.representable(pattern(b.count(), 4));
    std::vector<float> out;
    if (!run_operator(g, label, od, {&a, &b}, {A, B}, o, out)) return false;
    std::vector<float> want(A.size());
    for (size_t i = 0; i < A.size(); ++i) want[i] = A[i] + B[i];
    dump(dumpdir, std::string(label) + "_a.f32", A);
    dump(dumpdir, std::string(label) + "_b.f32", B);
    dump(dumpdir, std::string(label) + "_out.f32", out);
    report(label, out, want, 1e-6 + (o.half() ? half_ulp_bound(want) : 0));
    return true;
}

// NCHW cross-correlation, input [1,2,5,5], filter [3,2,3,3], bias [1,3,1,1], stride 1, pad 1 -> [1,3,5,5]
bool run_conv(Gpu& g, const std::string& dumpdir) {
    const UINT C = 2, H = 5, W = 5, OC = 3, KH = 3, KW = 3;
    Tensor x({1, C, H, W}), f({OC, C, KH, KW}), bias({1, OC, 1, 1}), o({1, OC, H, W});
    UINT strides[2] = {1, 1}, dil[2] = {1, 1}, sp[2] = {1, 1}, ep[2] = {1, 1}, opad[2] = {0, 0};
    DML_CONVOLUTION_OPERATOR_DESC cd = {};
    cd.InputTensor = &x.desc;
    cd.FilterTensor = &f.desc;
    cd.BiasTensor = &bias.desc;
    cd.OutputTensor = &o.desc;
    cd.Mode = 1;       // DML_CONVOLUTION_MODE_CROSS_CORRELATION
    cd.Direction = 0;  // DML_CONVOLUTION_DIRECTION_FORWARD
    cd.DimensionCount = 2;
    cd.Strides = strides;
    cd.Dilations = dil;
    cd.StartPadding = sp;
    cd.EndPadding = ep;
    cd.OutputPadding = opad;
    cd.GroupCount = 1;
    DML_OPERATOR_DESC od = {DML_OPERATOR_CONVOLUTION, &cd};
    auto X = pattern(x.count(), 5), F = pattern(f.count(), 6), Bv = pattern(bias.count(), 7);
    std::vector<float> out;
    if (!run_operator(g, "conv", od, {&x, &f, &bias}, {X, F, Bv}, o, out)) return false;
    std::vector<float> want((size_t)OC * H * W);
    for (UINT oc = 0; oc < OC; ++oc)
        for (UINT y = 0; y < H; ++y)
            for (UINT xx = 0; xx < W; ++xx) {
                double s = Bv[oc];
                for (UINT c = 0; c < C; ++c)
                    for (UINT ky = 0; ky < KH; ++ky)
                        for (UINT kx = 0; kx < KW; ++kx) {
                            int iy = (int)y + (int)ky - 1, ix = (int)xx + (int)kx - 1;
                            if (iy < 0 || ix < 0 || iy >= (int)H || ix >= (int)W) continue;
                            s += (double)X[(c * H + iy) * W + ix] * F[((oc * C + c) * KH + ky) * KW + kx];
                        }
                want[(oc * H + y) * W + xx] = (float)s;
            }
    dump(dumpdir, "conv_x.f32", X);
    dump(dumpdir, "conv_w.f32", F);
    dump(dumpdir, "conv_b.f32", Bv);
    dump(dumpdir, "conv_out.f32", out);
    report("conv", out, want, 1e-4);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    std::string lib = "libdirectml.so", dumpdir, ops = "gemm,add,conv,gemm16,add16";
    int bench = 0, iters = 10;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--lib" && i + 1 < argc) lib = argv[++i];
        else if (a == "--dump" && i + 1 < argc) dumpdir = argv[++i];
        else if (a == "--ops" && i + 1 < argc) ops = argv[++i];
        else if (a == "--bench" && i + 1 < argc) bench = std::atoi(argv[++i]);
        else if (a == "--iters" && i + 1 < argc) iters = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s [--lib libdirectml.so] [--dump DIR] [--ops gemm,add,conv,gemm16,add16] [--bench N] [--iters K]\n", argv[0]);
            return 2;
        }
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);

    Gpu g;
    if (!check(D3D12CreateDevice(nullptr, D3D_FEATURE_LEVEL_11_0, IID_PPV_ARGS(&g.dev)), "D3D12CreateDevice")) return 3;
    {
        D3D12_FEATURE_DATA_SHADER_MODEL sm = {D3D_SHADER_MODEL_6_0};
        HRESULT hr = g.dev->CheckFeatureSupport(D3D12_FEATURE_SHADER_MODEL, &sm, sizeof(sm));
        D3D12_FEATURE_DATA_D3D12_OPTIONS1 o1 = {};
        HRESULT hr1 = g.dev->CheckFeatureSupport(D3D12_FEATURE_D3D12_OPTIONS1, &o1, sizeof(o1));
        std::printf("INFO device: shader model hr=0x%08x highest=0x%x; options1 hr=0x%08x WaveOps=%d\n", (unsigned)hr,
                    (unsigned)sm.HighestShaderModel, (unsigned)hr1, o1.WaveOps);
    }
    D3D12_COMMAND_QUEUE_DESC qd = {};
    qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
    if (!check(g.dev->CreateCommandQueue(&qd, IID_PPV_ARGS(&g.queue)), "CreateCommandQueue")) return 3;
    if (!check(g.dev->CreateCommandAllocator(D3D12_COMMAND_LIST_TYPE_DIRECT, IID_PPV_ARGS(&g.alloc)), "CreateCommandAllocator")) return 3;
    if (!check(g.dev->CreateCommandList(0, D3D12_COMMAND_LIST_TYPE_DIRECT, g.alloc, nullptr, IID_PPV_ARGS(&g.list)), "CreateCommandList")) return 3;
    if (!check(g.dev->CreateFence(0, D3D12_FENCE_FLAG_NONE, IID_PPV_ARGS(&g.fence)), "CreateFence")) return 3;

    void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        std::printf("STEP dlopen(libdirectml.so) FAIL %s\n", dlerror());
        return 4;
    }
    std::printf("STEP dlopen(libdirectml.so) ok\n");
    auto create = (PFN_DMLCreateDevice)dlsym(h, "DMLCreateDevice");
    if (!create) {
        std::printf("STEP dlsym(DMLCreateDevice) FAIL\n");
        return 4;
    }
    const char* dbg = std::getenv("DMLX_DML_DEBUG");
    DML_CREATE_DEVICE_FLAGS flags = dbg && *dbg == '1' ? DML_CREATE_DEVICE_FLAG_DEBUG : DML_CREATE_DEVICE_FLAG_NONE;
    if (!check(create(g.dev, flags, IID_PPV_ARGS(&g.dml)), "DMLCreateDevice")) return 5;
    {
        // Every level this header knows: a library older than a requested level just leaves it out.
        DML_FEATURE_LEVEL levels[] = {DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_0, DML_FEATURE_LEVEL_2_1,
                                      DML_FEATURE_LEVEL_3_0, DML_FEATURE_LEVEL_3_1, DML_FEATURE_LEVEL_4_0,
                                      DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_5_0, DML_FEATURE_LEVEL_5_1,
                                      DML_FEATURE_LEVEL_5_2, DML_FEATURE_LEVEL_6_0, DML_FEATURE_LEVEL_6_1,
                                      DML_FEATURE_LEVEL_6_2, DML_FEATURE_LEVEL_6_3, DML_FEATURE_LEVEL_6_4};
        DML_FEATURE_QUERY_FEATURE_LEVELS q = {sizeof(levels) / sizeof(levels[0]), levels};
        DML_FEATURE_DATA_FEATURE_LEVELS d = {};
        HRESULT hr = g.dml->CheckFeatureSupport(DML_FEATURE_FEATURE_LEVELS, sizeof(q), &q, sizeof(d), &d);
        std::printf("INFO DML max feature level hr=0x%08x level=0x%x\n", (unsigned)hr, (unsigned)d.MaxSupportedFeatureLevel);
    }
    if (!check(g.dml->CreateCommandRecorder(IID_PPV_ARGS(&g.recorder)), "CreateCommandRecorder")) return 5;

    bool api_ok = true;
    auto wanted = [&](const char* op) { return ("," + ops + ",").find(std::string(",") + op + ",") != std::string::npos; };
    const auto f32 = DML_TENSOR_DATA_TYPE_FLOAT32, f16 = DML_TENSOR_DATA_TYPE_FLOAT16;
    if (wanted("gemm")) api_ok = run_gemm(g, 64, 48, 40, dumpdir, 0, "gemm", f32) && api_ok;
    if (wanted("add")) api_ok = run_add(g, dumpdir, "add", f32) && api_ok;
    if (wanted("conv")) api_ok = run_conv(g, dumpdir) && api_ok;
    if (wanted("gemm16")) api_ok = run_gemm(g, 64, 48, 40, dumpdir, 0, "gemm16", f16) && api_ok;
    if (wanted("add16")) api_ok = run_add(g, dumpdir, "add16", f16) && api_ok;
    if (bench > 0) api_ok = run_gemm(g, bench, bench, bench, "", iters, "gemm_bench") && api_ok;

    release(g.recorder);
    release(g.dml);
    release(g.fence);
    release(g.list);
    release(g.alloc);
    release(g.queue);
    release(g.dev);
    std::printf("DONE api_ok=%d failures=%d\n", api_ok ? 1 : 0, g_failures);
    return api_ok && g_failures == 0 ? 0 : 1;
}
