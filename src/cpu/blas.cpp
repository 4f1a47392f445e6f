#include "blas.h"

#include <cstdlib>
#include <mutex>
#include <string>

#include "../core/errors.h"
#include "../platform/platform.h"

namespace dml::blas {

namespace {
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;  // CBLAS enum values
using sgemm_fn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                          int);
using dgemm_fn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                          double*, int);
sgemm_fn g_sgemm = nullptr;
dgemm_fn g_dgemm = nullptr;

void* symbol(void* lib, const char* name, const std::string& path) {
    void* s = platform::find_symbol(lib, name);
    if (!s) throw DeviceError("BLAS_SYMBOL_MISSING", std::string("BLAS library ") + path + " lacks " + name);
    return s;
}

// OpenBLAS is set to one thread: the CPU executor splits products over its own pool (kernels/blas_gemm.h).
void load_library(const std::string& path) {
    std::string error;
    void* lib = platform::open_library(path, error);
    if (!lib) throw DeviceError("BLAS_LOAD_FAILED", "cannot load BLAS library: " + error);
    g_sgemm = reinterpret_cast<sgemm_fn>(symbol(lib, "scipy_cblas_sgemm", path));
    g_dgemm = reinterpret_cast<dgemm_fn>(symbol(lib, "scipy_cblas_dgemm", path));
    reinterpret_cast<void (*)(int)>(symbol(lib, "scipy_openblas_set_num_threads", path))(1);
}

}  // namespace

void load() {
    static std::once_flag once;
    std::call_once(once, [] {
        const char* path = std::getenv("DIRECTML_OPENBLAS");
        if (!path || !*path)
            throw DeviceError("BLAS_NOT_LOADED", "the CPU executor's BLAS is not loaded: DIRECTML_OPENBLAS names no "
                                                 "library (import directml sets it)");
        load_library(path);
    });
}

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
    load();
    g_sgemm(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void dgemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
           double beta, double* c, int ldc) {
    load();
    g_dgemm(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace dml::blas
