// Scaled dot-product attention through cuDNN's fused flash attention: the backend API's single SDPA forward
// operation (CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, cuDNN 9.13.1 and later), O = softmax(scale Q K^T) V per
// (batch, head), float16 in and out. The operation graph, cuDNN's engine and its execution plan are settled once,
// at compile; each dispatch binds the addresses and runs the plan.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "cudnn.h"

namespace dml::cuda {

// One attention for cuDNN. Q is [batch, heads, queries, head_size], K [.., keys, head_size], V [.., keys,
// value_head_size] and O [.., queries, value_head_size], each addressed through element strides in the order
// (batch, head, row) with its elements contiguous.
struct DnnAttentionProblem {
    int64_t batch = 0, heads = 0, queries = 0, keys = 0, head_size = 0, value_head_size = 0;
    int64_t q[3] = {}, k[3] = {}, v[3] = {}, o[3] = {};
    float scale = 1.0f;
};

class DnnAttention {
public:
    // Null where cuDNN (or its backend API) is missing, older than 9.13.1, or has no engine for the problem. One
    // plan per device and problem for the process, shared by every node of that problem: building one compiles
    // cuDNN's kernels at run time (NVRTC, about 50 ms each; SDXL's UNet has 140 attention nodes of 4 problems).
    static std::shared_ptr<const DnnAttention> create(CudaDevice& device, const DnnAttentionProblem& p);
    ~DnnAttention();
    DnnAttention(const DnnAttention&) = delete;
    DnnAttention& operator=(const DnnAttention&) = delete;

    uint64_t workspace_size() const { return workspace_; }
    // Enqueues on `stream` (16-byte aligned operands); DeviceError with cuDNN's status name if it fails. The caller
    // holds the device's stream mutex (as every enqueue does).
    void enqueue(const void* q, const void* k, const void* v, void* o, void* workspace, cudaStream_t stream) const;

private:
    static std::unique_ptr<DnnAttention> build(CudaDevice& device, const DnnAttentionProblem& p);
    DnnAttention(const Cudnn& lib, DnnHandle& handle, float scale) : lib_(lib), handle_(handle), scale_(scale) {}
    // A new descriptor of `type`, destroyed with this object (the plan may refer to any of them).
    dnn::BackendDesc make(int32_t type);

    const Cudnn& lib_;
    DnnHandle& handle_;
    float scale_;  // read by cuDNN from here at each run: the scale tensor is passed by value
    std::vector<dnn::BackendDesc> owned_;
    dnn::BackendDesc plan_ = nullptr;
    uint64_t workspace_ = 0;
};

}  // namespace dml::cuda
