#!/usr/bin/env bash
# One device call under a global deadline (first argument, seconds): the GPU tests (the library-wide
# correctness and speed-order checks for the problems named in $2 first, then the rest of the library),
# then library MCTS runs stored for recording while time is left. Everything lands in $OUT as it goes.
#   bash benchmarks/device_session.sh 240 "attention,conv-bn-relu" "relu,softmax"
set -u
budget=${1:-240}; first=${2:-}; mcts=${3:-}
deadline=$((SECONDS + budget))
left() { echo $((deadline - SECONDS)); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site REFINERY_HOME=/tmp/rh PYTHONUNBUFFERED=1 REFINERY_REPORT_FAILURES_AT_ONCE=1
# The image's nvidia/cu13/include lacks crt/ (the nvidia-cuda-crt package our install depends on).
INC=$(python3 -c "import nvidia; print([p for p in nvidia.__path__ if p.startswith('/opt')][0])")/cu13/include
mkdir -p "$INC/crt" && cp -rn /tmp/site/nvidia/cu13/include/crt/. "$INC/crt/"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/device.txt 2>&1
python3 -c "import torch, cupy; print(torch.__version__, cupy.__version__, torch.cuda.get_device_name())" >> $OUT/device.txt 2>&1

# Node ids in the order wanted: the cheat/integrity and analysis tests, the named problems' library
# checks, the rest of the library, then the slow builds (load_inline, torch.compile) last.
python3 - "$first" > /tmp/order.txt <<'PY'
import sys
from engine.problems import scan_all
first = [s for s in sys.argv[1].split(",") if s]
lib = [p for p in scan_all().problems if any(i.device == "cuda" for i in p.implementations)]
lib.sort(key=lambda p: first.index(p.slug) if p.slug in first else len(first))
V = "tests/test_verify_gpu.py"
print(f"{V} tests/test_analysis_gpu.py -k 'not no_shipped and not promised and not load_inline and not torch_compile'")
for p in lib:
    print(f"{V}::test_no_shipped_cuda_implementation_is_rejected[{p.slug}]")
    if p.expectations:
        print(f"{V}::test_the_promised_speed_order_holds_on_the_largest_configuration[{p.slug}]")
print(f"{V} -k 'load_inline or torch_compile'")
PY
ids=$(sed -n '2,$p' /tmp/order.txt | grep -v " -k " | tr '\n' ' ')
run_pytest() { timeout "$1" python3 -m pytest -m gpu -v -s -rfEs --timeout 170 -p no:cacheprovider "${@:2}"; }
run_pytest $(( $(left) / 4 )) tests/test_verify_gpu.py tests/test_analysis_gpu.py \
  -k 'not no_shipped and not promised and not load_inline and not torch_compile' > $OUT/gpu-units.log 2>&1
grep -E "PASSED|FAILED|ERROR|SKIPPED" $OUT/gpu-units.log | grep -v "^tests.*PASSED" | cut -c1-200
grep -E "passed|failed" $OUT/gpu-units.log | tail -1
run_pytest $(( $(left) - 50 )) $ids > $OUT/gpu-library.log 2>&1
grep -cE "PASSED" $OUT/gpu-library.log; grep -E "FAILED|ERROR" $OUT/gpu-library.log | cut -c1-220 | head -20
for p in ${mcts//,/ }; do
  [ "$(left)" -gt 20 ] || break
  timeout $(( $(left) - 5 )) python3 -m engine.cli run --problem "$p" --strategy mcts --rounds 4 --device gpu > $OUT/run-$p.log 2>&1
  tail -1 $OUT/run-$p.log | cut -c1-200
done
[ -f /tmp/rh/refinery.db ] && cp /tmp/rh/refinery.db $OUT/runs.db
echo "done with $(left) s left"
