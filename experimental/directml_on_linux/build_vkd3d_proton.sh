#!/usr/bin/env bash
# Builds vkd3d-proton, the Direct3D 12 over Vulkan that DirectML's Linux binary runs on outside WSL (docs/directml.md,
# "Native Linux"; docs/directml-on-linux.md, "What is needed"). No registry ships it, so this fetches its sources at
# the commit the project was verified with (and the submodules that commit pins), builds them natively with meson
# and installs them into PREFIX. Nothing of it is committed.
#
#   build_vkd3d_proton.sh [PREFIX]     default PREFIX: $DMLX_CACHE/vkd3d-proton (DMLX_CACHE: ~/.cache/dmlx)
#
# Then: PREFIX/lib/libvkd3d-proton-d3d12.so (DMLX_VKD3D_PROTON_D3D12) and PREFIX/include/vkd3d-proton (the bridge's
# -DVKD3D_INCLUDE_DIR). Needs git, meson, ninja, a C/C++ compiler, glslangValidator (Debian: glslang-tools) and widl
# (Debian: wine64-tools, which installs it as widl-stable). DMLX_GITHUB replaces https://github.com (a mirror).
set -euo pipefail

CACHE=${DMLX_CACHE:-$HOME/.cache/dmlx}
PREFIX=${1:-$CACHE/vkd3d-proton}
SRC=$CACHE/src/vkd3d-proton
GITHUB=${DMLX_GITHUB:-https://github.com}
COMMIT=444561a920b253c9e03f702c67bdd7550ad14900  # 2026-05-07; pins dxil-spirv 31ecc706

tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
if ! command -v widl > /dev/null; then
    command -v widl-stable > /dev/null || { echo "needs widl: apt-get install wine64-tools" >&2; exit 1; }
    ln -s "$(command -v widl-stable)" "$tools/widl"
    PATH=$tools:$PATH
fi
command -v glslangValidator > /dev/null || { echo "needs glslangValidator: apt-get install glslang-tools" >&2; exit 1; }

# Submodules by the URLs their .gitmodules name, through GITHUB; only those the D3D12 libraries build from
# (dxil-spirv's SPIRV-Tools and SPIRV-Cross serve its own tools).
git_() { git -c url."$GITHUB/".insteadOf=https://github.com/ -c advice.detachedHead=false "$@"; }
[ -d "$SRC/.git" ] || git_ clone --no-checkout "$GITHUB/HansKristian-Work/vkd3d-proton" "$SRC"
git_ -C "$SRC" checkout -q "$COMMIT"
git_ -C "$SRC" submodule update --init --depth 1 khronos/Vulkan-Headers khronos/SPIRV-Headers subprojects/dxil-spirv
git_ -C "$SRC/subprojects/dxil-spirv" submodule update --init --depth 1 third_party/spirv-headers subprojects/dxbc-spirv
git_ -C "$SRC/subprojects/dxil-spirv/subprojects/dxbc-spirv" submodule update --init --depth 1

# Its defaults (release, no tests, no extras), as docs/directml-on-linux.md records the build.
if [ -f "$SRC/build/build.ninja" ]; then
    meson configure "$SRC/build" --prefix "$PREFIX" > /dev/null
else
    meson setup "$SRC/build" "$SRC" --buildtype release -Denable_tests=false -Denable_extras=false \
        --prefix "$PREFIX" --libdir lib
fi
ninja -C "$SRC/build" install
echo "vkd3d-proton $COMMIT: $PREFIX/lib/libvkd3d-proton-d3d12.so, headers in $PREFIX/include/vkd3d-proton"
