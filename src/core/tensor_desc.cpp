#include "tensor_desc.h"

#include <stdexcept>

#include "errors.h"

namespace dml {

TensorDesc::TensorDesc(DataType type, Sizes sizes_, std::optional<Strides> strides_)
    : data_type(type), sizes(std::move(sizes_)), strides(std::move(strides_)) {
    element_size(type);  // throws for an unknown type
    if (sizes.empty() || sizes.size() > kMaxDimensions)
        throw ValueError("a tensor has 1 to 8 dimensions, got " + std::to_string(sizes.size()));
    uint64_t count = 1;
    for (uint32_t s : sizes) {
        if (s == 0) throw ValueError("tensor sizes must be positive, got " + sizes_to_string(sizes));
        count *= s;
        if (count > (uint64_t(1) << 40)) throw ValueError("tensor " + sizes_to_string(sizes) + " has more than 2^40 elements");
    }
    if (strides && strides->size() != sizes.size())
        throw ValueError("strides " + sizes_to_string(*strides) + " do not match the rank of sizes " +
                         sizes_to_string(sizes));
    if (strides) {
        // Bound the last addressed element as the element count is bounded, so that byte extents never overflow
        // (a wrapped extent would pass the bounds checks of views).
        unsigned __int128 last = 0;
        for (size_t i = 0; i < sizes.size(); ++i) last += (unsigned __int128)(sizes[i] - 1) * (*strides)[i];
        if (last >= (uint64_t(1) << 40))
            throw ValueError("tensor " + sizes_to_string(sizes) + " strides " + sizes_to_string(*strides) +
                             " addresses elements past the 2^40 limit");
    }
    if (strides && *strides == packed_strides(sizes)) strides.reset();
}

TensorDesc make_tensor_desc(std::string_view who, DataType type, Sizes sizes, std::optional<Strides> strides) {
    try {
        return TensorDesc(type, std::move(sizes), std::move(strides));
    } catch (const ValueError& e) {
        throw ValueError(std::string(who) + ": " + e.what());
    }
}

uint64_t TensorDesc::element_count() const {
    uint64_t n = 1;
    for (uint32_t s : sizes) n *= s;
    return n;
}

Strides packed_strides(const Sizes& sizes) {
    Strides st(sizes.size());
    uint64_t s = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
        st[i] = uint32_t(s);
        s *= sizes[i];
    }
    return st;
}

Strides TensorDesc::effective_strides() const { return strides ? *strides : packed_strides(sizes); }

uint64_t TensorDesc::extent_in_bytes() const {
    if (!strides) return element_count() * element_size(data_type);
    uint64_t last = 0;
    for (size_t i = 0; i < sizes.size(); ++i) last += uint64_t(sizes[i] - 1) * (*strides)[i];
    return (last + 1) * element_size(data_type);
}

uint64_t TensorDesc::total_tensor_size_in_bytes() const { return (extent_in_bytes() + 3) & ~uint64_t(3); }

bool TensorDesc::is_packed() const { return !strides; }

TensorDesc TensorDesc::with_rank(size_t rank) const {
    if (rank < sizes.size()) throw ValueError("cannot reduce rank of " + to_string());
    TensorDesc d = *this;
    Strides st = effective_strides();
    size_t pad = rank - sizes.size();
    d.sizes.insert(d.sizes.begin(), pad, 1u);
    st.insert(st.begin(), pad, 0u);
    d.strides = st;
    if (*d.strides == packed_strides(d.sizes)) d.strides.reset();
    return d;
}

std::string sizes_to_string(const std::vector<uint32_t>& sizes) {
    std::string s = "[";
    for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
    return s + "]";
}

std::string TensorDesc::to_string() const {
    std::string s = std::string(data_type_name(data_type)) + sizes_to_string(sizes);
    if (strides) s += " strides " + sizes_to_string(*strides);
    return s;
}

bool TensorDesc::operator==(const TensorDesc& o) const {
    return data_type == o.data_type && sizes == o.sizes && effective_strides() == o.effective_strides();
}

}  // namespace dml
