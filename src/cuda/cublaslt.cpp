#include "cublaslt.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "../core/errors.h"
#include "cuda_device.h"
#include "library_loader.h"

namespace dml::cuda {

namespace {

// cuBLAS's values (cublas_api.h, library_types.h, cublasLt.h).
constexpr int32_t kComputeFloat32 = 68, kComputeFloat64 = 70;  // CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F
constexpr int32_t kFloat32 = 0, kFloat64 = 1, kFloat16 = 2;     // CUDA_R_32F, CUDA_R_64F, CUDA_R_16F
constexpr int32_t kOpN = 0, kOpT = 1;                            // CUBLAS_OP_N, CUBLAS_OP_T
// cublasLtMatmulDescAttributes_t
constexpr int32_t kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8, kDescBiasBatchStride = 10;
// cublasLtEpilogue_t
constexpr uint32_t kEpilogueDefault = 1, kEpilogueRelu = 2, kEpilogueBias = 4;
// cublasLtMatrixLayoutAttribute_t
constexpr int32_t kLayoutBatchCount = 5, kLayoutBatchStride = 6;
// cublasLtMatmulPreferenceAttributes_t
constexpr int32_t kPrefMaxWorkspace = 1, kPrefReductionSchemes = 3, kPrefAlignA = 5, kPrefAlignB = 6, kPrefAlignC = 7,
                  kPrefAlignD = 8;
// cublasLtReductionScheme_t: split-K partial sums kept in the compute type (with no split, always allowed)
constexpr uint32_t kReductionComputeType = 2;
// What cuBLASLt may use for a matmul: NVIDIA recommends 32 MiB on Hopper; the chosen algorithm's need is what we keep.
constexpr uint64_t kMaxWorkspace = 32ull << 20;

int32_t data_type_of(DataType t) {
    switch (t) {
        case DataType::Float32: return kFloat32;
        case DataType::Float16: return kFloat16;
        case DataType::Float64: return kFloat64;
        default: throw ValueError("cuBLASLt matmul: unsupported type " + std::string(data_type_name(t)));
    }
}

// Where cuBLASLt may be, best first: where the caller says and nowhere else, when it says.
std::vector<std::string> search_path() {
    constexpr const char* kName = "libcublasLt.so.13";
    if (auto p = library_from_env("DIRECTML_CUBLASLT_PATH", kName)) return {*p};
    std::vector<std::string> c = library_candidates(kName, {"nvidia/cu13/lib", "nvidia/cublas/lib"});
    // cuBLAS 12 runs on CUDA 13's driver, and every declaration in cublaslt.h is the same in it.
    for (std::string& s : library_candidates("libcublasLt.so.12", {"nvidia/cublas/lib"}, false))
        c.push_back(std::move(s));
    return c;
}

const OpenedLibrary& open_library() {
    static const OpenedLibrary lib = open_first(search_path());
    return lib;
}

}  // namespace

void CublasLt::check(lt::Status s, const std::string& what) const {
    if (s == 0) return;
    const char* name = status_name ? status_name(s) : nullptr;
    std::string code = name ? name : "CUBLAS_STATUS_" + std::to_string(s);
    throw DeviceError(code, "cuBLASLt: " + what + " failed: " + code);
}

std::unique_ptr<CublasLt> load_cublaslt() {
    const OpenedLibrary& l = open_library();
    if (!l.handle)
        throw DeviceError("CUBLASLT_NOT_FOUND",
                          "the cuda executor needs cuBLASLt (libcublasLt.so.13) for GEMM and convolution, and found "
                          "none. Install it (pip install nvidia-cublas, or the CUDA toolkit) or point "
                          "DIRECTML_CUBLASLT_PATH at it. Tried:" + l.tried);
    auto lib = std::make_unique<CublasLt>();
    lib->path = l.path;
    auto sym = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(l.handle, name));
        if (!fn) throw DeviceError("CUBLASLT_NOT_FOUND", l.path + " lacks " + name);
    };
    sym(lib->create, "cublasLtCreate");
    sym(lib->destroy, "cublasLtDestroy");
    sym(lib->status_name, "cublasLtGetStatusName");
    sym(lib->desc_create, "cublasLtMatmulDescCreate");
    sym(lib->desc_destroy, "cublasLtMatmulDescDestroy");
    sym(lib->desc_set, "cublasLtMatmulDescSetAttribute");
    sym(lib->layout_create, "cublasLtMatrixLayoutCreate");
    sym(lib->layout_destroy, "cublasLtMatrixLayoutDestroy");
    sym(lib->layout_set, "cublasLtMatrixLayoutSetAttribute");
    sym(lib->pref_create, "cublasLtMatmulPreferenceCreate");
    sym(lib->pref_destroy, "cublasLtMatmulPreferenceDestroy");
    sym(lib->pref_set, "cublasLtMatmulPreferenceSetAttribute");
    sym(lib->heuristic, "cublasLtMatmulAlgoGetHeuristic");
    sym(lib->matmul, "cublasLtMatmul");
    lib->check(lib->create(&lib->handle), "cublasLtCreate");
    return lib;
}

LtMatmul::LtMatmul(const CublasLt& lib, const LtProblem& p) : lib_(lib), p_(p) {
    const int32_t type = data_type_of(p.type);
    const bool f64 = p.type == DataType::Float64;
    struct Cleanup {  // destroys what was made if the constructor throws
        LtMatmul* self;
        bool armed = true;
        ~Cleanup() {
            if (armed) self->destroy();
        }
    } cleanup{this};
    lib.check(lib.desc_create(&desc_, f64 ? kComputeFloat64 : kComputeFloat32, f64 ? kFloat64 : kFloat32),
              "cublasLtMatmulDescCreate");
    auto set_desc = [&](int32_t attr, const auto& v) {
        lib.check(lib.desc_set(desc_, attr, &v, sizeof(v)), "cublasLtMatmulDescSetAttribute");
    };
    set_desc(kDescTransA, p.a.transpose ? kOpT : kOpN);
    set_desc(kDescTransB, p.b.transpose ? kOpT : kOpN);
    uint32_t epilogue = (p.relu ? kEpilogueRelu : 0) | (p.bias ? kEpilogueBias : 0);
    set_desc(kDescEpilogue, epilogue ? epilogue : kEpilogueDefault);
    if (p.bias) {
        // The heuristic reads the bias pointer's alignment: a stand-in as aligned as the real ones.
        const void* aligned = reinterpret_cast<const void*>(uintptr_t(p.alignment));
        set_desc(kDescBiasPointer, aligned);
        if (p.batch > 1) set_desc(kDescBiasBatchStride, p.bias_batch_stride);
    }
    auto layout = [&](lt::MatrixLayout& l, const LtMatrix& m) {
        lib.check(lib.layout_create(&l, type, m.rows, m.cols, m.ld), "cublasLtMatrixLayoutCreate");
        if (p.batch > 1) {
            lib.check(lib.layout_set(l, kLayoutBatchCount, &p.batch, sizeof(p.batch)),
                      "cublasLtMatrixLayoutSetAttribute");
            lib.check(lib.layout_set(l, kLayoutBatchStride, &m.batch_stride, sizeof(m.batch_stride)),
                      "cublasLtMatrixLayoutSetAttribute");
        }
    };
    layout(a_, p.a);
    layout(b_, p.b);
    layout(d_, p.d);
    layout(c_, p.c ? *p.c : p.d);

    lt::Preference pref = nullptr;
    lib.check(lib.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
    lt::HeuristicResult result{};
    int found = 0;
    lt::Status s = 0;
    for (int32_t attr : {kPrefAlignA, kPrefAlignB, kPrefAlignC, kPrefAlignD})
        if (s == 0) s = lib.pref_set(pref, attr, &p.alignment, sizeof(p.alignment));
    if (s == 0) s = lib.pref_set(pref, kPrefMaxWorkspace, &kMaxWorkspace, sizeof(kMaxWorkspace));
    // A float16 product sums in float, as DirectML's does unless told it may use half precision: a split-K algorithm
    // may otherwise add its partial sums in place in the output's float16 (on an H100, under compute-sanitizer, 130 x
    // 1030 @ 1030 x 150 erred by 40-50 times a float sum's bound: test_gemm_large_products; docs/reliability.md).
    if (s == 0 && p.type == DataType::Float16)
        s = lib.pref_set(pref, kPrefReductionSchemes, &kReductionComputeType, sizeof(kReductionComputeType));
    if (s == 0) s = lib.heuristic(lib.handle, desc_, a_, b_, c_, d_, pref, 1, &result, &found);
    lib.pref_destroy(pref);
    lib.check(s, "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0)
        throw DeviceError("CUBLAS_STATUS_NOT_SUPPORTED",
                          "cuBLASLt has no algorithm for a " + std::string(data_type_name(p.type)) + " matmul of " +
                              std::to_string(p.d.rows) + " x " + std::to_string(p.d.cols) + " (batch " +
                              std::to_string(p.batch) + ")");
    algo_ = result.algo;
    workspace_ = result.workspace_size;
    cleanup.armed = false;
}

LtMatmul::~LtMatmul() { destroy(); }

void LtMatmul::destroy() {
    for (lt::MatrixLayout l : {a_, b_, c_, d_})
        if (l) lib_.layout_destroy(l);
    if (desc_) lib_.desc_destroy(desc_);
    a_ = b_ = c_ = d_ = nullptr;
    desc_ = nullptr;
}

void LtMatmul::enqueue(const void* a, const void* b, const void* c, void* d, const void* bias, void* workspace,
                       cudaStream_t stream) const {
    if (p_.bias)
        lib_.check(lib_.desc_set(desc_, kDescBiasPointer, &bias, sizeof(bias)), "cublasLtMatmulDescSetAttribute");
    const float alpha32 = float(p_.alpha), beta32 = float(p_.beta);
    const bool f64 = p_.type == DataType::Float64;
    const void* alpha = f64 ? static_cast<const void*>(&p_.alpha) : &alpha32;
    const void* beta = f64 ? static_cast<const void*>(&p_.beta) : &beta32;
    if (fills_for_sanitizer()) fill(c, d, workspace, stream);
    lib_.check(lib_.matmul(lib_.handle, desc_, alpha, a, a_, b, b_, beta, p_.c ? c : d, c_, d, d_, &algo_, workspace,
                           workspace_, stream),
               "cublasLtMatmul");
}

bool LtMatmul::fills_for_sanitizer() {
    static const bool on = [] {
        const char* v = std::getenv("DIRECTML_CUBLASLT_FILL");
        return v && *v && std::string(v) != "0";
    }();
    return on;
}

void LtMatmul::fill(const void* c, void* d, void* workspace, cudaStream_t stream) const {
    if (workspace_)
        check(cudaMemsetAsync(workspace, 0xFF, workspace_, stream), "cudaMemsetAsync (DIRECTML_CUBLASLT_FILL)");
    if (p_.c && p_.beta != 0 && c == d) return;  // D is also the C it reads
    const size_t elem = element_size(p_.type), column = p_.d.rows * elem, pitch = size_t(p_.d.ld) * elem;
    // Each matrix of D, a column of `rows` elements every ld: the bytes between columns may be another tensor's.
    for (int32_t i = 0; i < p_.batch; ++i)
        check(cudaMemset2DAsync(static_cast<std::byte*>(d) + i * p_.d.batch_stride * int64_t(elem), pitch, 0xFF,
                                column, p_.d.cols, stream),
              "cudaMemset2DAsync (DIRECTML_CUBLASLT_FILL)");
}

}  // namespace dml::cuda
