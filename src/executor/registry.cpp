#include "registry.h"

#include <algorithm>
#include <cstdlib>

namespace dml {

void ExecutorRegistry::add(ExecutorEntry entry) {
    if (find(entry.kind)) throw ValueError("executor '" + entry.kind + "' is registered twice");
    entries_.push_back(std::move(entry));
}

void ExecutorRegistry::add_not_built(const std::string& kind, const std::string& reason) {
    add({kind, 0, [reason] { return std::optional<DeviceError>(DeviceError("NOT_BUILT", reason)); },
         [](int) -> std::shared_ptr<Device> { return nullptr; }});
}

const ExecutorEntry* ExecutorRegistry::find(const std::string& kind) const {
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const ExecutorEntry& e) { return e.kind == kind; });
    return it == entries_.end() ? nullptr : &*it;
}

std::vector<std::string> ExecutorRegistry::available_kinds() const {
    std::vector<const ExecutorEntry*> available;
    for (const ExecutorEntry& e : entries_)
        if (!e.unavailable()) available.push_back(&e);
    std::stable_sort(available.begin(), available.end(),
                     [](const ExecutorEntry* a, const ExecutorEntry* b) { return a->priority > b->priority; });
    std::vector<std::string> kinds;
    for (const ExecutorEntry* e : available) kinds.push_back(e->kind);
    return kinds;
}

std::shared_ptr<Device> ExecutorRegistry::create(const std::string& requested, int index) const {
    std::string kind = requested, source;
    if (kind.empty()) {
        const char* forced = std::getenv("DIRECTML_DEVICE");
        if (forced && *forced) {
            kind = forced;
            source = " (from DIRECTML_DEVICE)";
        } else {
            std::vector<std::string> kinds = available_kinds();
            if (kinds.empty()) throw DeviceError("NO_EXECUTOR", "no executor of this build can create a device here");
            kind = kinds.front();
        }
    }
    if (index < 0) throw ValueError("device index must not be negative, got " + std::to_string(index));
    const ExecutorEntry* entry = find(kind);
    if (!entry) {
        std::string expected;
        for (size_t i = 0; i < entries_.size(); ++i)
            expected += (i == 0 ? "" : i + 1 == entries_.size() ? " or " : ", ") + ("'" + entries_[i].kind + "'");
        throw ValueError("unknown device kind '" + kind + "'" + source + "; expected " + expected);
    }
    if (std::optional<DeviceError> why = entry->unavailable()) throw *why;
    return entry->create(index);
}

}  // namespace dml
