// IEEE binary16 storage type with exact conversions to and from float (round to nearest even).
#pragma once
#include <bit>
#include <cstdint>

namespace dml {

struct half {
    uint16_t bits = 0;

    half() = default;
    half(float f) : bits(from_float(f)) {}
    operator float() const { return to_float(bits); }

    // Both conversions pick between candidate results in one expression, no branches: loops of them vectorize
    // (a chain of separate selects left GCC a branch, which kept a float16 sigmoid's loop scalar).
    static float to_float(uint16_t h) {
        const uint32_t sign = uint32_t(h & 0x8000u) << 16;
        const uint32_t em = uint32_t(h & 0x7fffu) << 13;  // exponent and mantissa where a float has them
        const uint32_t normal = em + 0x38000000u;         // the exponent rebiased by 127 - 15
        const uint32_t special = em + 0x70000000u;        // inf / nan: every exponent bit set, the mantissa kept
        // zero or subnormal: mant * 2^-24 = (1 + mant / 1024) * 2^-14 - 2^-14, exact
        const uint32_t tiny = std::bit_cast<uint32_t>(std::bit_cast<float>(em + 0x38800000u) - 6.103515625e-05f);
        return std::bit_cast<float>(sign | (em >= 0x0f800000u ? special : em < 0x00800000u ? tiny : normal));
    }

    static uint16_t from_float(float f) {
        const uint32_t x = std::bit_cast<uint32_t>(f);
        const uint32_t sign = (x >> 16) & 0x8000u;
        const uint32_t ax = x & 0x7fffffffu;
        // normal: the exponent rebiased (-112 << 23), rounded to nearest even at the 13 bits dropped
        const uint32_t normal = (ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13;
        // zero or subnormal: the float unit rounds at a fixed exponent
        const uint32_t tiny = std::bit_cast<uint32_t>(std::bit_cast<float>(ax) + 0.5f) - 0x3f000000u;
        // nan (quiet); past the largest half after rounding: inf
        return uint16_t(sign | (ax > 0x7f800000u ? 0x7e00u : ax >= 0x477ff000u ? 0x7c00u : ax < 0x38800000u ? tiny : normal));
    }
};

}  // namespace dml
