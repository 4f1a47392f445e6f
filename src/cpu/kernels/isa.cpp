#include "isa.h"

#include <cstdlib>
#include <string>

#if defined(DML_X86_DISPATCH) && defined(__linux__)
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace dml::cpu {

Isa cpu_isa() {
#if defined(DML_X86_DISPATCH)
    static const Isa isa = [] {
        const char* cap = std::getenv("DIRECTML_CPU_ISA");
        const std::string limit = cap ? cap : "";
        __builtin_cpu_init();
        if (limit == "generic") return Isa::Generic;
        if (limit != "avx2" && __builtin_cpu_supports("avx512f")) return Isa::Avx512;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
            return Isa::Avx2;
        return Isa::Generic;
    }();
    return isa;
#else
    return Isa::Generic;
#endif
}

bool cpu_has_amx() {
#if defined(DML_X86_DISPATCH) && defined(__linux__)
    static const bool amx = [] {
        const char* cap = std::getenv("DIRECTML_CPU_ISA");
        if (cpu_isa() != Isa::Avx512 || (cap && std::string(cap) == "avx512")) return false;
        if (!__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("amx-tile") ||
            !__builtin_cpu_supports("amx-bf16"))
            return false;
        constexpr long kXtileData = 18;  // XFEATURE_XTILEDATA: the tile registers' state, off until asked for
        return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, kXtileData) == 0;
    }();
    return amx;
#else
    return false;
#endif
}

}  // namespace dml::cpu
