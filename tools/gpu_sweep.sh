#!/usr/bin/env bash
# The course's GPU checks, for a machine with a CUDA GPU, run from the repository root:
#
#   tools/gpu_sweep.sh tests       the unit tests with COURSE_DEVICE=cuda (the Triton kernel's tests included)
#                                  (-v: each outcome as it happens, so a run stopped by PART_TIMEOUT still names its
#                                  failures; on an H200 with 12 workers they took over 290 s: give them 400 or more)
#   tools/gpu_sweep.sh notebooks   every notebook under nbval's lax mode on CUDA (their asserts, not their digits)
#   tools/gpu_sweep.sh bench       python -m course_lib.kernels.bench (the Triton kernel against SDPA, bf16, D = 64
#                                  and D = 128, N = 1k ... 16k, causal and not, each SDPA backend timed too) and
#                                  python -m course_lib.bench --device cuda
#   tools/gpu_sweep.sh ablation    python -m course_lib.kernels.ablation: what each kernel technique buys (TMA, warp
#                                  specialization, pipelining, causal tile order), D = 64 and 128, causal and not
#   tools/gpu_sweep.sh cpu         `make test` on this machine's CPU (its CPU is one CI never has): the unit tests and
#                                  strict nbval over every notebook and every core path, COURSE_DEVICE=cpu
#   tools/gpu_sweep.sh all         tests, notebooks and bench, in this order (ablation and cpu only when asked for)
#
# Each part writes its log (and the benchmarks their CSV files) to $OUT, or build/gpu when OUT is unset, next to
# versions.txt: the GPU, the driver, torch, triton and Python, to quote with the results in the README.
# It uses the Python on PATH, which must have torch; course_lib is found through PYTHONPATH (no install). When
# nbval is missing and a folder .whl/ holds the wheels of ../shared/tools/gpu-wheels.sh, they are installed from it
# into .site/ first (no package index needed). COURSE_DEVICE may name another device (cuda:1; cpu for a dry run).
set -uo pipefail
cd "$(dirname "$0")/.."

part=${1:-all}
out=${OUT:-build/gpu}
device=${COURSE_DEVICE:-cuda}
python=${PYTHON:-python3}
mkdir -p "$out"
export PYTHONPATH="$PWD/.site:$PWD${PYTHONPATH:+:$PYTHONPATH}"

versions() {
    {
        date -u +"%Y-%m-%d %H:%M UTC"
        command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
        "$python" - <<'EOF'
import platform
import torch
print(f"python {platform.python_version()}, torch {torch.__version__}, CUDA {torch.version.cuda}")
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print(f"device: {p.name}, compute capability {p.major}.{p.minor}, {p.multi_processor_count} SMs")
try:
    import triton
    print(f"triton {triton.__version__}")
except ImportError:
    print("triton: not installed")
EOF
    } | tee "$out/versions.txt"
}

jupyter_packages() {
    if "$python" -c "import nbval, ipykernel" 2>/dev/null; then
        return 0
    fi
    if [ ! -d .whl ]; then
        echo "gpu_sweep: nbval/ipykernel are missing and there is no .whl/ (run ../shared/tools/gpu-wheels.sh here)" >&2
        return 1
    fi
    # --no-deps: .whl/ holds only what the machine lacks (gpu-wheels.sh's list less pytest, pluggy, packaging, jinja2,
    # ...), so the machine's own pytest and its plugins are not shadowed by other versions.
    "$python" -m pip install -q --no-index --no-deps --no-compile --target .site .whl/*.whl \
        && "$python" -m ipykernel install --user --name python3 >/dev/null
}

# status of each part, printed at the end; the script fails if any part failed
results=()
run_part() {  # name, command...
    local name=$1
    shift
    local start=$SECONDS
    echo "== gpu_sweep: $name =="
    ${PART_TIMEOUT:+timeout "$PART_TIMEOUT"} "$@" 2>&1 | tee "$out/$name.log"
    local rc=${PIPESTATUS[0]}
    results+=("$name: $([ "$rc" -eq 0 ] && echo passed || echo "FAILED (exit $rc)") in $((SECONDS - start)) s")
    return "$rc"
}

xdist=()
notebook_xdist=()
if [ -n "${JOBS:-}" ]; then
    xdist=(-n "$JOBS")
    notebook_xdist=(-n "$JOBS" --dist loadscope)
fi

versions
status=0
case $part in tests | all)
    run_part tests env COURSE_DEVICE="$device" "$python" -m pytest tests -v -p no:cacheprovider -rfEs --durations=30 "${xdist[@]}" || status=1
esac
case $part in notebooks | all)
    if jupyter_packages; then
        run_part notebooks env -u MPLBACKEND COURSE_DEVICE="$device" PYTHONHASHSEED=0 \
            "$python" -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider "${notebook_xdist[@]}" notebooks/[0-9][0-9]_*.ipynb -q \
            || status=1
    else
        results+=("notebooks: NOT RUN (no Jupyter packages)")
        status=1
    fi
esac
case $part in bench | all)
    for d in 64 128; do
        run_part "kernels_bench_d$d" "$python" -m course_lib.kernels.bench --head-dim "$d" --sdpa-backends \
            --csv "$out/kernels_bench_d$d.csv" || status=1
    done
    run_part bench "$python" -m course_lib.bench --device cuda --time-budget 0.5 --no-progress --csv "$out/bench_cuda.csv" || status=1
esac
case $part in ablation)
    run_part ablation "$python" -m course_lib.kernels.ablation --csv "$out/kernels_ablation.csv" || status=1
esac
case $part in cpu)
    # What `make test` runs (Makefile: test-unit, test-notebooks, test-core-paths), with this machine's Python.
    if jupyter_packages; then
        nbval_env=$("$python" -m tools.nbval_env)
        nbval=(--nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:randomly
            -p no:cacheprovider -q "${notebook_xdist[@]}")
        run_part cpu_unit env COURSE_DEVICE=cpu "$python" -m pytest tests -q -p no:cacheprovider -rs "${xdist[@]}" \
            || status=1
        run_part cpu_notebooks $nbval_env "$python" -m pytest "${nbval[@]}" notebooks/[0-9][0-9]_*.ipynb || status=1
        rm -rf build/core-paths && "$python" -m tools.sections --core-paths build/core-paths notebooks/[0-9][0-9]_*.ipynb
        run_part cpu_core_paths $nbval_env "$python" -m pytest "${nbval[@]}" build/core-paths || status=1
    else
        results+=("cpu: NOT RUN (no Jupyter packages)")
        status=1
    fi
esac
case $part in tests | notebooks | bench | ablation | cpu | all) ;;
*)
    echo "usage: tools/gpu_sweep.sh [tests|notebooks|bench|ablation|cpu|all]" >&2
    exit 2
    ;;
esac

echo "== gpu_sweep summary ==" | tee "$out/summary.txt"
printf '%s\n' "${results[@]}" | tee -a "$out/summary.txt"
exit "$status"
