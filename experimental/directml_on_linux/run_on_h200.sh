#!/usr/bin/env bash
# DirectML on native Linux, on an NVIDIA GPU machine (issue 6).
# Run from the repo root on the device machine, with carry=[".gl", ".dmlx"] laid out by
#   experimental/directml_on_linux/fetch.sh --device
# .gl/   Debian bookworm .debs dpkg -x'd to /: Vulkan loader + glvnd (the NVIDIA ICD needs it),
#        vkd3d 1.2 (system run), directx-headers-dev (to build)
# .dmlx/ libdirectml.so.xz (torch-directml 0.2.5.dev240914) and Debian unstable's vkd3d 2.1
#        + glibc 2.43 .debs (private prefix, run through its own ld-linux)
# Builds the bridge + driver from source, then runs: A) vkd3d 1.2, B) vkd3d 2.1,
# C) vkd3d 2.1 with the DXCore stand-in reporting NVIDIA's vendor id. Logs land in $OUT.
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/dmlx-out}
mkdir -p "$OUT"
W=/tmp/dmlx-h200
rm -rf "$W"; mkdir -p "$W/new"

for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
for f in .dmlx/vkd3d-new/*.deb; do dpkg -x "$f" "$W/new"; done
python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.decompress(open(sys.argv[1],'rb').read()))" \
    .dmlx/libdirectml.so.xz "$W/libdirectml.so"

if [ -z "${VK_DRIVER_FILES:-}" ]; then
  for j in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
           /etc/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$j" ] && { export VK_DRIVER_FILES=$j; break; }
  done
fi
[ -n "${VK_DRIVER_FILES:-}" ] && export VK_ICD_FILENAMES=$VK_DRIVER_FILES
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
{
  echo "ICD: ${VK_DRIVER_FILES:-none found}"; cat "${VK_DRIVER_FILES:-/dev/null}" 2>/dev/null
  nvidia-smi -L 2>&1 | head -4
  ldd --version | head -1
} | tee "$OUT/env.txt"

cmake -S experimental/directml_on_linux -B "$W/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DVKD3D_INCLUDE_DIR="$W/new/usr/include/vkd3d" -DDIRECTX_HEADERS_ROOT=/usr/include > "$OUT/build.log" 2>&1 \
  && cmake --build "$W/build" >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build ok"

NV=/usr/local/nvidia/lib64:/usr/local/nvidia/lib
NEWLIB=$W/new/usr/lib/x86_64-linux-gnu
DRV=("$W/build/dml_linux_driver" --lib "$W/libdirectml.so" --bench 1024 --iters 20)
summary() { grep -E "^(STEP .*FAIL|RESULT|BENCH|DONE|INFO device|INFO DML)|CreateComputePipelineState|E[0-9]{4}:|QueryInterface" "$1" | sort | uniq -c | head -40; }

echo "== A: vkd3d 1.2 (Debian bookworm)"
LD_LIBRARY_PATH=$W/build:$NV VKD3D_DEBUG=warn VKD3D_SHADER_DEBUG=warn \
  timeout 150 "${DRV[@]}" --dump "$OUT" > "$OUT/run_a_vkd3d12.log" 2>&1; echo "rc=$?"
summary "$OUT/run_a_vkd3d12.log"

run_new() {  # run_new LOG [env...]
  local log=$1; shift
  env "$@" VKD3D_DEBUG=warn VKD3D_SHADER_DEBUG=warn DMLX_VKD3D_UTILS=$NEWLIB/libvkd3d-utils.so.1 \
    timeout 150 "$NEWLIB/ld-linux-x86-64.so.2" --library-path "$W/build:$NEWLIB:$NV:/usr/lib/x86_64-linux-gnu" \
    "${DRV[@]}" > "$log" 2>&1; echo "rc=$?"
  summary "$log"
}
echo "== B: vkd3d 2.1 (Debian unstable, private glibc 2.43)"
mkdir -p "$OUT/shaders_b"
run_new "$OUT/run_b_vkd3d21.log" DMLX_BRIDGE_DUMP_SHADERS="$OUT/shaders_b"
echo "== C: vkd3d 2.1, DXCore adapter reported as NVIDIA (vendor 0x10de)"
run_new "$OUT/run_c_vkd3d21_nv.log" DMLX_DXCORE_VENDOR_ID=0x10de DMLX_DXCORE_MEMORY_MB=143771

echo "== numpy 1024x1024 fp32 GEMM (peer)"
python3 - <<'EOF' 2>&1 | tee "$OUT/numpy.txt"
import time, numpy as np
a = np.random.rand(1024, 1024).astype(np.float32); b = np.random.rand(1024, 1024).astype(np.float32)
a @ b
t = time.perf_counter(); n = 20
for _ in range(n): a @ b
dt = (time.perf_counter() - t) / n
print(f"numpy matmul 1024: {dt*1e3:.3f} ms, {2*1024**3/dt/1e9:.1f} GFLOP/s (numpy {np.__version__})")
EOF
du -sh "$OUT"/shaders_b 2>/dev/null
