// The executors of a build. Each executor library exports one function, register_<kind>_executor(ExecutorRegistry&),
// that adds its entry; the runtime calls those of the executors CMake built (runtime/executors.cpp.in), so
// registration relies on no static initializer being linked in.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../core/errors.h"
#include "device.h"

namespace dml {

struct ExecutorEntry {
    std::string kind;  // "cpu", "cuda", "directml": what dml.Device(kind) names
    int priority;      // dml.Device() picks the available executor of highest priority
    // Why the executor cannot create devices here (the DeviceError creating one raises); nullopt when it can.
    std::function<std::optional<DeviceError>()> unavailable;
    std::function<std::shared_ptr<Device>(int index)> create;
};

class ExecutorRegistry {
public:
    void add(ExecutorEntry entry);
    // A known executor this build left out: creating it raises DeviceError NOT_BUILT with `reason`.
    void add_not_built(const std::string& kind, const std::string& reason);

    // The kinds that can create devices here, best first.
    std::vector<std::string> available_kinds() const;
    // The device of `kind`; the empty kind means DIRECTML_DEVICE's, or else the best available.
    std::shared_ptr<Device> create(const std::string& kind, int index) const;

private:
    const ExecutorEntry* find(const std::string& kind) const;
    std::vector<ExecutorEntry> entries_;  // in registration order, as the unknown-kind message lists them
};

}  // namespace dml
