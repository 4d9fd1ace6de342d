#!/usr/bin/env bash
# One device call: library MCTS runs (stored), the rest of the library check, the GPU tests.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site REFINERY_HOME=/tmp/rh PYTHONUNBUFFERED=1
# The image's nvidia/cu13/include lacks crt/ (the nvidia-cuda-crt package our install depends on).
INC=$(python3 -c "import nvidia; print([p for p in nvidia.__path__ if p.startswith('/opt')][0])")/cu13/include
mkdir -p "$INC/crt" && cp -rn /tmp/site/nvidia/cu13/include/crt/. "$INC/crt/"
export REFINERY_TIMING_MIN_SECONDS=0.2 REFINERY_TIMING_MIN_TRIALS=30
for p in relu softmax layernorm rmsnorm row-sum l2-normalize; do
  timeout 30 python3 -m engine.cli run --problem $p --strategy mcts --rounds 5 --device gpu > $OUT/run-$p.log 2>&1
  tail -1 $OUT/run-$p.log
done
cp /tmp/rh/refinery.db $OUT/runs.db
timeout 90 python3 benchmarks/library_gpu_check.py --problems "$1" --out $OUT/lib2.jsonl > $OUT/lib2.log 2>&1
grep -v " correct " $OUT/lib2.log | grep -v "^# [a-z0-9-]*:" | cut -c1-200
timeout 60 python3 -m pytest -m gpu -q -rfE --timeout 55 -p no:cacheprovider tests/test_verify_gpu.py tests/test_analysis_gpu.py -k "not no_shipped and not promised" > $OUT/gpu-tests.log 2>&1
tail -25 $OUT/gpu-tests.log | cut -c1-240
