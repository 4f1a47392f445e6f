// Finding and opening the NVIDIA libraries the cuda executor loads at run time (dlopen), so that building needs
// none of them and the package runs where they are missing.
#pragma once
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace dml::cuda {

// The folder holding this shared object (directml/ when installed): pip's nvidia-* packages lie beside it.
inline std::filesystem::path own_folder() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&own_folder), &info) && info.dli_fname)
        return std::filesystem::path(info.dli_fname).parent_path();
    return {};
}

// Where $`env` says library `name` is (the library or its folder), when it is set.
inline std::optional<std::string> library_from_env(const char* env, const std::string& name) {
    const char* value = std::getenv(env);
    if (!value || !*value) return std::nullopt;
    const std::filesystem::path p(value);
    return std::filesystem::is_directory(p) ? (p / name).string() : p.string();
}

// Where library `name` may be, best first: by name (already loaded, e.g. by PyTorch, or on the loader's path), in
// `pip_folders` (relative to site-packages, e.g. "nvidia/cudnn/lib"), then, with `toolkit`, in the CUDA toolkit.
inline std::vector<std::string> library_candidates(const std::string& name,
                                                   std::initializer_list<const char*> pip_folders,
                                                   bool toolkit = true) {
    std::vector<std::string> c = {name};
    if (const std::filesystem::path here = own_folder(); !here.empty())
        for (const char* folder : pip_folders) c.push_back((here.parent_path() / folder / name).string());
    if (!toolkit) return c;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* root = std::getenv(var); root && *root)
            c.push_back((std::filesystem::path(root) / "lib64" / name).string());
    c.push_back("/usr/local/cuda/lib64/" + name);
    return c;
}

struct OpenedLibrary {
    void* handle = nullptr;  // null when no candidate opened
    std::string path;        // the candidate that opened
    std::string tried;       // the candidates before it, a line each with dlopen's reason
};

// The first of `candidates` that dlopen opens.
inline OpenedLibrary open_first(const std::vector<std::string>& candidates) {
    OpenedLibrary l;
    for (const std::string& c : candidates) {
        if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            l.handle = h;
            l.path = c;
            return l;
        }
        const char* err = dlerror();
        l.tried += "\n  " + c + ": " + (err ? err : "not found");
    }
    return l;
}

}  // namespace dml::cuda
