#include "device.h"

#include "../core/errors.h"

namespace dml {

uint64_t Buffer::nbytes() const {
    uint64_t n = element_size(data_type);
    for (uint32_t s : shape) n *= s;
    return n;
}

void Device::set_thread_count(uint32_t) {
    throw ValueError("the " + kind() + " executor has no thread count option (threads= is for 'cpu')");
}

}  // namespace dml
