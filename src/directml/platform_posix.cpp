// Linux (native and WSL): dlopen, and the default locations of libdirectml.so and libd3d12.so.
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>

#include "platform.h"

namespace dml::directml::platform {

Library open_library(const std::string& path) {
    // RTLD_GLOBAL: libdirectml.so names libd3d12.so and libdxcore.so as needed libraries; opened first and
    // globally, ours (the WSL system's, or the bridge's) are the ones it binds to.
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    const char* e = h ? nullptr : dlerror();
    return {h, e ? e : ""};
}

void* find_symbol(const Library& library, const char* name) { return dlsym(library.handle, name); }

bool file_exists(const std::string& path) {
    struct stat s;
    return stat(path.c_str(), &s) == 0 && S_ISREG(s.st_mode);
}

std::string setting(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

DefaultPaths default_paths() {
    const std::string wsl = "/usr/lib/wsl/lib/";
    const std::string cache = setting("DMLX_CACHE", setting("HOME", "/root") + "/.cache/dmlx");
    if (file_exists(wsl + "libd3d12.so"))
        return {cache + "/libdirectml.so", wsl + "libd3d12.so", wsl + "libdxcore.so",
                "on WSL, libdirectml.so comes from the torch-directml wheel: experimental/directml_on_linux/fetch.sh "
                "puts it in " + cache};
    return {cache + "/libdirectml.so", cache + "/build/libd3d12.so", cache + "/build/libdxcore.so",
            "on native Linux, experimental/directml_on_linux/fetch.sh fetches libdirectml.so and the bridge "
            "(libd3d12.so, libdxcore.so) is built as docs/directml.md says"};
}

}  // namespace dml::directml::platform
