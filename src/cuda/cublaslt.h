// cuBLASLt, opened at run time (dlopen) so that building needs no cuBLAS and the package runs where it is missing
// until a graph needs a GEMM. We declare the few functions, enums and structures we use ourselves; their values
// are cuBLASLt's (cublasLt.h, cublas_api.h, library_types.h of CUDA 13, unchanged since CUDA 11).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "../core/data_type.h"

namespace dml::cuda {

namespace lt {
using Status = int;  // cublasStatus_t; 0 is success
using Handle = struct cublasLtContext*;
using MatmulDesc = void*;
using MatrixLayout = void*;
using Preference = void*;
struct Algo {
    uint64_t data[8];
};
struct HeuristicResult {
    Algo algo;
    size_t workspace_size;
    Status state;
    float waves_count;
    int reserved[4];
};
}  // namespace lt

// The loaded library and a handle for one device.
struct CublasLt {
    lt::Status (*create)(lt::Handle*);
    lt::Status (*destroy)(lt::Handle);
    const char* (*status_name)(lt::Status);
    lt::Status (*desc_create)(lt::MatmulDesc*, int32_t compute_type, int32_t scale_type);
    lt::Status (*desc_destroy)(lt::MatmulDesc);
    lt::Status (*desc_set)(lt::MatmulDesc, int32_t attribute, const void*, size_t);
    lt::Status (*layout_create)(lt::MatrixLayout*, int32_t type, uint64_t rows, uint64_t cols, int64_t ld);
    lt::Status (*layout_destroy)(lt::MatrixLayout);
    lt::Status (*layout_set)(lt::MatrixLayout, int32_t attribute, const void*, size_t);
    lt::Status (*pref_create)(lt::Preference*);
    lt::Status (*pref_destroy)(lt::Preference);
    lt::Status (*pref_set)(lt::Preference, int32_t attribute, const void*, size_t);
    lt::Status (*heuristic)(lt::Handle, lt::MatmulDesc, lt::MatrixLayout, lt::MatrixLayout, lt::MatrixLayout,
                            lt::MatrixLayout, lt::Preference, int, lt::HeuristicResult*, int*);
    lt::Status (*matmul)(lt::Handle, lt::MatmulDesc, const void* alpha, const void* a, lt::MatrixLayout, const void* b,
                         lt::MatrixLayout, const void* beta, const void* c, lt::MatrixLayout, void* d,
                         lt::MatrixLayout, const lt::Algo*, void* workspace, size_t workspace_bytes, cudaStream_t);
    lt::Handle handle = nullptr;
    std::string path;  // where the library was found

    // Throws DeviceError named by cuBLASLt's status name unless `s` is success.
    void check(lt::Status s, const std::string& what) const;
};

// Loads cuBLASLt (once per process) and creates a handle for the current device. $DIRECTML_CUBLASLT_PATH (the
// library or its folder) when set, else libcublasLt.so.13 by name (already loaded by PyTorch, or on the loader's
// path), pip's nvidia-cublas beside this package, the CUDA toolkit, then libcublasLt.so.12.
// DeviceError "CUBLASLT_NOT_FOUND" naming every place tried.
std::unique_ptr<CublasLt> load_cublaslt();

// One column-major operand of cublasLtMatmul: `rows` x `cols` with leading dimension `ld`, as stored; `transpose`
// makes the product use its transpose. Batches are `batch_stride` elements apart.
struct LtMatrix {
    uint64_t rows, cols;
    int64_t ld;
    int64_t batch_stride = 0;
    bool transpose = false;
};

// D = act(alpha * op(A) op(B) + beta * C + bias), over `batch` matrices, in column-major terms: D is m x n.
struct LtProblem {
    DataType type;  // of A, B, C, D and bias; float16 computes in float32, float64 in float64
    LtMatrix a, b, d;
    std::optional<LtMatrix> c;  // absent: beta is 0
    int32_t batch = 1;
    double alpha = 1, beta = 0;
    bool relu = false;                  // cuBLASLt's RELU epilogue
    bool bias = false;                  // a bias vector of d.rows elements, added to every column
    int64_t bias_batch_stride = 0;
    uint32_t alignment = 256;           // bytes every pointer passed to enqueue is aligned to
};

// A cuBLASLt matmul prepared at compile: descriptors built and the algorithm chosen by cuBLASLt's heuristic.
class LtMatmul {
public:
    LtMatmul(const CublasLt& lib, const LtProblem& p);
    ~LtMatmul();
    LtMatmul(const LtMatmul&) = delete;
    LtMatmul& operator=(const LtMatmul&) = delete;

    uint64_t workspace_size() const { return workspace_; }
    // DIRECTML_CUBLASLT_FILL set (and not 0): it first fills the workspace and D with 0xFF bytes (a float NaN).
    // For compute-sanitizer's initcheck (tests/cuda_sanitizers.sh): on Hopper cuBLASLt writes its outputs and
    // split-K partial sums with stores the tool does not track (the tensor memory accelerator's), so it calls every
    // later read of them uninitialized; filled, they read as written, and a byte cuBLASLt left unwritten reads as
    // NaN, which the tests catch (docs/reliability.md).
    void enqueue(const void* a, const void* b, const void* c, void* d, const void* bias, void* workspace,
                 cudaStream_t stream) const;

private:
    void destroy();
    static bool fills_for_sanitizer();
    void fill(const void* c, void* d, void* workspace, cudaStream_t stream) const;

    const CublasLt& lib_;
    LtProblem p_;
    lt::MatmulDesc desc_ = nullptr;
    lt::MatrixLayout a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
    lt::Algo algo_{};
    uint64_t workspace_ = 0;
};

}  // namespace dml::cuda
