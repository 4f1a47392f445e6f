// cuDNN, opened at run time (dlopen) like cuBLASLt: building needs no cuDNN, and where it is missing (or refuses a
// case) convolutions and attention run our own kernels instead. We declare the few functions, enums and structures
// we use of cuDNN 9's legacy convolution API and of its backend (graph) API, all reached through libcudnn.so.9;
// their values are cuDNN's (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h of cuDNN 9). Convolutions are here; attention
// through the backend API is in cudnn_attention.h.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "../core/data_type.h"

namespace dml::cuda {

class CudaDevice;

namespace dnn {
using Status = int;  // cudnnStatus_t; 0 is success
using Handle = struct cudnnContext*;
using TensorDesc = struct cudnnTensorStruct*;
using FilterDesc = struct cudnnFilterStruct*;
using ConvDesc = struct cudnnConvolutionStruct*;
using ActivationDesc = struct cudnnActivationStruct*;
using BackendDesc = void*;  // cudnnBackendDescriptor_t
// cudnnConvolutionFwdAlgoPerf_t and cudnnConvolutionBwdDataAlgoPerf_t, which share this layout.
struct AlgoPerf {
    int32_t algo;
    Status status;
    float time;  // milliseconds
    size_t memory;
    int32_t determinism;
    int32_t math_type;
    int32_t reserved[3];
};
}  // namespace dnn

// The loaded library.
struct Cudnn {
    const char* (*error_string)(dnn::Status);
    dnn::Status (*create)(dnn::Handle*);
    dnn::Status (*set_stream)(dnn::Handle, cudaStream_t);
    dnn::Status (*tensor_create)(dnn::TensorDesc*);
    dnn::Status (*tensor_destroy)(dnn::TensorDesc);
    dnn::Status (*tensor_set)(dnn::TensorDesc, int32_t type, int rank, const int* dims, const int* strides);
    dnn::Status (*filter_create)(dnn::FilterDesc*);
    dnn::Status (*filter_destroy)(dnn::FilterDesc);
    dnn::Status (*filter_set)(dnn::FilterDesc, int32_t type, int32_t format, int rank, const int* dims);
    dnn::Status (*conv_create)(dnn::ConvDesc*);
    dnn::Status (*conv_destroy)(dnn::ConvDesc);
    dnn::Status (*conv_set)(dnn::ConvDesc, int spatial, const int* pad, const int* stride, const int* dilation,
                            int32_t mode, int32_t compute_type);
    dnn::Status (*conv_set_groups)(dnn::ConvDesc, int);
    dnn::Status (*conv_set_math)(dnn::ConvDesc, int32_t);
    dnn::Status (*activation_create)(dnn::ActivationDesc*);
    dnn::Status (*activation_destroy)(dnn::ActivationDesc);
    dnn::Status (*activation_set)(dnn::ActivationDesc, int32_t mode, int32_t nan, double coef);
    dnn::Status (*forward_count)(dnn::Handle, int*);
    dnn::Status (*rank_forward)(dnn::Handle, dnn::TensorDesc, dnn::FilterDesc, dnn::ConvDesc, dnn::TensorDesc,
                                int requested, int* returned, dnn::AlgoPerf*);
    dnn::Status (*forward)(dnn::Handle, const void* alpha, dnn::TensorDesc, const void* x, dnn::FilterDesc,
                           const void* w, dnn::ConvDesc, int32_t algo, void* workspace, size_t workspace_bytes,
                           const void* beta, dnn::TensorDesc, void* y);
    dnn::Status (*bias_activation_forward)(dnn::Handle, const void* alpha1, dnn::TensorDesc, const void* x,
                                           dnn::FilterDesc, const void* w, dnn::ConvDesc, int32_t algo,
                                           void* workspace, size_t workspace_bytes, const void* alpha2,
                                           dnn::TensorDesc, const void* z, dnn::TensorDesc, const void* bias,
                                           dnn::ActivationDesc, dnn::TensorDesc, void* y);
    dnn::Status (*backward_data_count)(dnn::Handle, int*);
    dnn::Status (*rank_backward_data)(dnn::Handle, dnn::FilterDesc, dnn::TensorDesc, dnn::ConvDesc, dnn::TensorDesc,
                                      int requested, int* returned, dnn::AlgoPerf*);
    dnn::Status (*backward_data)(dnn::Handle, const void* alpha, dnn::FilterDesc, const void* w, dnn::TensorDesc,
                                 const void* dy, dnn::ConvDesc, int32_t algo, void* workspace,
                                 size_t workspace_bytes, const void* beta, dnn::TensorDesc, void* dx);
    // The backend API; `backend` says whether all of it loaded (attention needs it, convolutions do not).
    bool backend = false;
    size_t (*version)();
    dnn::Status (*backend_create)(int32_t type, dnn::BackendDesc*);
    dnn::Status (*backend_destroy)(dnn::BackendDesc);
    dnn::Status (*backend_finalize)(dnn::BackendDesc);
    dnn::Status (*backend_set)(dnn::BackendDesc, int32_t attribute, int32_t type, int64_t count, const void* values);
    dnn::Status (*backend_get)(dnn::BackendDesc, int32_t attribute, int32_t type, int64_t requested, int64_t* count,
                               void* values);
    dnn::Status (*backend_execute)(dnn::Handle, dnn::BackendDesc plan, dnn::BackendDesc variant_pack);
};

// cuDNN 9, loaded once per process: $DIRECTML_CUDNN_PATH (the library or its folder) when set, and nowhere else
// (so a path without it turns cuDNN off); else libcudnn.so.9 by name (already loaded by PyTorch, or on the
// loader's path), pip's nvidia-cudnn beside this package, then the CUDA toolkit. Null where none loads.
const Cudnn* load_cudnn();

// A cuDNN handle of one device and the mutex held by whoever sets its stream and calls with it.
struct DnnHandle {
    dnn::Handle handle = nullptr;
    std::mutex mutex;
};
// The handle of `device`, created on first use and kept for the process; null where cudnnCreate fails there.
DnnHandle* dnn_handle(const Cudnn& lib, CudaDevice& device);
// cuDNN's name for status `s` (CUDNN_STATUS_...).
std::string dnn_status_name(const Cudnn& lib, dnn::Status s);

// A cuDNN call failed at compile: the case is left to our own kernels.
struct DnnRefused {};
inline void dnn_need(dnn::Status s) {
    if (s != 0) throw DnnRefused{};
}

// A cuDNN convolution's tensor: 4-D or 5-D, element dimensions and strides in cuDNN's order (N, C, spatial...).
struct DnnTensor {
    int rank = 0;
    int dims[5] = {}, strides[5] = {};
};

// One convolution for cuDNN. Forward: y = conv(x, w). Backward: the transposed convolution, which is cuDNN's
// backward data with x as dy and y as dx.
struct DnnConvProblem {
    DataType type = DataType::Float32;  // of x, w, y and bias; float16 computes in float32
    bool backward = false;
    bool flip = false;  // CUDNN_CONVOLUTION (the filter flipped spatially), else CUDNN_CROSS_CORRELATION
    bool nhwc = false;  // the filter's format
    int groups = 1;
    DnnTensor x, y;
    int filter[5] = {};  // [K, C / groups, spatial...], packed in its format
    int pad[3] = {}, stride[3] = {}, dilation[3] = {};
    // Forward only: what may run inside cudnnConvolutionBiasActivationForward, y = relu?(conv + bias), the bias
    // packed [K]. Used where it measures faster than the convolution and the epilogue.
    bool fuse_bias = false, fuse_relu = false;
};

// What follows the convolution where cuDNN does not fuse it: the bias and activation on y in place.
using DnnEpilogue = std::function<void(void* y, const void* bias, cudaStream_t stream)>;

// A cuDNN convolution prepared at compile: descriptors built, the algorithm (and its math type) the fastest of the
// few that cuDNN's heuristics rank first, measured on scratch buffers, the fusion of the epilogue decided by
// measuring both ways.
class DnnConvolution {
public:
    // Null where cuDNN is missing, refuses the problem, or has no algorithm for it: the caller runs its own.
    // `epilogue` (may be empty) is run by enqueue after an unfused convolution.
    static std::unique_ptr<DnnConvolution> create(CudaDevice& device, const DnnConvProblem& p, DnnEpilogue epilogue);
    ~DnnConvolution();
    DnnConvolution(const DnnConvolution&) = delete;
    DnnConvolution& operator=(const DnnConvolution&) = delete;

    uint64_t workspace_size() const { return choice_.workspace; }
    // Enqueues on `stream`: the convolution, and the epilogue unless fused. The caller holds the device's stream
    // mutex (as every enqueue does).
    void enqueue(const void* x, const void* w, void* y, const void* bias, void* workspace, cudaStream_t stream) const;

private:
    // What the measurements chose; kept per problem for the process, so that repeated shapes are measured once.
    struct Choice {
        int32_t algo = 0, math = 0;
        uint64_t workspace = 0;
        bool fused = false;
    };
    DnnConvolution(const Cudnn& lib, DnnHandle& handle, const DnnConvProblem& p, DnnEpilogue epilogue);
    void describe();
    std::optional<Choice> measure(CudaDevice& device);
    void apply(const Choice& c);
    // The cuDNN call alone; its status.
    dnn::Status run(const void* x, const void* w, void* y, const void* bias, void* workspace) const;

    const Cudnn& lib_;
    DnnHandle& handle_;
    DnnConvProblem p_;
    DnnEpilogue epilogue_;
    dnn::TensorDesc x_ = nullptr, y_ = nullptr, bias_ = nullptr;
    dnn::FilterDesc w_ = nullptr;
    dnn::ConvDesc conv_ = nullptr;
    dnn::ActivationDesc act_ = nullptr;
    Choice choice_;
};

}  // namespace dml::cuda
