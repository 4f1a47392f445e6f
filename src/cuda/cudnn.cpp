#include "cudnn.h"

#include <dlfcn.h>

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "../core/errors.h"
#include "cuda_device.h"
#include "library_loader.h"

namespace dml::cuda {

namespace {

// cuDNN's values (cudnn_graph.h, cudnn_ops.h).
constexpr int32_t kFloat = 0, kDouble = 1, kHalf = 2;                           // cudnnDataType_t
constexpr int32_t kNchw = 0, kNhwc = 1;                                         // cudnnTensorFormat_t
constexpr int32_t kConvolution = 0, kCrossCorrelation = 1;                      // cudnnConvolutionMode_t
constexpr int32_t kDefaultMath = 0, kTensorOpMath = 1, kFmaMath = 3;            // cudnnMathType_t
constexpr int32_t kActivationRelu = 1, kActivationIdentity = 5;                 // cudnnActivationMode_t
constexpr int32_t kNotPropagateNan = 0;                                         // cudnnNanPropagation_t
constexpr int32_t kImplicitPrecompGemm = 1;                                     // cudnnConvolutionFwdAlgo_t
constexpr int32_t kDeterministic = 1;                                           // cudnnDeterminism_t
// The workspace an algorithm may take beyond a copy of x and y (which the tensor-core kernels make of NCHW
// operands): those wanting more (explicit GEMM, FFT on large images) are not taken.
constexpr uint64_t kMaxWorkspace = 256ull << 20;
// How many of the heuristics' best-ranked usable algorithms are measured (Find would run every algorithm, the
// slow ones included, on every new problem).
constexpr size_t kMeasured = 3;

// Where cuDNN may be, best first: where the caller says and nowhere else, when it says.
std::vector<std::string> search_path() {
    constexpr const char* kName = "libcudnn.so.9";
    if (auto p = library_from_env("DIRECTML_CUDNN_PATH", kName)) return {*p};
    // libcudnn.so.9 finds its sub-libraries (libcudnn_cnn.so.9, ...) beside itself, and they find pip's cuBLAS.
    return library_candidates(kName, {"nvidia/cudnn/lib"});
}

std::unique_ptr<Cudnn> open_cudnn() {
    void* const h = open_first(search_path()).handle;
    if (!h) return nullptr;
    auto lib = std::make_unique<Cudnn>();
    bool complete = true;
    auto sym = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
        complete = complete && fn;
    };
    sym(lib->error_string, "cudnnGetErrorString");
    sym(lib->create, "cudnnCreate");
    sym(lib->set_stream, "cudnnSetStream");
    sym(lib->tensor_create, "cudnnCreateTensorDescriptor");
    sym(lib->tensor_destroy, "cudnnDestroyTensorDescriptor");
    sym(lib->tensor_set, "cudnnSetTensorNdDescriptor");
    sym(lib->filter_create, "cudnnCreateFilterDescriptor");
    sym(lib->filter_destroy, "cudnnDestroyFilterDescriptor");
    sym(lib->filter_set, "cudnnSetFilterNdDescriptor");
    sym(lib->conv_create, "cudnnCreateConvolutionDescriptor");
    sym(lib->conv_destroy, "cudnnDestroyConvolutionDescriptor");
    sym(lib->conv_set, "cudnnSetConvolutionNdDescriptor");
    sym(lib->conv_set_groups, "cudnnSetConvolutionGroupCount");
    sym(lib->conv_set_math, "cudnnSetConvolutionMathType");
    sym(lib->activation_create, "cudnnCreateActivationDescriptor");
    sym(lib->activation_destroy, "cudnnDestroyActivationDescriptor");
    sym(lib->activation_set, "cudnnSetActivationDescriptor");
    sym(lib->forward_count, "cudnnGetConvolutionForwardAlgorithmMaxCount");
    sym(lib->rank_forward, "cudnnGetConvolutionForwardAlgorithm_v7");
    sym(lib->forward, "cudnnConvolutionForward");
    sym(lib->bias_activation_forward, "cudnnConvolutionBiasActivationForward");
    sym(lib->backward_data_count, "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
    sym(lib->rank_backward_data, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    sym(lib->backward_data, "cudnnConvolutionBackwardData");
    if (!complete) return nullptr;
    sym(lib->version, "cudnnGetVersion");
    sym(lib->backend_create, "cudnnBackendCreateDescriptor");
    sym(lib->backend_destroy, "cudnnBackendDestroyDescriptor");
    sym(lib->backend_finalize, "cudnnBackendFinalize");
    sym(lib->backend_set, "cudnnBackendSetAttribute");
    sym(lib->backend_get, "cudnnBackendGetAttribute");
    sym(lib->backend_execute, "cudnnBackendExecute");
    lib->backend = complete;
    return lib;
}

}  // namespace

const Cudnn* load_cudnn() {
    // Kept for the process, never closed nor freed: kernels may be destroyed as late as static destructors run.
    static const Cudnn* const lib = open_cudnn().release();
    return lib;
}

DnnHandle* dnn_handle(const Cudnn& lib, CudaDevice& device) {
    // One handle per device for the process (creating one costs milliseconds and some device memory), never
    // destroyed, as the library; a device where cudnnCreate fails is remembered as one without cuDNN.
    static std::mutex mutex;
    static auto& handles = *new std::unordered_map<int, std::unique_ptr<DnnHandle>>;
    std::lock_guard lock(mutex);
    auto [it, inserted] = handles.try_emplace(device.index());
    if (inserted) {
        DeviceGuard guard(device.index());
        auto h = std::make_unique<DnnHandle>();
        if (lib.create(&h->handle) == 0) it->second = std::move(h);
    }
    return it->second.get();
}

std::string dnn_status_name(const Cudnn& lib, dnn::Status s) {
    const char* name = lib.error_string(s);
    return name ? name : "CUDNN_STATUS_" + std::to_string(s);
}

DnnConvolution::DnnConvolution(const Cudnn& lib, DnnHandle& handle, const DnnConvProblem& p, DnnEpilogue epilogue)
    : lib_(lib), handle_(handle), p_(p), epilogue_(std::move(epilogue)) {}

DnnConvolution::~DnnConvolution() {
    for (dnn::TensorDesc t : {x_, y_, bias_})
        if (t) lib_.tensor_destroy(t);
    if (w_) lib_.filter_destroy(w_);
    if (conv_) lib_.conv_destroy(conv_);
    if (act_) lib_.activation_destroy(act_);
}

std::unique_ptr<DnnConvolution> DnnConvolution::create(CudaDevice& device, const DnnConvProblem& p,
                                                       DnnEpilogue epilogue) {
    const Cudnn* lib = load_cudnn();
    if (!lib) return nullptr;
    DnnHandle* handle = dnn_handle(*lib, device);
    if (!handle) return nullptr;
    std::unique_ptr<DnnConvolution> c(new DnnConvolution(*lib, *handle, p, std::move(epilogue)));
    // Choices by device and problem; none where cuDNN has no algorithm for it.
    static Measurements<std::optional<Choice>> chosen;
    std::vector<int64_t> key = {device.index(), int64_t(p.type), p.backward, p.flip, p.nhwc, p.groups, p.x.rank,
                                p.fuse_bias, p.fuse_relu};
    for (const DnnTensor* t : {&p.x, &p.y})
        for (int i = 0; i < t->rank; ++i) key.insert(key.end(), {t->dims[i], t->strides[i]});
    for (int i = 0; i < p.x.rank; ++i) key.push_back(p.filter[i]);
    for (int i = 0; i + 2 < p.x.rank; ++i) key.insert(key.end(), {p.pad[i], p.stride[i], p.dilation[i]});
    try {
        c->describe();
        const std::optional<Choice> choice = chosen.get(key, [&] { return c->measure(device); });
        if (!choice) return nullptr;
        c->apply(*choice);
    } catch (const DnnRefused&) {
        cudaGetLastError();  // what a refused call may have left
        return nullptr;
    } catch (const OutOfDeviceMemory&) {
        return nullptr;  // no room for the measurements' scratch buffers: our kernels need less
    }
    return c;
}

void DnnConvolution::describe() {
    const DnnConvProblem& p = p_;
    const bool f64 = p.type == DataType::Float64;
    const int32_t type = f64 ? kDouble : p.type == DataType::Float16 ? kHalf : kFloat;
    dnn_need(lib_.tensor_create(&x_));
    dnn_need(lib_.tensor_set(x_, type, p.x.rank, p.x.dims, p.x.strides));
    dnn_need(lib_.tensor_create(&y_));
    dnn_need(lib_.tensor_set(y_, type, p.y.rank, p.y.dims, p.y.strides));
    dnn_need(lib_.filter_create(&w_));
    dnn_need(lib_.filter_set(w_, type, p.nhwc ? kNhwc : kNchw, p.x.rank, p.filter));
    dnn_need(lib_.conv_create(&conv_));
    // float16 accumulates in float32 (cuDNN's PSEUDO_HALF_CONFIG), as the CPU does.
    dnn_need(lib_.conv_set(conv_, p.x.rank - 2, p.pad, p.stride, p.dilation, p.flip ? kConvolution : kCrossCorrelation,
                       f64 ? kDouble : kFloat));
    if (p.groups > 1) dnn_need(lib_.conv_set_groups(conv_, p.groups));
    // Tensor cores for float16; float32 keeps to FMA math, as our GEMMs do: TF32's 10-bit mantissa is far from
    // the float32 results the CPU executor gives.
    dnn_need(lib_.conv_set_math(conv_, p.type == DataType::Float16 ? kTensorOpMath : f64 ? kDefaultMath : kFmaMath));
    if (p.fuse_bias) {
        const int channels = p.y.dims[1];
        int dims[5] = {1, channels, 1, 1, 1}, strides[5] = {channels, 1, 1, 1, 1};
        dnn_need(lib_.tensor_create(&bias_));
        dnn_need(lib_.tensor_set(bias_, type, p.y.rank, dims, strides));
        dnn_need(lib_.activation_create(&act_));
        dnn_need(lib_.activation_set(act_, p.fuse_relu ? kActivationRelu : kActivationIdentity, kNotPropagateNan, 0.0));
    }
}

void DnnConvolution::apply(const Choice& c) {
    // cuDNN picks kernels by the algorithm and the descriptor's math type together: set the one measured.
    dnn_need(lib_.conv_set_math(conv_, c.math));
    choice_ = c;
}

std::optional<DnnConvolution::Choice> DnnConvolution::measure(CudaDevice& device) {
    const DnnConvProblem& p = p_;
    // Measured on scratch buffers (zeros) on the device's stream, which we hold meanwhile.
    std::lock_guard stream_lock(device.stream_mutex());
    std::lock_guard handle_lock(handle_.mutex);
    DeviceGuard guard(device.index());
    const cudaStream_t stream = device.stream();
    dnn_need(lib_.set_stream(handle_.handle, stream));
    const size_t es = element_size(p.type);
    auto bytes = [es](const DnnTensor& t) {  // one past the last addressed
        int64_t e = 1;
        for (int i = 0; i < t.rank; ++i) e += int64_t(t.dims[i] - 1) * t.strides[i];
        return uint64_t(e) * es;
    };
    uint64_t filter_bytes = es;
    for (int i = 0; i < p.x.rank; ++i) filter_bytes *= uint64_t(p.filter[i]);
    const uint64_t max_workspace = kMaxWorkspace + bytes(p.x) + bytes(p.y);

    // Ranked by cuDNN's heuristics, best first; usable: deterministic (a dispatch repeated on the same data gives
    // the same bits: backward data's ALGO_0 adds with atomics, in whatever order they land), within the workspace
    // limit, and for float32 FMA math (the descriptor's math type may come back otherwise).
    int count = 0;
    dnn_need((p.backward ? lib_.backward_data_count : lib_.forward_count)(handle_.handle, &count));
    std::vector<dnn::AlgoPerf> perf(size_t(std::max(count, 1)));
    int returned = 0;
    dnn_need(p.backward ? lib_.rank_backward_data(handle_.handle, w_, x_, conv_, y_, int(perf.size()), &returned,
                                                  perf.data())
                        : lib_.rank_forward(handle_.handle, x_, w_, conv_, y_, int(perf.size()), &returned,
                                            perf.data()));
    std::vector<Choice> usable;
    for (int i = 0; i < returned; ++i)
        if (perf[i].status == 0 && perf[i].memory <= max_workspace && perf[i].determinism == kDeterministic &&
            (p.type != DataType::Float32 || perf[i].math_type == kFmaMath))
            usable.push_back({perf[i].algo, perf[i].math_type, perf[i].memory, false});
    if (usable.empty()) return std::nullopt;

    // Separate blocks, so that the device's caching pool hands them (the workspace above all) to the next
    // convolution measured rather than keeping one block of every size.
    std::vector<std::shared_ptr<Memory>> held;
    auto zeros = [&](uint64_t n) {
        held.push_back(device.allocate(std::max<uint64_t>(n, 1)));
        check(cudaMemsetAsync(held.back()->data, 0, n, stream), "cudaMemsetAsync");
        return held.back()->data;
    };
    void* x = zeros(bytes(p.x));
    void* w = zeros(filter_bytes);
    void* y = zeros(bytes(p.y));
    void* bias = zeros(uint64_t(p.y.dims[1]) * es);
    uint64_t ws_bytes = 0;
    for (size_t i = 0; i < usable.size() && i < kMeasured; ++i) ws_bytes = std::max(ws_bytes, usable[i].workspace);
    void* ws = zeros(ws_bytes);
    std::optional<Choice> best;
    float best_ms = std::numeric_limits<float>::infinity();
    // The time of one choice; infinite where cuDNN refuses it at run time. One far slower than the best so far
    // (the legacy and FFT algorithms at SDXL's VAE sizes: 10 ms and more a run) is not timed further.
    auto timed = [&](const Choice& c, bool with_epilogue) {
        apply(c);
        if (run(x, w, y, bias, ws) != 0) {
            cudaGetLastError();  // what a refused call may have left
            return std::numeric_limits<float>::infinity();
        }
        return time_ms(stream, [&] {
            dnn_need(run(x, w, y, bias, ws));
            if (with_epilogue && epilogue_) epilogue_(y, bias, stream);
        }, 1.5f * best_ms);
    };
    for (size_t i = 0; i < usable.size() && i < kMeasured; ++i)
        if (const float ms = timed(usable[i], true); ms < best_ms) best = usable[i], best_ms = ms;
    if (best && p.fuse_bias) {
        // cuDNN fuses ReLU with some algorithms, the identity only with IMPLICIT_PRECOMP_GEMM: the fastest that
        // takes the fusion must beat the best convolution followed by our epilogue.
        for (Choice c : usable) {
            if (!p.fuse_relu && c.algo != kImplicitPrecompGemm) continue;
            if (c.workspace > ws_bytes) continue;
            c.fused = true;
            const float ms = timed(c, false);
            if (ms == std::numeric_limits<float>::infinity()) continue;
            if (ms <= best_ms) best = c;
            break;
        }
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after measuring cuDNN's algorithms");
    return best;
}

dnn::Status DnnConvolution::run(const void* x, const void* w, void* y, const void* bias, void* workspace) const {
    const float one32 = 1, zero32 = 0;
    const double one64 = 1, zero64 = 0;
    const bool f64 = p_.type == DataType::Float64;  // cuDNN's scaling factors are double for double, else float
    const void* one = f64 ? static_cast<const void*>(&one64) : &one32;
    const void* zero = f64 ? static_cast<const void*>(&zero64) : &zero32;
    const dnn::Handle h = handle_.handle;
    // The fused call adds alpha2 * z: with alpha2 0, z (here y) is not read, as PyTorch relies on too.
    const Choice& c = choice_;
    if (c.fused)
        return lib_.bias_activation_forward(h, one, x_, x, w_, w, conv_, c.algo, workspace, c.workspace, zero, y_, y,
                                            bias_, bias, act_, y_, y);
    if (p_.backward)
        return lib_.backward_data(h, one, w_, w, x_, x, conv_, c.algo, workspace, c.workspace, zero, y_, y);
    return lib_.forward(h, one, x_, x, w_, w, conv_, c.algo, workspace, c.workspace, zero, y_, y);
}

void DnnConvolution::enqueue(const void* x, const void* w, void* y, const void* bias, void* workspace,
                             cudaStream_t stream) const {
    {
        // Legacy cuDNN calls are captured into a CUDA graph when the handle's stream is the capturing one.
        std::lock_guard lock(handle_.mutex);
        dnn::Status s = lib_.set_stream(handle_.handle, stream);
        if (s == 0) s = run(x, w, y, bias, workspace);
        if (s != 0) {
            const std::string code = dnn_status_name(lib_, s);
            throw DeviceError(code, "cuDNN: the convolution failed: " + code);
        }
    }
    if (!choice_.fused && epilogue_) epilogue_(y, bias, stream);
}

}  // namespace dml::cuda
