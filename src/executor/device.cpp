#include "device.h"

namespace dml {

uint64_t Buffer::nbytes() const {
    uint64_t n = element_size(data_type);
    for (uint32_t s : shape) n *= s;
    return n;
}

}  // namespace dml
