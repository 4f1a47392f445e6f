#!/usr/bin/env bash
# The operator suite's directml half through DirectML on native Linux: this package (built here) -> our bridge
# (experimental/directml_on_linux) -> vkd3d-proton -> the machine's Vulkan driver (NVIDIA on the GPU machine,
# lavapipe elsewhere). Needs what experimental/directml_on_linux/run_proton.sh needs: .dmlx-proton/ (vkd3d-proton's
# libraries and headers, libdirectml.so.xz, directx-headers-dev) and, where no Vulkan loader is installed, .gl/.
# On the GPU machine, from the repository root:
#   run(command="OUT=$OUT bash tests/directml_suite_on_proton.sh", carry=[".gl", ".dmlx-proton"])
# $OUT gets env.txt, build.log and suite.log (pytest's report, its failures listed). One device command may run 10
# minutes: TESTS (default: all of tests/) picks files, e.g. TESTS="tests/test_gemm.py tests/test_convolution.py",
# SUITE_TIMEOUT (default 420 s) bounds pytest, PYTEST_ARGS adds options.
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/dmlx-suite-out}
P=$(cd "${DMLX_PROTON:-$ROOT/.dmlx-proton}" && pwd) || { echo "no ${DMLX_PROTON:-.dmlx-proton}/"; exit 2; }
W=${DMLX_WORK:-/tmp/dmlx-suite}
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
# DirectX-Headers where CMake looks for them (the package's directml executor is built only where they are).
[ -f /usr/include/directx/d3d12.h ] || dpkg -x "$(ls "$P"/directx-headers-dev_*.deb | head -1)" /
[ -s "$W/libdirectml.so" ] || python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.decompress(open(sys.argv[1],'rb').read()))" \
    "$P/libdirectml.so.xz" "$W/libdirectml.so"
{
  echo "ICD: ${VK_DRIVER_FILES:-loader default}"
  nvidia-smi -L 2>/dev/null | head -2
  git -C "$ROOT" log -1 --format='commit %H' 2>/dev/null
} | tee "$OUT/env.txt"

rm -rf "$W/bridge"
{ cmake -S experimental/directml_on_linux -B "$W/bridge" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DVKD3D_INCLUDE_DIR="$P/include" && cmake --build "$W/bridge" \
  && CMAKE_ARGS="-DDIRECTML_CUDA=OFF" pip install --no-build-isolation . ; } > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build ok"

NV=/usr/local/nvidia/lib64:/usr/local/nvidia/lib
export LD_LIBRARY_PATH="$W/bridge:$P/lib:$NV:${LD_LIBRARY_PATH:-}" DMLX_VKD3D_PROTON_D3D12="$P/lib/libvkd3d-proton-d3d12.so" \
    DIRECTML_LIBRARY_PATH="$W/libdirectml.so" DIRECTML_D3D12_PATH="$W/bridge/libd3d12.so" \
    DIRECTML_DXCORE_PATH="$W/bridge/libdxcore.so" VKD3D_SHADER_CACHE_PATH=0 VKD3D_DEBUG=err DMLX_BRIDGE_TRACE=0 \
    XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
(cd /tmp && python3 -c "import directml as dml; print(dml.Device('directml'))") 2>&1 | tee -a "$OUT/env.txt"
# From outside the checkout, so that the installed package is the one tested.
tests=()
for t in ${TESTS:-tests}; do tests+=("$ROOT/$t"); done
cd /tmp && timeout "${SUITE_TIMEOUT:-420}" python3 -m pytest "${tests[@]}" -k directml -v --tb=line \
    -p no:cacheprovider ${PYTEST_ARGS:-} > "$OUT/suite.log" 2>&1
echo "suite rc=$?"
echo "passed $(grep -c " PASSED" "$OUT/suite.log"), failed $(grep -c " FAILED" "$OUT/suite.log"), skipped $(grep -c " SKIPPED" "$OUT/suite.log")"
tail -3 "$OUT/suite.log"
