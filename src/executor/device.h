// The executor interface: a Device owns memory, says which nodes it runs, and compiles graphs into Plans; a Plan
// dispatches them. Executors (cpu/, cuda/, directml/) implement it and register themselves (registry.h); they
// receive fully inferred tensor descriptions and never re-derive shapes.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "../core/compiled_graph.h"

namespace dml {

class Device;

// A block of device memory. `data` is a device address (host memory on the CPU executor).
struct Memory {
    std::shared_ptr<Device> device;
    void* data = nullptr;
    uint64_t bytes = 0;
    std::function<void(void*)> release;  // frees `data`; empty when the memory is borrowed

    Memory(std::shared_ptr<Device> d, void* p, uint64_t n, std::function<void(void*)> r)
        : device(std::move(d)), data(p), bytes(n), release(std::move(r)) {}
    ~Memory() {
        if (release) release(data);
    }
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;
};

// A tensor resident on a device: what dml.Buffer is. Packed, of one type and shape.
struct Buffer {
    std::shared_ptr<Memory> memory;
    DataType data_type;
    Sizes shape;

    uint64_t nbytes() const;
};

class Plan {
public:
    virtual ~Plan() = default;
    // Bytes of intermediate memory and workspace one dispatch uses.
    virtual uint64_t temporary_size() const = 0;
    // Bytes the plan keeps on the device beside the bound weights (e.g. weights re-laid for a library).
    virtual uint64_t persistent_size() const { return 0; }
    // Called once the owned inputs (weights) are bound, before the first execute that uses them.
    virtual void initialize(std::span<Memory* const> inputs) { (void)inputs; }
    // `inputs` follows CompiledGraph::inputs, `outputs` CompiledGraph::outputs; every memory block is large enough.
    virtual void execute(std::span<Memory* const> inputs, std::span<Memory* const> outputs) = 0;
};

// DLPack's device identification, for Buffer.__dlpack_device__.
struct DLPackDevice {
    int32_t type;  // kDLCPU = 1, kDLCUDA = 2
    int32_t id;
};

// Whether an executor runs a node as it stands (operator, data types, fused activation, layout), or why not.
class Support {
public:
    static Support yes() { return Support(); }
    static Support no(std::string reason) { return Support(std::move(reason)); }
    explicit operator bool() const { return !reason_; }
    const std::string& reason() const { return *reason_; }

private:
    Support() = default;
    explicit Support(std::string reason) : reason_(std::move(reason)) {}
    std::optional<std::string> reason_;
};

class Device : public std::enable_shared_from_this<Device> {
public:
    virtual ~Device() = default;
    virtual std::string kind() const = 0;  // "cpu", "cuda", "directml"
    virtual std::string name() const = 0;  // what the hardware calls itself
    virtual DLPackDevice dlpack_device() const = 0;
    // The stream this device reads and writes its memory on, as DLPack's `stream` argument names it (a CUDA stream
    // handle): what a producer's tensor must be ready on when we import it. None where the device has no streams.
    virtual std::optional<intptr_t> dlpack_stream() const { return std::nullopt; }

    virtual std::shared_ptr<Memory> allocate(uint64_t bytes) = 0;
    virtual void upload(Memory& dst, const void* src, uint64_t bytes) = 0;
    virtual void download(const Memory& src, void* dst, uint64_t bytes) = 0;
    // Makes host memory usable as an input (of one dispatch, or a compiled operator's constant): borrowed where the
    // device can read host memory, copied otherwise. The caller keeps `host` alive while the memory is read.
    virtual std::shared_ptr<Memory> stage(const void* host, uint64_t bytes) = 0;

    // The OperatorDesc types this executor has kernels for (registered_operator_types() checks them).
    virtual std::vector<std::type_index> operator_types() const = 0;
    // Asked for every node before compile, and by rewrites before they produce a node. By default: whether the
    // node's type is among operator_types(); an executor with finer limits (data types, fused activations,
    // layouts) says so here.
    virtual Support supports(const Node& node) const;
    // Every node is one that supports() accepts.
    virtual std::unique_ptr<Plan> compile(const CompiledGraph& graph) = 0;

    // The host threads the device's kernels use (dml.Device(threads=...)); executors without the option refuse.
    virtual void set_thread_count(uint32_t threads);
};

// The kernel registration check: every type an executor registers a kernel for is in the operator table
// (core/ops/operators.def). Throws std::logic_error naming the first that is not.
void check_registered_kernels(std::string_view executor, const std::vector<std::type_index>& types);

// The types of an executor's kernel table (a map keyed by std::type_index), checked against the operator table.
template <class KernelTable>
std::vector<std::type_index> registered_operator_types(std::string_view executor, const KernelTable& table) {
    std::vector<std::type_index> types;
    for (const auto& entry : table) types.push_back(entry.first);
    check_registered_kernels(executor, types);
    return types;
}

}  // namespace dml
