#include "cuda_device.h"

#include "../core/errors.h"
#include "cublaslt.h"

namespace dml::cuda {

void check(cudaError_t e, std::string_view what) {
    if (e == cudaSuccess) return;
    throw DeviceError(cudaGetErrorName(e), std::string(what) + " failed: " + cudaGetErrorString(e) + " (" +
                                               cudaGetErrorName(e) + ")");
}

void check_launch(std::string_view what) { check(cudaGetLastError(), std::string("launching ") + std::string(what)); }

float time_ms(cudaStream_t stream, const std::function<void()>& f, float enough_ms) {
    struct Events {
        cudaEvent_t start = nullptr, stop = nullptr;
        ~Events() {
            if (start) cudaEventDestroy(start);
            if (stop) cudaEventDestroy(stop);
        }
    } e;
    check(cudaEventCreate(&e.start), "cudaEventCreate");
    check(cudaEventCreate(&e.stop), "cudaEventCreate");
    auto timed = [&](int runs) {
        check(cudaEventRecord(e.start, stream), "cudaEventRecord");
        for (int i = 0; i < runs; ++i) f();
        check(cudaEventRecord(e.stop, stream), "cudaEventRecord");
        check(cudaEventSynchronize(e.stop), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, e.start, e.stop), "cudaEventElapsedTime");
        return ms / float(runs);
    };
    if (const float first = timed(1); first > enough_ms) return first;
    return timed(5);
}

DeviceGuard::DeviceGuard(int index) : index_(index) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != index_) check(cudaSetDevice(index_), "cudaSetDevice");
}

DeviceGuard::~DeviceGuard() {
    if (previous_ >= 0 && previous_ != index_) cudaSetDevice(previous_);
}

namespace {
// cudaMalloc's own alignment is 256 bytes; sizes round to 512 so that near sizes share cached blocks.
constexpr uint64_t kGranule = 512;
}  // namespace

CudaDevice::CudaDevice(int index) : index_(index) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw DeviceError(cudaGetErrorName(e), std::string("no CUDA device: cudaGetDeviceCount failed: ") +
                                                   cudaGetErrorString(e));
    }
    if (index >= count)
        throw DeviceError("cudaErrorInvalidDevice", "no CUDA device " + std::to_string(index) + ": this machine has " +
                                                        std::to_string(count));
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
    name_ = prop.name;
    sm_count_ = prop.multiProcessorCount;
    compute_major_ = prop.major;
    DeviceGuard guard(index_);
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
}

CudaDevice::~CudaDevice() {
    // Errors are ignored here: at interpreter exit the CUDA runtime may already be gone.
    int previous = -1;
    cudaGetDevice(&previous);
    cudaSetDevice(index_);
    if (stream_) cudaStreamSynchronize(stream_);
    free_cached();
    if (blas_ && blas_->handle) blas_->destroy(blas_->handle);
    if (stream_) cudaStreamDestroy(stream_);
    if (previous >= 0) cudaSetDevice(previous);
}

std::shared_ptr<Memory> CudaDevice::allocate(uint64_t bytes) {
    const uint64_t rounded = (std::max<uint64_t>(bytes, 1) + kGranule - 1) / kGranule * kGranule;
    void* p = nullptr;
    {
        std::lock_guard lock(pool_mutex_);
        auto it = cached_.find(rounded);
        if (it != cached_.end() && !it->second.empty()) {
            p = it->second.back();
            it->second.pop_back();
        }
    }
    if (!p) {
        DeviceGuard guard(index_);
        cudaError_t e = cudaMalloc(&p, rounded);
        if (e == cudaErrorMemoryAllocation) {
            cudaGetLastError();  // an allocation failure leaves the context usable; clear it and retry uncached
            free_cached();
            e = cudaMalloc(&p, rounded);
        }
        if (e != cudaSuccess) {
            cudaGetLastError();
            if (e == cudaErrorMemoryAllocation)
                throw OutOfDeviceMemory(cudaGetErrorName(e), bytes,
                                        "cudaMalloc on cuda:" + std::to_string(index_) + " (" + name_ + ")");
            check(e, "cudaMalloc of " + std::to_string(bytes) + " bytes");
        }
    }
    // The release runs in ~Memory, while Memory still holds this device.
    return std::make_shared<Memory>(shared_from_this(), p, bytes, [this, rounded](void* q) { release(q, rounded); });
}

void CudaDevice::release(void* p, uint64_t rounded) {
    std::lock_guard lock(pool_mutex_);
    cached_[rounded].push_back(p);
}

void CudaDevice::free_cached() {
    std::lock_guard lock(pool_mutex_);
    for (auto& [size, blocks] : cached_)
        for (void* p : blocks) cudaFree(p);
    cached_.clear();
}

void CudaDevice::upload(Memory& dst, const void* src, uint64_t bytes) {
    std::lock_guard lock(stream_mutex_);
    DeviceGuard guard(index_);
    check(cudaMemcpyAsync(dst.data, src, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync to the device");
    // Complete before returning: the memory may go to another stream (DLPack) next.
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after an upload");
}

void CudaDevice::download(const Memory& src, void* dst, uint64_t bytes) {
    std::lock_guard lock(stream_mutex_);
    DeviceGuard guard(index_);
    check(cudaMemcpyAsync(dst, src.data, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync to the host");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after a download");
}

std::shared_ptr<Memory> CudaDevice::stage(const void* host, uint64_t bytes) {
    // Only dispatch reads staged memory, on stream_ after this copy: no synchronization needed here. A copy from
    // pageable memory has left the host buffer when cudaMemcpyAsync returns; the caller keeps a pinned one alive
    // until the dispatch (which synchronizes) returns.
    auto memory = allocate(bytes);
    std::lock_guard lock(stream_mutex_);
    DeviceGuard guard(index_);
    check(cudaMemcpyAsync(memory->data, host, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync to the device");
    return memory;
}

const CublasLt& CudaDevice::cublaslt() {
    std::lock_guard lock(blas_mutex_);
    if (!blas_) {
        DeviceGuard guard(index_);
        blas_ = load_cublaslt();
    }
    return *blas_;
}

}  // namespace dml::cuda

namespace dml {

void register_cuda_executor(ExecutorRegistry& registry) {
    registry.add({"cuda", 20,
                  [] {
                      // Once per process: without a driver the runtime answers at once (cudaErrorInsufficientDriver).
                      static const std::optional<DeviceError> why = []() -> std::optional<DeviceError> {
                          int count = 0;
                          cudaError_t e = cudaGetDeviceCount(&count);
                          cudaGetLastError();
                          if (e != cudaSuccess)
                              return DeviceError(cudaGetErrorName(e), std::string("no CUDA device: cudaGetDeviceCount "
                                                                                  "failed: ") + cudaGetErrorString(e));
                          if (count == 0) return DeviceError("cudaErrorNoDevice", "no CUDA device on this machine");
                          return std::nullopt;
                      }();
                      return why;
                  },
                  [](int index) -> std::shared_ptr<Device> { return std::make_shared<cuda::CudaDevice>(index); }});
}

}  // namespace dml
