#include "dml_device.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include <filesystem>

#include "../core/errors.h"
#include "../executor/registry.h"
#include "../platform/platform.h"
#include "lowering.h"

namespace dml::directml {

std::string hresult_name(HRESULT hr) {
    const char* name = nullptr;
    switch (static_cast<uint32_t>(hr)) {
        case 0x80070057u: name = "E_INVALIDARG"; break;
        case 0x80004001u: name = "E_NOTIMPL"; break;
        case 0x80004002u: name = "E_NOINTERFACE"; break;
        case 0x80004003u: name = "E_POINTER"; break;
        case 0x80004005u: name = "E_FAIL"; break;
        case 0x8007000Eu: name = "E_OUTOFMEMORY"; break;
        case 0x887A0004u: name = "DXGI_ERROR_UNSUPPORTED"; break;
        case 0x887A0005u: name = "DXGI_ERROR_DEVICE_REMOVED"; break;
        case 0x887A0006u: name = "DXGI_ERROR_DEVICE_HUNG"; break;
        case 0x887A0007u: name = "DXGI_ERROR_DEVICE_RESET"; break;
        default: break;
    }
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08X", static_cast<unsigned>(hr));
    return name ? std::string(name) + " (" + hex + ")" : std::string("HRESULT ") + hex;
}

void check(HRESULT hr, std::string_view what) {
    if (SUCCEEDED(hr)) return;
    std::string name = hresult_name(hr);
    std::string code = name.substr(0, name.find(' '));
    if (code == "HRESULT") code = name.substr(name.find(' ') + 1);
    throw DeviceError(code, std::string(what) + " failed: " + name);
}

D3D12_RESOURCE_BARRIER transition(ID3D12Resource* r, D3D12_RESOURCE_STATES before, D3D12_RESOURCE_STATES after) {
    D3D12_RESOURCE_BARRIER b = {};
    b.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
    b.Transition.pResource = r;
    b.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
    b.Transition.StateBefore = before;
    b.Transition.StateAfter = after;
    return b;
}

namespace {

std::string setting(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

// Where DirectML, Direct3D 12 and DXCore are by default; each is overridden by an environment variable.
struct DefaultPaths {
    std::string directml, d3d12, dxcore;  // dxcore empty where DirectML finds DXCore itself
    std::string how_to_get;               // for the message when something is missing
};

DefaultPaths default_paths() {
#ifdef _WIN32
    return {"DirectML.dll", "d3d12.dll", "",
            "DirectML.dll comes with the Microsoft.AI.DirectML NuGet package (docs/directml.md)"};
#else
    const std::string wsl = "/usr/lib/wsl/lib/";
    const std::string cache = setting("DMLX_CACHE", setting("HOME", "/root") + "/.cache/dmlx");
    if (std::filesystem::exists(wsl + "libd3d12.so"))
        return {cache + "/libdirectml.so", wsl + "libd3d12.so", wsl + "libdxcore.so",
                "experimental/directml_on_linux/fetch.sh puts libdirectml.so in " + cache + " (docs/directml.md)"};
    return {cache + "/libdirectml.so", cache + "/build/libd3d12.so", cache + "/build/libdxcore.so",
            "on native Linux, experimental/directml_on_linux/fetch.sh fetches libdirectml.so and the bridge "
            "(libd3d12.so, libdxcore.so) is built as docs/directml.md says"};
#endif
}

// The entry points of Direct3D 12 and DirectML, loaded once per process.
struct Runtime {
    PFN_D3D12CreateDevice create_d3d12 = nullptr;
    PFN_DMLCreateDevice create_dml = nullptr;
    std::string directml_path;
};

Runtime load_runtime() {
    const DefaultPaths defaults = default_paths();
    // Direct3D 12 and DXCore first: libdirectml.so names them as needed libraries and binds to those loaded.
    auto load = [&](const char* what, const char* variable, const std::string& fallback) {
        std::string path = setting(variable, fallback), error;
        void* library = platform::open_library(path, error);
        if (!library)
            throw DeviceError("DIRECTML_NOT_FOUND", std::string("the directml executor needs ") + what +
                                                        ": cannot load '" + path + "' (" + error + "; " + variable +
                                                        " names another file); " + defaults.how_to_get);
        return std::make_pair(library, path);
    };
    auto [d3d12, d3d12_path] = load("Direct3D 12", "DIRECTML_D3D12_PATH", defaults.d3d12);
    if (!defaults.dxcore.empty()) load("DXCore", "DIRECTML_DXCORE_PATH", defaults.dxcore);
    auto [directml, directml_path] = load("DirectML", "DIRECTML_LIBRARY_PATH", defaults.directml);
    Runtime r;
    r.create_d3d12 = reinterpret_cast<PFN_D3D12CreateDevice>(platform::find_symbol(d3d12, "D3D12CreateDevice"));
    r.create_dml = reinterpret_cast<PFN_DMLCreateDevice>(platform::find_symbol(directml, "DMLCreateDevice"));
    if (!r.create_d3d12)
        throw DeviceError("DIRECTML_NOT_FOUND", "'" + d3d12_path + "' has no D3D12CreateDevice: not a Direct3D 12 "
                                                "library (set DIRECTML_D3D12_PATH)");
    if (!r.create_dml)
        throw DeviceError("DIRECTML_NOT_FOUND", "'" + directml_path + "' has no DMLCreateDevice: not DirectML "
                                                "(set DIRECTML_LIBRARY_PATH)");
    r.directml_path = directml_path;
    return r;
}

const Runtime& runtime() {
    static std::mutex mutex;
    static std::unique_ptr<Runtime> loaded;  // stays empty after a failure, so a later call tries again
    std::lock_guard lock(mutex);
    if (!loaded) loaded = std::make_unique<Runtime>(load_runtime());
    return *loaded;
}

// The highest DirectML feature level this device supports, as "6.4".
std::string feature_level(IDMLDevice* dml) {
    static const DML_FEATURE_LEVEL levels[] = {
        DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_0, DML_FEATURE_LEVEL_2_1, DML_FEATURE_LEVEL_3_0,
        DML_FEATURE_LEVEL_3_1, DML_FEATURE_LEVEL_4_0, DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_5_0,
        DML_FEATURE_LEVEL_5_1, DML_FEATURE_LEVEL_5_2, DML_FEATURE_LEVEL_6_0, DML_FEATURE_LEVEL_6_1,
        DML_FEATURE_LEVEL_6_2, DML_FEATURE_LEVEL_6_3, DML_FEATURE_LEVEL_6_4};
    DML_FEATURE_QUERY_FEATURE_LEVELS query = {UINT(std::size(levels)), levels};
    DML_FEATURE_DATA_FEATURE_LEVELS data = {};
    if (FAILED(dml->CheckFeatureSupport(DML_FEATURE_FEATURE_LEVELS, sizeof query, &query, sizeof data, &data)))
        return "unknown";
    return std::to_string(data.MaxSupportedFeatureLevel >> 12) + "." +
           std::to_string((data.MaxSupportedFeatureLevel >> 8) & 0xF);
}

// Whether Direct3D 12 builds DirectML's shaders here: compiles one small identity operator.
HRESULT compile_probe(IDMLDevice* dml) {
    UINT sizes[] = {1, 1, 1, 4};
    DML_BUFFER_TENSOR_DESC buffer = {DML_TENSOR_DATA_TYPE(DataType::Float32), DML_TENSOR_FLAG_NONE, 4, sizes,
                                     nullptr, 16, 0};
    DML_TENSOR_DESC tensor = {DML_TENSOR_TYPE_BUFFER, &buffer};
    DML_UNARY_OPERATOR_DESC identity = {&tensor, &tensor, nullptr, 0};
    DML_OPERATOR_DESC desc = {DML_OPERATOR_ELEMENT_WISE_IDENTITY, &identity};
    Ref<IDMLOperator> op;
    HRESULT hr = dml->CreateOperator(&desc, __uuidof(IDMLOperator), op.out());
    if (FAILED(hr)) return hr;
    Ref<IDMLCompiledOperator> compiled;
    return dml->CompileOperator(op.get(), DML_EXECUTION_FLAG_NONE, __uuidof(IDMLCompiledOperator), compiled.out());
}

}  // namespace

std::optional<DeviceError> missing_runtime() {
    try {
        runtime();
        return std::nullopt;
    } catch (const DeviceError& e) {
        return e;
    }
}

DmlDevice::DmlDevice() {
    const Runtime& rt = runtime();
    validate_only_ = setting("DIRECTML_VALIDATE_ONLY", "0") == "1";
    HRESULT hr = rt.create_d3d12(nullptr, D3D_FEATURE_LEVEL_11_0, __uuidof(ID3D12Device), d3d12_.out());
    if (FAILED(hr))
        throw DeviceError(hresult_name(hr).substr(0, hresult_name(hr).find(' ')),
                          "D3D12CreateDevice found no Direct3D 12 device: " + hresult_name(hr) +
                              " (on native Linux the bridge runs over vkd3d and Vulkan: is there a Vulkan driver?)");
    check(rt.create_dml(d3d12_.get(), DML_CREATE_DEVICE_FLAG_NONE, __uuidof(IDMLDevice1), dml_.out()),
          "DMLCreateDevice (" + rt.directml_path + ")");
    name_ = "DirectML feature level " + feature_level(dml_.get());
    if (!validate_only_) {
        hr = compile_probe(dml_.get());
        if (FAILED(hr))
            throw DeviceError("SHADERS_UNSUPPORTED",
                              "DirectML created its device, but this Direct3D 12 device cannot build DirectML's "
                              "shaders (compiling an identity operator: " + hresult_name(hr) +
                                  "); on native Linux DirectML's DXIL shaders need vkd3d-proton (docs/directml.md). "
                                  "DIRECTML_VALIDATE_ONLY=1 creates the device anyway, to check graphs with DirectML "
                                  "without running them");
    }
    D3D12_COMMAND_QUEUE_DESC queue = {};
    queue.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
    check(d3d12_->CreateCommandQueue(&queue, __uuidof(ID3D12CommandQueue), queue_.out()), "CreateCommandQueue");
    check(d3d12_->CreateCommandAllocator(D3D12_COMMAND_LIST_TYPE_DIRECT, __uuidof(ID3D12CommandAllocator),
                                         allocator_.out()),
          "CreateCommandAllocator");
    check(d3d12_->CreateCommandList(0, D3D12_COMMAND_LIST_TYPE_DIRECT, allocator_.get(), nullptr,
                                    __uuidof(ID3D12GraphicsCommandList), list_.out()),
          "CreateCommandList");
    check(d3d12_->CreateFence(0, D3D12_FENCE_FLAG_NONE, __uuidof(ID3D12Fence), fence_.out()), "CreateFence");
    check(dml_->CreateCommandRecorder(__uuidof(IDMLCommandRecorder), recorder_.out()), "CreateCommandRecorder");
}

DmlDevice::~DmlDevice() = default;

void DmlDevice::submit_and_wait() {
    HRESULT closed = list_->Close();
    if (SUCCEEDED(closed)) {
        ID3D12CommandList* lists[] = {list_.get()};
        queue_->ExecuteCommandLists(1, lists);
        check(queue_->Signal(fence_.get(), ++fence_value_), "ID3D12CommandQueue::Signal");
        // Polled rather than waited on an event: events are a Windows object the bridge does not carry.
        while (fence_->GetCompletedValue() < fence_value_) std::this_thread::sleep_for(std::chrono::microseconds(20));
        if (fence_->GetCompletedValue() == UINT64_MAX) check(d3d12_->GetDeviceRemovedReason(), "the device");
    }
    check(allocator_->Reset(), "ID3D12CommandAllocator::Reset");
    check(list_->Reset(allocator_.get(), nullptr), "ID3D12GraphicsCommandList::Reset");
    check(closed, "recording the commands (ID3D12GraphicsCommandList::Close)");
}

Ref<ID3D12Resource> DmlDevice::create_buffer(uint64_t bytes, D3D12_HEAP_TYPE heap) const {
    D3D12_HEAP_PROPERTIES properties = {};
    properties.Type = heap;
    D3D12_RESOURCE_DESC desc = {};
    desc.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
    desc.Width = std::max<uint64_t>(4, (bytes + 3) & ~uint64_t(3));  // DirectML binds whole 4-byte elements
    desc.Height = desc.DepthOrArraySize = desc.MipLevels = 1;
    desc.Format = DXGI_FORMAT_UNKNOWN;
    desc.SampleDesc.Count = 1;
    desc.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
    D3D12_RESOURCE_STATES state = D3D12_RESOURCE_STATE_UNORDERED_ACCESS;
    if (heap == D3D12_HEAP_TYPE_DEFAULT)
        desc.Flags = D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS;
    else
        state = heap == D3D12_HEAP_TYPE_UPLOAD ? D3D12_RESOURCE_STATE_GENERIC_READ : D3D12_RESOURCE_STATE_COPY_DEST;
    Ref<ID3D12Resource> r;
    HRESULT hr = d3d12_->CreateCommittedResource(&properties, D3D12_HEAP_FLAG_NONE, &desc, state, nullptr,
                                                 __uuidof(ID3D12Resource), r.out());
    if (hr == E_OUTOFMEMORY) throw OutOfDeviceMemory("E_OUTOFMEMORY", bytes, "CreateCommittedResource");
    check(hr, "CreateCommittedResource (" + std::to_string(bytes) + " bytes)");
    return r;
}

std::shared_ptr<Memory> DmlDevice::allocate(uint64_t bytes) {
    ID3D12Resource* r = create_buffer(bytes, D3D12_HEAP_TYPE_DEFAULT).detach();
    return std::make_shared<Memory>(shared_from_this(), r, bytes,
                                    [](void* p) { static_cast<ID3D12Resource*>(p)->Release(); });
}

void DmlDevice::upload(Memory& dst, const void* src, uint64_t bytes) {
    if (!bytes) return;
    Ref<ID3D12Resource> staging = create_buffer(bytes, D3D12_HEAP_TYPE_UPLOAD);
    void* mapped = nullptr;
    check(staging->Map(0, nullptr, &mapped), "mapping an upload buffer");
    std::memcpy(mapped, src, bytes);
    staging->Unmap(0, nullptr);
    run([&](ID3D12GraphicsCommandList* list) {
        D3D12_RESOURCE_BARRIER to = transition(resource_of(dst), D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                                               D3D12_RESOURCE_STATE_COPY_DEST);
        list->ResourceBarrier(1, &to);
        list->CopyBufferRegion(resource_of(dst), 0, staging.get(), 0, bytes);
        D3D12_RESOURCE_BARRIER back = transition(resource_of(dst), D3D12_RESOURCE_STATE_COPY_DEST,
                                                 D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
        list->ResourceBarrier(1, &back);
    });
}

void DmlDevice::download(const Memory& src, void* dst, uint64_t bytes) {
    if (!bytes) return;
    Ref<ID3D12Resource> staging = create_buffer(bytes, D3D12_HEAP_TYPE_READBACK);
    run([&](ID3D12GraphicsCommandList* list) {
        D3D12_RESOURCE_BARRIER to = transition(resource_of(src), D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                                               D3D12_RESOURCE_STATE_COPY_SOURCE);
        list->ResourceBarrier(1, &to);
        list->CopyBufferRegion(staging.get(), 0, resource_of(src), 0, bytes);
        D3D12_RESOURCE_BARRIER back = transition(resource_of(src), D3D12_RESOURCE_STATE_COPY_SOURCE,
                                                 D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
        list->ResourceBarrier(1, &back);
    });
    void* mapped = nullptr;
    D3D12_RANGE read = {0, SIZE_T(bytes)};
    check(staging->Map(0, &read, &mapped), "mapping a readback buffer");
    std::memcpy(dst, mapped, bytes);
    D3D12_RANGE written = {0, 0};
    staging->Unmap(0, &written);
}

std::shared_ptr<Memory> DmlDevice::stage(const void* host, uint64_t bytes) {
    auto m = allocate(bytes);
    upload(*m, host, bytes);
    return m;
}

}  // namespace dml::directml

namespace dml {

// Lowest priority: dml.Device() picks directml only when nothing else can run (never, as cpu always can); it is
// asked for by name. Available where DirectML and Direct3D 12 load; creating the device then also checks that
// Direct3D 12 builds DirectML's shaders.
void register_directml_executor(ExecutorRegistry& registry) {
    registry.add({"directml", 5,
                  [] { return directml::missing_runtime(); },
                  [](int index) -> std::shared_ptr<Device> {
                      if (index != 0)
                          throw ValueError("the directml executor has one device, index 0 (the default adapter); got " +
                                           std::to_string(index));
                      return std::make_shared<directml::DmlDevice>();
                  }});
}

}  // namespace dml
