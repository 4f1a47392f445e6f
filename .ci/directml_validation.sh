#!/usr/bin/env bash
# The directml executor in CI (issue 16, docs/directml.md). Executing DirectML on Linux needs vkd3d-proton, which no
# package registry ships (it is built from source by hand: docs/directml-on-linux.md), so CI cannot execute it; the
# executing runs are lavapipe and the H200 (docs/directml.md, "What was verified"). What CI does: DirectML's own
# Linux binary (libdirectml.so, from the torch-directml wheel on PyPI) over our bridge and Debian's vkd3d checks
# every graph the operator tests compile for directml: each lowered node through DirectML's CreateOperator, then
# CompileGraph, which fails only when asked to build shaders (tests/directml_validation_plugin.py).
# Exit 2: the pieces could not be installed here (the caller says so and goes on).
set -uo pipefail
cd "$(dirname "$0")/.."

# vkd3d makes its Direct3D 12 device over Vulkan: Mesa's lavapipe (a CPU Vulkan driver) serves where no GPU is.
lavapipe() { ls /usr/share/vulkan/icd.d/lvp_icd*.json > /dev/null 2>&1; }
if [ ! -f /usr/include/vkd3d/vkd3d.h ] || [ ! -f /usr/include/directx/d3d12.h ] || ! lavapipe; then
    .ci/apt_install.sh libvkd3d-dev libvkd3d1 libvkd3d-utils1 directx-headers-dev mesa-vulkan-drivers
    [ -f /usr/include/vkd3d/vkd3d.h ] && [ -f /usr/include/directx/d3d12.h ] && lavapipe \
        || { echo "no vkd3d / DirectX-Headers / lavapipe" >&2; exit 2; }
fi
cache=${DMLX_CACHE:-$HOME/.cache/dmlx}
timeout 600 experimental/directml_on_linux/fetch.sh || { echo "could not fetch libdirectml.so" >&2; exit 2; }

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
if ! { cmake -S experimental/directml_on_linux -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       && cmake --build "$build"; } > "$build.log" 2>&1; then
    tail -30 "$build.log" >&2
    echo "the bridge did not build" >&2
    exit 1
fi

export DIRECTML_LIBRARY_PATH="$cache/libdirectml.so" DIRECTML_D3D12_PATH="$build/libd3d12.so" \
    DIRECTML_DXCORE_PATH="$build/libdxcore.so" VKD3D_DEBUG=none
# The directml device must open here, or every test would skip and nothing be validated: the installed package
# needs the directml executor (built where DirectX-Headers are found; .ci/run installs them before the README's
# install) and vkd3d a Vulkan driver. From / so that the installed package is imported, not the checkout's folder.
if ! err=$(cd / && DIRECTML_VALIDATE_ONLY=1 python -c 'import directml; directml.Device("directml")' 2>&1); then
    echo "directml validation: no directml device to validate with: $(echo "$err" | tail -1)" >&2
    exit 1
fi
PYTHONPATH=tests python -m pytest tests -k directml -p directml_validation_plugin -q -p no:cacheprovider
rc=$?
[ "$rc" -eq 5 ] && { echo "pytest collected no tests: failing" >&2; rc=1; }
exit "$rc"
