#include "device.h"

#include <cstdlib>

#include "../core/errors.h"
#include "../cpu/cpu_device.h"

namespace dml {

#ifdef DIRECTML_WITH_CUDA
// cuda/cuda_device.cpp
std::shared_ptr<Device> create_cuda_device(int index);
bool cuda_device_present();
#endif
#ifdef DIRECTML_WITH_DIRECTML
// directml/dml_device.cpp
std::shared_ptr<Device> create_directml_device(int index);
#endif

uint64_t Buffer::nbytes() const {
    uint64_t n = element_size(data_type);
    for (uint32_t s : shape) n *= s;
    return n;
}

std::vector<std::string> available_device_kinds() {
    std::vector<std::string> kinds;
#ifdef DIRECTML_WITH_CUDA
    if (cuda_device_present()) kinds.push_back("cuda");
#endif
    kinds.push_back("cpu");
#ifdef DIRECTML_WITH_DIRECTML
    kinds.push_back("directml");  // last: never the default; creating it says what is missing where it cannot run
#endif
    return kinds;
}

std::shared_ptr<Device> create_device(const std::string& requested, int index) {
    std::string kind = requested, source;
    if (kind.empty()) {
        const char* forced = std::getenv("DIRECTML_DEVICE");
        if (forced && *forced) {
            kind = forced;
            source = " (from DIRECTML_DEVICE)";
        } else {
            kind = available_device_kinds().front();
        }
    }
    if (index < 0) throw ValueError("device index must not be negative, got " + std::to_string(index));
    if (kind == "cpu") {
        if (index != 0) throw ValueError("the cpu executor has one device, index 0; got " + std::to_string(index));
        return std::make_shared<cpu::CpuDevice>();
    }
    if (kind == "cuda") {
#ifdef DIRECTML_WITH_CUDA
        return create_cuda_device(index);
#else
        throw DeviceError("NOT_BUILT", "this build of directml has no cuda executor (no CUDA toolkit was found when it was built)");
#endif
    }
    if (kind == "directml") {
#ifdef DIRECTML_WITH_DIRECTML
        return create_directml_device(index);
#else
        throw DeviceError("NOT_BUILT", "this build of directml has no directml executor (no DirectX-Headers were "
                                       "found when it was built: apt-get install directx-headers-dev)");
#endif
    }
    throw ValueError("unknown device kind '" + kind + "'" + source + "; expected 'cpu', 'cuda' or 'directml'");
}

}  // namespace dml
