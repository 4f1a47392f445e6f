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

    static float to_float(uint16_t h) {
        uint32_t sign = uint32_t(h & 0x8000u) << 16;
        uint32_t exp = (h >> 10) & 0x1f;
        uint32_t mant = h & 0x3ffu;
        if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf / nan
        if (exp == 0) {
            // zero or subnormal: value = mant * 2^-24
            float v = float(mant) * 5.9604644775390625e-8f;
            return sign ? -v : v;
        }
        return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
    }

    static uint16_t from_float(float f) {
        uint32_t x = std::bit_cast<uint32_t>(f);
        uint16_t sign = uint16_t((x >> 16) & 0x8000u);
        uint32_t ax = x & 0x7fffffffu;
        if (ax >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));  // inf / nan
        if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past the largest half: inf
        if (ax < 0x38800000u) {
            // result is subnormal or zero: let the float unit do the rounding at a fixed exponent
            float v = std::bit_cast<float>(ax) + 0.5f;
            return uint16_t(sign | (std::bit_cast<uint32_t>(v) - 0x3f000000u));
        }
        uint32_t mant_odd = (ax >> 13) & 1u;
        ax += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
        return uint16_t(sign | (ax >> 13));
    }
};

}  // namespace dml
