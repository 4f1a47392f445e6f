// Windows: LoadLibrary, and DirectML.dll / d3d12.dll found the usual way (beside the module, then the system).
#include <windows.h>

#include <cstdlib>

#include "platform.h"

namespace dml::directml::platform {

Library open_library(const std::string& path) {
    HMODULE h = LoadLibraryA(path.c_str());
    return {reinterpret_cast<void*>(h), h ? "" : "LoadLibrary failed with error " + std::to_string(GetLastError())};
}

void* find_symbol(const Library& library, const char* name) {
    return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library.handle), name));
}

bool file_exists(const std::string& path) {
    DWORD a = GetFileAttributesA(path.c_str());
    return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

std::string setting(const char* name, const std::string& fallback) {
    char value[4096];
    DWORD n = GetEnvironmentVariableA(name, value, sizeof value);
    return n > 0 && n < sizeof value ? std::string(value, n) : fallback;
}

DefaultPaths default_paths() {
    return {"DirectML.dll", "d3d12.dll", "",
            "DirectML.dll comes with the Microsoft.AI.DirectML NuGet package (or Windows' own copy in System32)"};
}

}  // namespace dml::directml::platform
