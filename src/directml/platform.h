// What the DirectML executor asks of the operating system: loading a shared library and finding its symbols, where
// DirectML and Direct3D 12 live by default, and the user's settings. One implementation per platform
// (platform_posix.cpp, platform_windows.cpp); nothing else in the executor calls the operating system.
#pragma once
#include <string>

namespace dml::directml::platform {

// An opened shared library; closing is left to process exit (DirectML keeps threads and objects alive).
struct Library {
    void* handle = nullptr;
    std::string error;  // why it could not be opened, when handle is null
};

Library open_library(const std::string& path);
void* find_symbol(const Library& library, const char* name);
bool file_exists(const std::string& path);
// The value of environment variable `name`, or `fallback` when it is unset or empty.
std::string setting(const char* name, const std::string& fallback);

// Default locations, each overridden by an environment variable (docs/directml.md).
struct DefaultPaths {
    std::string directml;  // DIRECTML_LIBRARY_PATH
    std::string d3d12;     // DIRECTML_D3D12_PATH
    std::string dxcore;    // DIRECTML_DXCORE_PATH; empty where DirectML finds DXCore itself
    std::string how_to_get;  // one sentence for the error message when something is missing
};
DefaultPaths default_paths();

}  // namespace dml::directml::platform
