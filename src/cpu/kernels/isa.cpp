#include "isa.h"

#include <cstdlib>
#include <string>

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

}  // namespace dml::cpu
