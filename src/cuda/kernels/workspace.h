// A kernel's workspace, laid out at compile as regions one after another.
#pragma once
#include <cstdint>

namespace dml::cuda {

struct WorkspaceLayout {
    uint64_t size = 0;  // bytes so far: the kernel's workspace_size()

    // The offset of a new region of `bytes`. Regions start 256 bytes apart, so that each is as aligned as the
    // workspace (the plan hands it 256-aligned): what cuBLASLt and cuDNN are told their operands are.
    uint64_t reserve(uint64_t bytes) {
        const uint64_t at = size;
        size += (bytes + 255) & ~uint64_t(255);
        return at;
    }
};

}  // namespace dml::cuda
