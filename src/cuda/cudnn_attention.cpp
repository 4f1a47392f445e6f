#include "cudnn_attention.h"

#include <bit>
#include <string>

#include "../core/errors.h"
#include "cuda_device.h"

namespace dml::cuda {

namespace {

// cuDNN's values (cudnn_graph.h of cuDNN 9).
enum DescriptorType : int32_t {  // cudnnBackendDescriptorType_t
    kEngineConfig = 3, kEngineHeuristics = 4, kExecutionPlan = 5, kOperationGraph = 15, kVariantPack = 16,
    kTensor = 17, kSdpaForward = 41
};
enum AttributeType : int32_t {  // cudnnBackendAttributeType_t
    kTypeHandle = 0, kTypeDataType = 1, kTypeBoolean = 2, kTypeInt64 = 3, kTypeVoidPtr = 6, kTypeHeurMode = 8,
    kTypeDescriptor = 15
};
enum Attribute : int32_t {  // cudnnBackendAttributeName_t
    kHeuristicsMode = 200, kHeuristicsGraph = 201, kHeuristicsResults = 202,
    kPlanHandle = 400, kPlanEngineConfig = 401, kPlanWorkspaceSize = 402,
    kGraphHandle = 800, kGraphOps = 801,
    kTensorAlignment = 900, kTensorDataType = 901, kTensorDimensions = 902, kTensorStrides = 903,
    kTensorUniqueId = 906, kTensorByValue = 908,
    kPackUniqueIds = 1000, kPackDataPointers = 1001, kPackWorkspace = 1003,
    kSdpaQ = 2800, kSdpaK = 2801, kSdpaV = 2802, kSdpaO = 2803, kSdpaScale = 2805
};
constexpr int32_t kDataFloat = 0, kDataHalf = 2;  // cudnnDataType_t
constexpr int32_t kHeuristicsModeA = 3;           // cudnnBackendHeurMode_t
// The first cuDNN whose SDPA operation cudnn-frontend builds for float16 (9.13.0 had it with known faults).
constexpr size_t kFirstVersion = 91301;
// Engines asking for more workspace are passed over.
constexpr int64_t kMaxWorkspace = 256ll << 20;

// The tensors' unique ids in the graph and the variant pack.
enum Uid : int64_t { kQ = 1, kK, kV, kO, kScale };

}  // namespace

dnn::BackendDesc DnnAttention::make(int32_t type) {
    dnn::BackendDesc d = nullptr;
    dnn_need(lib_.backend_create(type, &d));
    owned_.push_back(d);
    return d;
}

DnnAttention::~DnnAttention() {
    for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) lib_.backend_destroy(*it);
}

std::shared_ptr<const DnnAttention> DnnAttention::create(CudaDevice& device, const DnnAttentionProblem& p) {
    std::vector<int64_t> key = {device.index(), p.batch, p.heads, p.queries, p.keys, p.head_size, p.value_head_size,
                                std::bit_cast<int32_t>(p.scale)};
    for (const int64_t* s : {p.q, p.k, p.v, p.o}) key.insert(key.end(), s, s + 3);
    // Never destroyed: the plans would be released after the CUDA context at exit.
    static auto* plans = new Measurements<std::shared_ptr<const DnnAttention>>;
    return plans->get(key, [&] { return std::shared_ptr<const DnnAttention>(build(device, p)); });
}

std::unique_ptr<DnnAttention> DnnAttention::build(CudaDevice& device, const DnnAttentionProblem& p) {
    const Cudnn* lib = load_cudnn();
    if (!lib || !lib->backend || lib->version() < kFirstVersion) return nullptr;
    DnnHandle* handle = dnn_handle(*lib, device);
    if (!handle) return nullptr;
    std::unique_ptr<DnnAttention> a(new DnnAttention(*lib, *handle, p.scale));
    auto set = [&](dnn::BackendDesc d, int32_t attribute, int32_t type, int64_t count, const void* values) {
        dnn_need(lib->backend_set(d, attribute, type, count, values));
    };
    // A finalized tensor descriptor, 4-D: Q, K, V and O are [batch, heads, rows, elements] through (batch, head,
    // row) strides, float16, 16-byte aligned; the scale is one float passed by value.
    auto tensor = [&](int64_t uid, int32_t type, const int64_t (&dims)[4], const int64_t (&strides)[4],
                      int64_t alignment, bool by_value) {
        const dnn::BackendDesc t = a->make(kTensor);
        set(t, kTensorDataType, kTypeDataType, 1, &type);
        set(t, kTensorDimensions, kTypeInt64, 4, dims);
        set(t, kTensorStrides, kTypeInt64, 4, strides);
        set(t, kTensorUniqueId, kTypeInt64, 1, &uid);
        set(t, kTensorAlignment, kTypeInt64, 1, &alignment);
        if (by_value) set(t, kTensorByValue, kTypeBoolean, 1, &by_value);
        dnn_need(lib->backend_finalize(t));
        return t;
    };
    auto operand = [&](int64_t uid, int64_t rows, int64_t elements, const int64_t (&st)[3]) {
        return tensor(uid, kDataHalf, {p.batch, p.heads, rows, elements}, {st[0], st[1], st[2], 1}, 16, false);
    };
    try {
        DeviceGuard guard(device.index());
        const dnn::BackendDesc q = operand(kQ, p.queries, p.head_size, p.q);
        const dnn::BackendDesc k = operand(kK, p.keys, p.head_size, p.k);
        const dnn::BackendDesc v = operand(kV, p.keys, p.value_head_size, p.v);
        const dnn::BackendDesc o = operand(kO, p.queries, p.value_head_size, p.o);
        const dnn::BackendDesc s = tensor(kScale, kDataFloat, {1, 1, 1, 1}, {1, 1, 1, 1}, 4, true);
        const dnn::BackendDesc op = a->make(kSdpaForward);
        set(op, kSdpaQ, kTypeDescriptor, 1, &q);
        set(op, kSdpaK, kTypeDescriptor, 1, &k);
        set(op, kSdpaV, kTypeDescriptor, 1, &v);
        set(op, kSdpaO, kTypeDescriptor, 1, &o);
        set(op, kSdpaScale, kTypeDescriptor, 1, &s);
        dnn_need(lib->backend_finalize(op));

        const dnn::BackendDesc graph = a->make(kOperationGraph);
        set(graph, kGraphHandle, kTypeHandle, 1, &handle->handle);
        set(graph, kGraphOps, kTypeDescriptor, 1, &op);
        dnn_need(lib->backend_finalize(graph));

        // cuDNN's heuristics rank the engine configurations; the first whose plan builds is taken.
        const dnn::BackendDesc heuristics = a->make(kEngineHeuristics);
        set(heuristics, kHeuristicsGraph, kTypeDescriptor, 1, &graph);
        set(heuristics, kHeuristicsMode, kTypeHeurMode, 1, &kHeuristicsModeA);
        dnn_need(lib->backend_finalize(heuristics));
        int64_t count = 0;
        dnn_need(lib->backend_get(heuristics, kHeuristicsResults, kTypeDescriptor, 0, &count, nullptr));
        std::vector<dnn::BackendDesc> configs;
        for (int64_t i = 0; i < count; ++i) configs.push_back(a->make(kEngineConfig));
        dnn_need(lib->backend_get(heuristics, kHeuristicsResults, kTypeDescriptor, count, &count, configs.data()));
        for (int64_t i = 0; i < count && !a->plan_; ++i) {
            const dnn::BackendDesc plan = a->make(kExecutionPlan);
            set(plan, kPlanHandle, kTypeHandle, 1, &handle->handle);
            set(plan, kPlanEngineConfig, kTypeDescriptor, 1, &configs[i]);
            int64_t workspace = 0, n = 0;
            if (lib->backend_finalize(plan) != 0 ||
                lib->backend_get(plan, kPlanWorkspaceSize, kTypeInt64, 1, &n, &workspace) != 0 ||
                workspace > kMaxWorkspace)
                continue;
            a->plan_ = plan;
            a->workspace_ = uint64_t(workspace);
        }
    } catch (const DnnRefused&) {
        cudaGetLastError();  // what a refused call may have left
        return nullptr;
    }
    if (!a->plan_) return nullptr;
    return a;
}

void DnnAttention::enqueue(const void* q, const void* k, const void* v, void* o, void* workspace,
                           cudaStream_t stream) const {
    const int64_t uids[5] = {kQ, kK, kV, kO, kScale};
    const void* pointers[5] = {q, k, v, o, &scale_};
    std::lock_guard lock(handle_.mutex);
    dnn::BackendDesc pack = nullptr;
    dnn::Status s = lib_.set_stream(handle_.handle, stream);
    if (s == 0) s = lib_.backend_create(kVariantPack, &pack);
    if (s == 0) s = lib_.backend_set(pack, kPackUniqueIds, kTypeInt64, 5, uids);
    if (s == 0) s = lib_.backend_set(pack, kPackDataPointers, kTypeVoidPtr, 5, pointers);
    if (s == 0) s = lib_.backend_set(pack, kPackWorkspace, kTypeVoidPtr, 1, &workspace);
    if (s == 0) s = lib_.backend_finalize(pack);
    if (s == 0) s = lib_.backend_execute(handle_.handle, plan_, pack);
    if (pack) lib_.backend_destroy(pack);
    if (s != 0) {
        const std::string code = dnn_status_name(lib_, s);
        throw DeviceError(code, "cuDNN: the attention failed: " + code);
    }
}

}  // namespace dml::cuda
