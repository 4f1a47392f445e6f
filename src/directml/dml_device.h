// The DirectML executor: DirectML (loaded at run time) on a Direct3D 12 device. Memory blocks are D3D12 buffers in
// the default heap, always in the unordered-access state between commands; one queue, command list and fence carry
// every copy and dispatch, one at a time.
#pragma once
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "../core/errors.h"
#include "../executor/device.h"
#include "dml_api.h"

namespace dml::directml {

// Throws dml::DeviceError naming `what` and the HRESULT unless `hr` succeeded.
void check(HRESULT hr, std::string_view what);
std::string hresult_name(HRESULT hr);  // "E_INVALIDARG (0x80070057)"

// A COM reference released when it goes.
template <class T>
class Ref {
public:
    Ref() = default;
    explicit Ref(T* p) : p_(p) {}
    Ref(const Ref&) = delete;
    Ref& operator=(const Ref&) = delete;
    Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
    Ref& operator=(Ref&& o) noexcept {
        std::swap(p_, o.p_);
        return *this;
    }
    ~Ref() {
        if (p_) p_->Release();
    }
    T* get() const { return p_; }
    T* operator->() const { return p_; }
    explicit operator bool() const { return p_ != nullptr; }
    void** out() { return reinterpret_cast<void**>(&p_); }  // for a creating call; the reference must be empty
    T* detach() { return std::exchange(p_, nullptr); }      // hands the reference over to the caller

private:
    T* p_ = nullptr;
};

// The D3D12 buffer behind a Memory block of this executor.
inline ID3D12Resource* resource_of(const Memory& m) { return static_cast<ID3D12Resource*>(m.data); }

class DmlDevice : public Device {
public:
    DmlDevice();  // DeviceError when DirectML or Direct3D 12 is missing or cannot run DirectML's shaders
    ~DmlDevice() override;

    std::string kind() const override { return "directml"; }
    std::string name() const override { return name_; }
    DLPackDevice dlpack_device() const override { return {12, 0}; }  // kDLExtDev: DLPack has no DirectML device
    std::shared_ptr<Memory> allocate(uint64_t bytes) override;
    void upload(Memory& dst, const void* src, uint64_t bytes) override;
    void download(const Memory& src, void* dst, uint64_t bytes) override;
    std::shared_ptr<Memory> stage(const void* host, uint64_t bytes) override;
    std::vector<std::type_index> operator_types() const override;
    // DirectML's own answer: the node is lowered and its operator created (CreateOperator), as compile will.
    Support supports(const Node& node) const override;
    std::unique_ptr<Plan> compile(const CompiledGraph& graph) override;

    IDMLDevice1* dml() const { return dml_.get(); }
    ID3D12Device* d3d12() const { return d3d12_.get(); }
    // Set by DIRECTML_VALIDATE_ONLY=1: the device exists where Direct3D 12 cannot build DirectML's shaders, so that
    // compile still checks every operator with DirectML; nothing can be dispatched.
    bool validate_only() const { return validate_only_; }

    // Records commands on the device's list (`record` gets it open), runs them and waits for them to finish.
    template <class F>
    void run(F&& record) {
        std::lock_guard lock(mutex_);
        record(list_.get());
        submit_and_wait();
    }
    IDMLCommandRecorder* recorder() const { return recorder_.get(); }
    // A buffer in `heap` (default: unordered access allowed, in that state; upload / readback: for copies).
    Ref<ID3D12Resource> create_buffer(uint64_t bytes, D3D12_HEAP_TYPE heap) const;

private:
    void submit_and_wait();  // mutex_ held

    std::string name_;
    bool validate_only_ = false;
    Ref<ID3D12Device> d3d12_;
    Ref<IDMLDevice1> dml_;
    Ref<ID3D12CommandQueue> queue_;
    Ref<ID3D12CommandAllocator> allocator_;
    Ref<ID3D12GraphicsCommandList> list_;
    Ref<ID3D12Fence> fence_;
    Ref<IDMLCommandRecorder> recorder_;
    uint64_t fence_value_ = 0;
    std::mutex mutex_;
};

// Why DirectML or Direct3D 12 cannot be loaded here (DIRECTML_NOT_FOUND), or nullopt; loaded once per process.
std::optional<DeviceError> missing_runtime();

// A transition barrier between two states of a whole buffer.
D3D12_RESOURCE_BARRIER transition(ID3D12Resource* r, D3D12_RESOURCE_STATES before, D3D12_RESOURCE_STATES after);

}  // namespace dml::directml

