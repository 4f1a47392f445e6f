#!/usr/bin/env bash
# NVIDIA compute-sanitizer's four tools over the cuda half of the test suite (docs/reliability.md), on a machine
# with an NVIDIA GPU and the package installed (CI has no GPU: this runs by hand). Each tool runs the tests in
# SHARDS processes at once, every tool at the same time; a shard's log is LOGS/TOOL.N.log.
#
#   tests/cuda_sanitizers.sh [LOGS]        (default /tmp/cuda-sanitizers)
#   TOOLS="memcheck racecheck initcheck synccheck" SHARDS=3 K="cuda and not test_leaks" TIMEOUT=480
#   CS_BIN=env: the same shards without the sanitizer (checks the plumbing on any machine in seconds)
#
# Only memcheck runs with cuDNN; the other three hide it (DIRECTML_CUDNN_PATH=/nonexistent), so that convolution and
# attention run on our own kernels there: on the H200 cuDNN's generated SDPA kernels (wgmma, TMA) gave racecheck
# hazards inside them, initcheck "uninitialized" reads of every output they had written with TMA stores, and
# synccheck an overflow of its tracked barriers and then a failed launch. initcheck runs with DIRECTML_CUBLASLT_FILL=1
# (cublaslt.h): cuBLASLt's outputs and workspace, which it writes with stores the tool does not track, NaN-filled
# first. API errors are not reported: the out-of-memory tests make cudaMalloc fail on purpose. test_leaks.py is left
# out by default: a sanitizer's own memory grows with every launch (its flatness tests fail under any of the four)
# and its 1,000-cycle loops ran past 8 minutes.
# Every report is printed (--print-limit). Exit status: 0 when every shard's tests passed with no report.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-/tmp/cuda-sanitizers}
tools=${TOOLS:-memcheck racecheck initcheck synccheck}
shards=${SHARDS:-3}
cs=${CS_BIN:-compute-sanitizer}
mkdir -p "$logs"
cd /tmp || exit 1  # import the installed package, not the checkout's directml/ folder (it has no built module)

# Test ids, one per line, read back by pytest's @file argument: ids hold spaces ("[cuda-int16-x + 2]"). The shards
# take PYTEST_ADDOPTS (-v names each test before its reports); the listing does not.
PYTEST_ADDOPTS= python3 -m pytest "$root/tests" --collect-only -q -k "${K:-cuda and not test_leaks}" | grep '::' | sed "s|^|$root/|" > "$logs/ids.txt"
[ -s "$logs/ids.txt" ] || { echo "no tests collected" >&2; exit 1; }
rm -f "$logs"/shard.* "$logs/summary.txt"
split -n "r/$shards" -d "$logs/ids.txt" "$logs/shard."
echo "$(wc -l < "$logs/ids.txt") tests, $shards shards a tool: $tools"

declare -A pids
for tool in $tools; do
    env=()
    [ "$tool" != memcheck ] && env=(DIRECTML_CUDNN_PATH=/nonexistent)
    [ "$tool" = initcheck ] && env+=(DIRECTML_CUBLASLT_FILL=1)
    sanitizer=()
    [ "$cs" != env ] && sanitizer=("$cs" --tool "$tool" --report-api-errors no --print-limit 1000000 --error-exitcode 9)
    for shard in "$logs"/shard.*; do
        log="$logs/$tool.${shard##*.}.log"
        env "${env[@]}" timeout "${TIMEOUT:-480}" "${sanitizer[@]}" \
            python3 -m pytest -q -p no:cacheprovider "@$shard" > "$log" 2>&1 &
        pids[$log]=$!
    done
done

status=0
for log in "${!pids[@]}"; do
    wait "${pids[$log]}"
    rc=$?
    [ "$rc" -ne 0 ] && status=1
    tests=$(grep -E " in [0-9.]+s" "$log" | tail -1)  # pytest's last line
    reports=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$log" | tail -1)
    echo "$(basename "$log"): exit $rc; $tests; $reports" >> "$logs/summary.txt"
done
sort "$logs/summary.txt"
exit $status
