#!/usr/bin/env bash
# DirectML on native Linux through vkd3d-proton (issue 16): builds our bridge + driver against
# vkd3d-proton's headers and runs GEMM / ADD / CONVOLUTION, on whatever Vulkan driver the
# loader finds (lavapipe here, NVIDIA on the GPU machine). Logs and result dumps land in $OUT.
#
# Needs .dmlx-proton/ and, on the GPU machine, .gl/: see proton_env.sh. On the GPU machine, from the repo root:
#   run(command="OUT=$OUT bash experimental/directml_on_linux/run_proton.sh", carry=[".gl", ".dmlx-proton"])
set -u
OUT=${OUT:-/tmp/dmlx-proton-out}
W=${DMLX_WORK:-/tmp/dmlx-proton}
source experimental/directml_on_linux/proton_env.sh

proton_build_bridge "$W/build" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build ok"
proton_runtime_env "$W/build"

run() {  # run NAME [env...]: one driver run, its log and result dumps under $OUT/NAME
  local name=$1; shift
  mkdir -p "$OUT/$name"
  env "$@" VKD3D_DEBUG=${VKD3D_DEBUG:-warn} VKD3D_SHADER_DEBUG=${VKD3D_SHADER_DEBUG:-warn} DMLX_BRIDGE_DUMP_SHADERS="$OUT/$name" \
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
