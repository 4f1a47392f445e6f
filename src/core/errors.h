// Exception types of the core; the binding maps them to Python's ValueError, TypeError, dml.DeviceError and its
// subclasses dml.OutOfDeviceMemory and dml.NotSupportedError.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace dml {

// The caller passed something invalid (maps to ValueError).
struct ValueError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// The caller passed something of the wrong kind (maps to TypeError).
struct TypeError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// The executor's backend failed. `code` is the backend's own name for the error (a CUDA error name, an HRESULT
// name); maps to dml.DeviceError.
struct DeviceError : std::runtime_error {
    std::string code;
    DeviceError(std::string code_, const std::string& message) : std::runtime_error(message), code(std::move(code_)) {}
};

// The device could not provide `bytes` of memory (maps to dml.DeviceError, which is also a MemoryError).
struct OutOfDeviceMemory : DeviceError {
    uint64_t bytes;
    OutOfDeviceMemory(std::string code_, uint64_t bytes_, const std::string& where)
        : DeviceError(std::move(code_), "out of device memory: " + where + " asked for " + std::to_string(bytes_) +
                                            " bytes"),
          bytes(bytes_) {}
};

// An executor does not run a node the graph needs (an operator, a data type, a fused activation it lacks). Not the
// caller's mistake in building the graph, so not a ValueError: the same graph may run on another executor. Maps to
// dml.NotSupportedError, a dml.DeviceError with code NOT_SUPPORTED.
struct NotSupported : DeviceError {
    NotSupported(const std::string& node_type, const std::string& executor, const std::string& reason)
        : DeviceError("NOT_SUPPORTED", node_type + " is not supported by executor " + executor + ": " + reason) {}
};

}  // namespace dml
