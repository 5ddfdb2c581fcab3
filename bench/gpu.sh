#!/usr/bin/env bash
# The short bench on a GPU OpenCL device, for a machine where nothing can
# be installed: run `make gpu-bundle` where clcone builds (it puts the
# bench, the CLI and every shared library they load, the OpenCL loader
# among them, under build/gpu-bundle), carry build/gpu-bundle there, and
# run this script from the repository root. It finds the GPU's OpenCL
# driver (an ICD file under /etc/OpenCL/vendors, else NVIDIA's
# libnvidia-opencl.so), runs the quick bench on the first GPU device
# (sections 1-4; MuJoCo and the pyramid are CPU matters) under a time
# limit, and writes the report to OUT (default bench/results-gpu). No
# gnuplot is needed: the report keeps the data where a plot is missing.
#
#   bench/gpu.sh [OUT]        GPU_BENCH_SECONDS (default 420) caps the run
#   GPU_BENCH_DEVICE=SPEC     another device than the first GPU
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results-gpu}
bundle=build/gpu-bundle
limit=${GPU_BENCH_SECONDS:-420}
if [ ! -x "$bundle/bench" ] || [ ! -x "$bundle/clcone" ]; then
    echo "gpu.sh: $bundle/bench is missing: run 'make gpu-bundle' on the build machine and carry $bundle" >&2
    exit 2
fi
export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The loader reads /etc/OpenCL/vendors; where no file there names a
# driver, point it at NVIDIA's library if the machine has one.
if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1 && [ -z "${OCL_ICD_VENDORS:-}" ]; then
    lib=$( (ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so/ {print $NF; exit}') || true)
    if [ -z "$lib" ]; then
        lib=$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so* /usr/lib64/libnvidia-opencl.so* \
                 /usr/local/nvidia/lib64/libnvidia-opencl.so* 2>/dev/null | head -n 1 || true)
    fi
    if [ -n "$lib" ]; then
        mkdir -p build/gpu-vendors
        echo "$lib" > build/gpu-vendors/nvidia.icd
        export OCL_ICD_VENDORS="$PWD/build/gpu-vendors"
        echo "gpu.sh: OpenCL driver $lib (no /etc/OpenCL/vendors entry)"
    fi
fi

"$bundle/clcone" devices || true
device=${GPU_BENCH_DEVICE:-}
if [ -z "$device" ]; then
    device=$("$bundle/clcone" devices 2>/dev/null | awk '$2 == "GPU" {print $1; exit}')
    if [ -z "$device" ]; then
        echo "gpu.sh: no GPU OpenCL device (set GPU_BENCH_DEVICE to bench another)" >&2
        exit 1
    fi
fi
echo "gpu.sh: device $device, at most $limit s"
mkdir -p "$out"
status=0
timeout "$limit" "$bundle/bench" --quick --sections 1234 --device "$device" --out "$out" || status=$?
if [ "$status" -ne 0 ]; then
    echo "gpu.sh: the bench stopped with status $status (124: the $limit s limit)" >&2
    exit "$status"
fi
echo "gpu.sh: report in $out/report.md"
