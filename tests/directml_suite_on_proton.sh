#!/usr/bin/env bash
# The operator suite's directml half through DirectML on native Linux: this package (built here) -> our bridge
# (experimental/directml_on_linux) -> vkd3d-proton -> the machine's Vulkan driver (NVIDIA on the GPU machine,
# lavapipe elsewhere). Needs what experimental/directml_on_linux/proton_env.sh says: .dmlx-proton/ and, where no
# Vulkan loader is installed, .gl/.
# On the GPU machine, from the repository root:
#   run(command="OUT=$OUT bash tests/directml_suite_on_proton.sh", carry=[".gl", ".dmlx-proton"])
# $OUT gets env.txt, build.log and suite.log (pytest's report, its failures listed). One device command may run 10
# minutes: TESTS (default: all of tests/) picks files, e.g. TESTS="tests/test_gemm.py tests/test_convolution.py",
# SUITE_TIMEOUT (default 420 s) bounds pytest, PYTEST_ARGS adds options; TESTS=none runs no tests.
# BENCH=1 also builds the cuda executor and runs bench/bench_directml.py (BENCH_ARGS, default --reps 10) into
# $OUT/bench.txt, e.g. run(command="OUT=$OUT TESTS=none BENCH=1 bash tests/directml_suite_on_proton.sh", ...).
set -u
OUT=${OUT:-/tmp/dmlx-suite-out}
W=${DMLX_WORK:-/tmp/dmlx-suite}
source experimental/directml_on_linux/proton_env.sh

CUDA=$([ -n "${BENCH:-}" ] && echo ON || echo OFF)
{ proton_build_bridge "$W/bridge" && CMAKE_ARGS="-DDIRECTML_CUDA=$CUDA" pip install --no-build-isolation . ; } \
    > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build ok"

proton_runtime_env "$W/bridge"
export VKD3D_DEBUG=err DMLX_BRIDGE_TRACE=0
(cd /tmp && python3 -c "import directml as dml; print(dml.Device('directml'))") 2>&1 | tee -a "$OUT/env.txt"
if [ -n "${BENCH:-}" ]; then
  (cd bench && timeout "${BENCH_TIMEOUT:-420}" python3 bench_directml.py ${BENCH_ARGS:---reps 10}) 2>&1 | tee "$OUT/bench.txt"
fi
[ "${TESTS:-}" = none ] && exit 0
# From outside the checkout, so that the installed package is the one tested.
tests=()
for t in ${TESTS:-tests}; do tests+=("$ROOT/$t"); done
cd /tmp && timeout "${SUITE_TIMEOUT:-420}" python3 -m pytest "${tests[@]}" -k directml -v --tb=line \
    -p no:cacheprovider ${PYTEST_ARGS:-} > "$OUT/suite.log" 2>&1
echo "suite rc=$?"
echo "passed $(grep -c " PASSED" "$OUT/suite.log"), failed $(grep -c " FAILED" "$OUT/suite.log"), skipped $(grep -c " SKIPPED" "$OUT/suite.log")"
tail -3 "$OUT/suite.log"
