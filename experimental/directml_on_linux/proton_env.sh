# What DirectML over vkd3d-proton needs on this machine, shared by run_proton.sh (the driver) and
# tests/directml_suite_on_proton.sh (the package's operator suite). Source it from the repository root with OUT (logs)
# and W (a scratch directory) set. It reads $DMLX_PROTON (default .dmlx-proton/, laid out by fetch.sh --proton):
#   lib/libvkd3d-proton-d3d12.so, lib/libvkd3d-proton-d3d12core.so   vkd3d-proton 444561a9 (native build)
#   include/                     its headers (installed include/vkd3d-proton, widl output included)
#   libdirectml.so.xz            from torch-directml 0.2.5.dev240914
#   directx-headers-dev_*.deb    Debian's DirectX-Headers, unpacked to / only where /usr/include/directx is absent
# and .gl/ (Debian's Vulkan loader and glvnd .debs), unpacked to / only where the machine has no Vulkan loader (the GPU
# image), never where one is installed.
ROOT=$(pwd)
P=$(cd "${DMLX_PROTON:-$ROOT/.dmlx-proton}" && pwd) || { echo "no ${DMLX_PROTON:-.dmlx-proton}/"; exit 2; }
mkdir -p "$OUT" "$W"

if ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  for f in "$ROOT"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
if [ -z "${VK_DRIVER_FILES:-}" ]; then
  for j in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
           /etc/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$j" ] && { export VK_DRIVER_FILES=$j; break; }
  done
fi
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
[ -f /usr/include/directx/d3d12.h ] || dpkg -x "$(ls "$P"/directx-headers-dev_*.deb | head -1)" /
[ -s "$W/libdirectml.so" ] || python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.decompress(open(sys.argv[1],'rb').read()))" \
    "$P/libdirectml.so.xz" "$W/libdirectml.so"
{
  echo "ICD: ${VK_DRIVER_FILES:-loader default}"
  nvidia-smi -L 2>/dev/null | head -2
  ldd --version | head -1
  git -C "$ROOT" log -1 --format='commit %H' 2>/dev/null
} | tee "$OUT/env.txt"

# proton_build_bridge DIR: our bridge (libd3d12.so), DXCore stand-in and driver, built against vkd3d-proton's headers
# (a CMake cache from another checkout would be refused, so DIR starts empty).
proton_build_bridge() {
  rm -rf "$1"
  cmake -S "$ROOT/experimental/directml_on_linux" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DVKD3D_INCLUDE_DIR="$P/include" && cmake --build "$1"
}

# proton_runtime_env BRIDGE_DIR: the environment a DirectML process needs: the bridge first on the library path, then
# vkd3d-proton and the NVIDIA driver's libraries; the implementation the bridge loads; no shader cache in the cwd.
proton_runtime_env() {
  export LD_LIBRARY_PATH="$1:$P/lib:/usr/local/nvidia/lib64:/usr/local/nvidia/lib:${LD_LIBRARY_PATH:-}" \
      DMLX_VKD3D_PROTON_D3D12="$P/lib/libvkd3d-proton-d3d12.so" VKD3D_SHADER_CACHE_PATH=0 \
      DIRECTML_LIBRARY_PATH="$W/libdirectml.so" DIRECTML_D3D12_PATH="$1/libd3d12.so" \
      DIRECTML_DXCORE_PATH="$1/libdxcore.so"
}
