#!/usr/bin/env bash
# DirectML on native Linux through vkd3d-proton (issue 16): builds our bridge + driver against
# vkd3d-proton's headers and runs GEMM / ADD / CONVOLUTION, on whatever Vulkan driver the
# loader finds (lavapipe here, NVIDIA on the GPU machine). Logs and result dumps land in $OUT.
#
# $DMLX_PROTON (default .dmlx-proton in the repo root, git-ignored) holds what is not in git:
#   lib/libvkd3d-proton-d3d12.so, lib/libvkd3d-proton-d3d12core.so   vkd3d-proton 444561a9 (native build)
#   include/                     its headers (installed include/vkd3d-proton, widl output included)
#   libdirectml.so.xz            from torch-directml 0.2.5.dev240914    } both laid out by
#   directx-headers-dev_*.deb    Debian's DirectX-Headers, used only   } fetch.sh --proton
#                                where /usr/include/directx is absent
# On the GPU machine: carry=[".gl", ".dmlx-proton"], run from the repo root:
#   OUT=$OUT bash experimental/directml_on_linux/run_proton.sh
# .gl/ holds Debian's Vulkan loader and glvnd .debs; they are unpacked to / only where the
# machine has no Vulkan loader (the GPU image), never where one is installed.
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/dmlx-proton-out}
P=$(cd "${DMLX_PROTON:-$ROOT/.dmlx-proton}" && pwd) || { echo "no ${DMLX_PROTON:-.dmlx-proton}/"; exit 2; }
W=${DMLX_WORK:-/tmp/dmlx-proton}
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
DX=/usr/include
if [ ! -f /usr/include/directx/d3d12.h ]; then
  dpkg -x "$(ls "$P"/directx-headers-dev_*.deb | head -1)" "$W/dx" && DX=$W/dx/usr/include
fi
[ -s "$W/libdirectml.so" ] || python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.decompress(open(sys.argv[1],'rb').read()))" \
    "$P/libdirectml.so.xz" "$W/libdirectml.so"
{
  echo "ICD: ${VK_DRIVER_FILES:-loader default}"
  nvidia-smi -L 2>/dev/null | head -2
  ldd --version | head -1
} | tee "$OUT/env.txt"

rm -rf "$W/build"  # a CMake cache from another checkout would be refused
cmake -S experimental/directml_on_linux -B "$W/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DVKD3D_INCLUDE_DIR="$P/include" -DDIRECTX_HEADERS_ROOT="$DX" > "$OUT/build.log" 2>&1 \
  && cmake --build "$W/build" >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build ok"

NV=/usr/local/nvidia/lib64:/usr/local/nvidia/lib
run() {  # run NAME [env...]: one driver run, its log and result dumps under $OUT/NAME
  local name=$1; shift
  mkdir -p "$OUT/$name"
  env "$@" LD_LIBRARY_PATH="$W/build:$P/lib:$NV:${LD_LIBRARY_PATH:-}" DMLX_VKD3D_PROTON_D3D12="$P/lib/libvkd3d-proton-d3d12.so" \
      VKD3D_SHADER_CACHE_PATH=0 VKD3D_DEBUG=${VKD3D_DEBUG:-warn} VKD3D_SHADER_DEBUG=${VKD3D_SHADER_DEBUG:-warn} DMLX_BRIDGE_DUMP_SHADERS="$OUT/$name" \
      timeout 300 "$W/build/dml_linux_driver" --lib "$W/libdirectml.so" --dump "$OUT/$name" ${DRIVER_ARGS:---bench 1024 --iters 20} \
      > "$OUT/$name.log" 2>&1
  echo "== $name: rc=$?"
  grep -E "^(STEP .*FAIL|RESULT|BENCH|DONE|INFO device|INFO DML)|CreateComputePipelineState|err:" "$OUT/$name.log" | sort | uniq -c | head -40
}
run proton
[ -n "${VK_DRIVER_FILES:-}" ] && grep -q nvidia "$VK_DRIVER_FILES" && run proton_nv_adapter DMLX_DXCORE_VENDOR_ID=0x10de

python3 - <<'EOF' 2>&1 | tee "$OUT/numpy.txt"
import time, numpy as np
a = np.random.rand(1024, 1024).astype(np.float32); b = np.random.rand(1024, 1024).astype(np.float32)
a @ b
t = time.perf_counter(); n = 20
for _ in range(n): a @ b
dt = (time.perf_counter() - t) / n
print(f"numpy matmul 1024: {dt*1e3:.3f} ms, {2*1024**3/dt/1e9:.1f} GFLOP/s (numpy {np.__version__})")
EOF
