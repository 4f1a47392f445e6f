#!/usr/bin/env bash
# Compiles, for Windows, every C++ source that must build there: the core, the executor interface, the runtime, the
# platform file and the CPU and DirectML executors (not the binding, which needs a Windows Python, nor CUDA). It uses
# mingw-w64's g++ (Debian: g++-mingw-w64-x86-64-posix) and, for the DirectML executor, DirectX-Headers (Debian:
# directx-headers-dev) as a Windows build sees them: include/directx and include/dxguids only, never the WSL
# adapters (include/wsl), with mingw-w64's own <windows.h>. Object files only: nothing is linked.
# Usage: .ci/windows_compile_check.sh   (MINGW_CXX, DIRECTX_HEADERS_ROOT and JOBS override the defaults)
# Prints each source that failed with its first errors; exits 1 when one did, 2 when the compiler is missing.
set -uo pipefail
cd "$(dirname "$0")/.."

CXX=${MINGW_CXX:-}
if [ -z "$CXX" ]; then
    # The posix thread model: std::thread and std::mutex (the CPU executor's thread pool) need it in GCC 12.
    for candidate in x86_64-w64-mingw32-g++-posix x86_64-w64-mingw32-g++; do
        command -v "$candidate" > /dev/null && { CXX=$candidate; break; }
    done
fi
if [ -z "$CXX" ] || ! command -v "$CXX" > /dev/null; then
    echo "windows compile check: no mingw-w64 g++ (apt-get install g++-mingw-w64-x86-64-posix)" >&2
    exit 2
fi
DX=${DIRECTX_HEADERS_ROOT:-/usr/include}
JOBS=${JOBS:-2}
command -v ccache > /dev/null && LAUNCHER=ccache || LAUNCHER=

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# DirectX-Headers' root is /usr/include on Debian: passing it with -I would put glibc's headers before mingw-w64's.
# A directory of links holds only what a Windows build of DirectX-Headers puts on the include path.
mkdir -p "$work/directx-headers" "$work/log"
have_directx=0
if [ -f "$DX/directx/d3d12.h" ]; then
    ln -s "$DX/directx" "$DX/dxguids" "$work/directx-headers/"
    have_directx=1
fi

# The registration file CMake generates from src/runtime/executors.cpp.in, for the executors compiled here.
declarations="void register_cpu_executor(ExecutorRegistry\&);"
registrations="        register_cpu_executor(r);"
if [ -d src/directml ] && grep -q "register_directml_executor" -r src/directml; then
    declarations+="\nvoid register_directml_executor(ExecutorRegistry\&);"
    registrations+="\n        register_directml_executor(r);"
fi
mkdir -p "$work/generated"
sed -e "s|@DIRECTML_EXECUTOR_DECLARATIONS@|$declarations\n|" -e "s|@DIRECTML_EXECUTOR_REGISTRATIONS@|$registrations\n|" \
    src/runtime/executors.cpp.in > "$work/generated/executors.cpp"

# Every source of those folders, but the POSIX half of a platform split (its Windows half is compiled instead).
sources=$(find src/core src/executor src/runtime src/platform src/cpu src/directml -name '*.cpp' \
              ! -name '*_posix.cpp' 2> /dev/null | sort)
sources+=$'\n'"$work/generated/executors.cpp"
if [ "$have_directx" -eq 0 ] && [ -d src/directml ]; then
    echo "windows compile check: no DirectX-Headers under $DX (apt-get install directx-headers-dev)" >&2
    exit 2
fi

# One source: the include paths CMake gives its target (the runtime sees src/, the DirectML executor
# DirectX-Headers), -c into a throwaway object; its diagnostics go to a log named after it.
compile_one() {
    local source=$1 flags=()
    case $source in
        src/runtime/* | */generated/*) flags+=(-Isrc) ;;
        src/directml/*) flags+=(-I"$work/directx-headers") ;;
        src/cpu/*) flags+=(-DDML_X86_DISPATCH) ;;  # as CMake builds the cpu executor with GCC on x86-64
    esac
    case $source in  # the per-instruction-set files, with the target flags CMake gives them
        *_avx512.cpp) flags+=(-mavx512f -mfma) ;;
        *_avx2.cpp) flags+=(-mavx2 -mfma) ;;
    esac
    local name=${source//\//_}
    if ! $LAUNCHER "$CXX" -std=c++20 -O0 "${flags[@]}" -c "$source" -o "$work/$name.o" > "$work/log/$name" 2>&1; then
        echo "$source" >> "$work/failed"
    fi
}
export -f compile_one
export CXX LAUNCHER work

start=$SECONDS
count=$(printf '%s\n' "$sources" | wc -l)
printf '%s\n' "$sources" | xargs -P "$JOBS" -I{} bash -c 'compile_one "$1"' _ {}
echo "windows compile check: $count sources with $CXX in $((SECONDS - start)) s"

if [ -s "$work/failed" ]; then
    sort "$work/failed" | while read -r source; do
        echo "FAILED: $source"
        grep -m 5 -E "error|Error" "$work/log/${source//\//_}" | sed 's/^/    /'
    done
    echo "windows compile check: $(wc -l < "$work/failed") of $count sources failed"
    exit 1
fi
echo "windows compile check: all $count sources compile for Windows"
