#!/usr/bin/env bash
# Builds the extension with AddressSanitizer + UndefinedBehaviorSanitizer (CPU executor only) and runs the test
# suite under it. Any sanitizer report aborts the interpreter, so a report fails the run.
# Usage: .ci/sanitize.sh [build-dir]   (default build-asan; incremental when the directory exists)
# Needs what `pip install ".[test]"` installs (numpy, scipy-openblas32, nanobind, pytest, hypothesis), cmake and g++.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${1:-build-asan}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac  # relative to the checkout, or absolute
IMPORT=/tmp/dml-$(basename "$BUILD")  # a private package directory: the sanitized module beside the sources
JOBS=$(nproc)

start=$SECONDS
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    generator=()
    command -v ninja > /dev/null && generator=(-G Ninja)
    # -O1 -g1: the optimization ASan recommends (readable stacks, fast enough) and line tables for the reports;
    # -O2 -g compiles the template-heavy kernel files several times slower.
    cmake -S . -B "$BUILD" "${generator[@]}" -DDIRECTML_SANITIZE=ON -DDIRECTML_CUDA=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
        -DPython_EXECUTABLE="$(command -v python)" > /dev/null || exit 1
fi
cmake --build "$BUILD" --target _core -j "$JOBS" || exit 1
echo "sanitized build: $((SECONDS - start)) s"

# An in-place build in directml/ would be imported instead of the sanitized module (tests/conftest.py keeps it).
if compgen -G "directml/_core*.so" > /dev/null; then
    echo "directml/ holds a built _core: remove it, it would shadow the sanitized module" >&2
    exit 1
fi
rm -rf "$IMPORT" && mkdir -p "$IMPORT/directml"
ln -s "$ROOT"/directml/*.py "$ROOT/directml/py.typed" "$IMPORT/directml/"  # every module of the package
ln -s "$BUILD"/_core*.so "$IMPORT/directml/"

# The interpreter is not instrumented: the ASan runtime (and the libstdc++ it intercepts) load first. Python's own
# allocations at exit are not ours to judge, so leak detection is off; tests/test_leaks.py covers leaks.
# Left out: test_stubs (no stub is generated here), test_cuda (no CUDA in this build), test_directml_on_linux (it
# builds and runs its own native bridge), and the sample programs run as subprocesses (test_samples.py, the
# *_program tests of test_samples_models.py); the model samples' networks themselves do run. --capture=sys leaves
# file descriptor 2 alone, so that a sanitizer's report (written there just before it aborts) is seen.
start=$SECONDS
LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libstdc++.so)" \
ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
PYTHONPATH="$IMPORT" \
python -m pytest tests -ra -p no:cacheprovider --capture=sys \
    --ignore=tests/test_stubs.py --ignore=tests/test_cuda.py \
    --ignore=tests/test_directml_on_linux.py --ignore=tests/test_samples.py -k "not _program"
rc=$?
echo "tests under the sanitizers: $((SECONDS - start)) s"
if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests: failing" >&2
    exit 1
fi
exit "$rc"
