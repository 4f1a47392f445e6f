// Dispatches kernels share: each calls f.template operator()<...>() with a template argument chosen at run time.
// Types: a kernel is compiled only for the types that can reach it; `Stored` maps the host's stored type to the
// executor's (the CUDA executor stores float16 as __half where the host has dml::half). Values: a loop calls the
// scalar math with a constant function, whose switch folds away (and the loop vectorizes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "../core/data_type.h"
#include "../core/ops/activation.h"

namespace dml {

template <class T>
using host_type = T;

// The unsigned word of `element_size` bytes (1, 2, 4 or 8): for kernels that only move or compare bits.
template <class F>
void visit_storage(size_t element_size, F&& f) {
    switch (element_size) {
        case 1: return f.template operator()<uint8_t>();
        case 2: return f.template operator()<uint16_t>();
        case 4: return f.template operator()<uint32_t>();
        default: return f.template operator()<uint64_t>();
    }
}

template <class F>
void visit_storage(DataType type, F&& f) {
    visit_storage(element_size(type), std::forward<F>(f));
}

// Every type but FLOAT64 (DirectML has no FLOAT64 arithmetic).
template <template <class> class Stored = host_type, class F>
void visit_numeric(DataType type, F&& f) {
    visit_data_type(type, [&]<class T>() {
        if constexpr (std::is_same_v<T, double>) throw std::logic_error("FLOAT64 is not admitted here");
        else f.template operator()<Stored<T>>();
    });
}

// The eight types of at most 32 bits (THRESHOLD's and POW's tables).
template <template <class> class Stored = host_type, class F>
void visit_narrow(DataType type, F&& f) {
    visit_data_type(type, [&]<class T>() {
        if constexpr (sizeof(T) > 4) throw std::logic_error("64-bit types are not admitted here");
        else f.template operator()<Stored<T>>();
    });
}

// The UINT8 or UINT32 type of a predicate's output.
template <class F>
void visit_boolean(DataType type, F&& f) {
    if (type == DataType::UInt8) return f.template operator()<uint8_t>();
    return f.template operator()<uint32_t>();
}

// Calls f.template operator()<E(I)>() with the I of the sequence that equals e. A value outside the sequence is
// not available.
template <class E, int... I, class F>
void with_constant(E e, std::integer_sequence<int, I...>, F&& f) {
    if (!((int(e) == I && (f.template operator()<E(I)>(), true)) || ...))
        throw std::logic_error("function not available for this type");
}

// The integers First, ..., Last - 1.
template <int First, int Last>
constexpr auto int_range = []<int... I>(std::integer_sequence<int, I...>) {
    return std::integer_sequence<int, (First + I)...>{};
}(std::make_integer_sequence<int, Last - First>{});

// Calls f.template operator()<A>() with activation function `a` as a constant.
template <class F>
void with_activation(ActivationFunction a, F&& f) {
    with_constant(a, int_range<0, int(ActivationFunction::HardSwish) + 1>, std::forward<F>(f));
}

}  // namespace dml
