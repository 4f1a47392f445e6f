#include "device.h"

#include <algorithm>
#include <stdexcept>

#include "../core/errors.h"
#include "../core/ops/operator_table.h"

namespace dml {

uint64_t Buffer::nbytes() const {
    uint64_t n = element_size(data_type);
    for (uint32_t s : shape) n *= s;
    return n;
}

Support Device::supports(const Node& node) const {
    const std::vector<std::type_index> types = operator_types();
    if (std::find(types.begin(), types.end(), std::type_index(typeid(*node.desc))) != types.end()) return Support::yes();
    return Support::no("no " + kind() + " kernel");
}

void check_registered_kernels(std::string_view executor, const std::vector<std::type_index>& types) {
    for (std::type_index t : types)
        if (!find_operator(t))
            throw std::logic_error("the " + std::string(executor) + " executor registers a kernel for " + t.name() +
                                   ", which core/ops/operators.def does not list");
}

void Device::set_thread_count(uint32_t) {
    throw ValueError("the " + kind() + " executor has no thread count option (threads= is for 'cpu')");
}

}  // namespace dml
