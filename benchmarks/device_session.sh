#!/usr/bin/env bash
# One device call: the named steps in order under one deadline (first argument, seconds). A step
# starts only while time is left and is cut at the deadline; everything lands in $OUT as it goes, in
# at most eight files (what the device tool brings back).
#
#   bash benchmarks/device_session.sh 560 library:jacobi-1d,heat-3d units mcts:relu,softmax ray throughput \
#        ncu:relu,softmax
#
# Steps: library[:first,slugs]  every shipped CUDA implementation through the verifier (false-reject
#                               test and promised speed orders), the named problems first; results also
#                               as JSON lines (library.jsonl) for `benchmarks/library_recording.py` and
#                               `benchmarks/library_timing_agreement.py` (LIBRARY_ONLY: these slugs only;
#                               LIBRARY_PROMISES=0: without the speed-order tests)
#        libraryof:DIR          the same check run by another tree (an earlier commit's export): a baseline
#                               in the same call (library-DIR.jsonl; LIBRARY_FIRST; LIBRARY_CAP caps either)
#        units                  the other GPU tests (cheats, analysis, ncu, NVML, ceilings, Ray on the GPU)
#        mcts:slugs             library proposer + MCTS runs, stored in runs.db (MCTS_ROUNDS, MCTS_CAP: 5, 90 s)
#        pytest:files           the named GPU test files (comma-separated)
#        cpu:files              the named test files whole (not only `gpu`-marked tests): the sandbox there
#        ray[:slugs]            benchmarks/ray_scaling.py, 1 and 2 Ray workers (default relu,softmax)
#        throughput             benchmarks/verifier_throughput.py
#        honest[:slugs]         benchmarks/honest_concurrency.py: the honest fixtures and every shipped CUDA
#                               implementation (of these problems only, if named) verified in waves that keep
#                               every core building while the GPU times; a line each in honest.jsonl, the
#                               false rejects in the log (HONEST_CAP: 420 s, submitting for half of it;
#                               HONEST_ROUNDS: times the set is sent, default enough for two waves)
#        ncu[:slugs]            benchmarks/ncu_agreement.py until the deadline
#        ncucost:SLUG/IMPL,...  benchmarks/ncu_metric_cost.py: profile time per metric group
#        repeat:SLUG/IMPL       benchmarks/verifier_repeat.py: REPEAT_TIMES (8) verifications, ncu between
#        throughput[:DIR]       benchmarks/verifier_throughput.py (NATIVE, INLINE candidates), of DIR if given
#                               (THROUGHPUT_AGAINST=DIR: then DIR's run on the same card, and the ratio)
#        pinning                benchmarks/region_pinning.py: page-locking the shared region, its cost and gain
#        steps                  benchmarks/timing_step_costs.py: what each untimed step around a timed call costs
#        placement              benchmarks/atomic_placement.py: histogram/naive with its bins at other offsets
#        warmup[:1,10,16]       benchmarks/runner_warmup.py: fresh runners warmed in waves of that many at once
#                               (each step's wall and CPU seconds, runners ready a second)
#        env:NAME=VALUE         export a variable for the steps after it (THROUGHPUT_TAG names the next
#                               throughput file: a second throughput run beside the first)
#        polybench:DIR          benchmarks/polybench_import.py DIR --verify: every PolyBench kernel imported and
#                               its generated CUDA port checked on the GPU (DIR: a checkout carried along)
# Needs `.whl` carried (and `.raypkg` for the Ray steps), and `.sandbox-tools` where the machine has no
# bubblewrap: Debian's packages of it (`apt-get download bubblewrap libseccomp2`), unpacked here.
set -u
budget=${1:-240}; shift
deadline=$((SECONDS + budget))
left() { echo $((deadline - SECONDS)); }
cap() { local l; l=$(left); echo $(( $1 < l ? $1 : l )); }  # a step's limit: its own cap or the time left
log=$OUT/session.log
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
[ -f .raypkg/ray-trim.tar.xz ] && [ ! -d /tmp/site/ray ] && tar -xJf .raypkg/ray-trim.tar.xz -C /tmp/site
export PYTHONPATH=$PWD:/tmp/site REFINERY_HOME=/tmp/rh PYTHONUNBUFFERED=1 REFINERY_REPORT_FAILURES_AT_ONCE=1
if ! command -v bwrap >/dev/null 2>&1 && ls .sandbox-tools/bubblewrap_*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/st && for f in .sandbox-tools/*.deb; do dpkg -x "$f" /tmp/st; done
  export REFINERY_BWRAP=/tmp/st/usr/bin/bwrap
fi
# The image's nvidia/cu13/include lacks crt/ (the nvidia-cuda-crt package our install depends on).
INC=$(python3 -c "import nvidia; print([p for p in nvidia.__path__ if p.startswith('/opt')][0])")/cu13/include
mkdir -p "$INC/crt" && cp -rn /tmp/site/nvidia/cu13/include/crt/. "$INC/crt/"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  python3 -c "import torch, cupy; print(torch.__version__, cupy.__version__, torch.cuda.get_device_name())"
  python3 -c "from engine.sandbox import boundary; b = boundary(); print(b.summary(), list(b.missing))"
} > "$log" 2>&1
note() { echo "[$(date +%T), $(left) s left] $*" | tee -a "$log"; }
run_pytest() { timeout "$1" python3 -m pytest -m gpu -v -s -rfEs --timeout 170 -p no:cacheprovider "${@:2}"; }

step_library() { run_library . "$1"; }

step_libraryof() {
  # libraryof:DIR runs the library check of another tree (an export of an earlier commit: the timings'
  # baseline measured in the same call, on the same card); LIBRARY_FIRST orders it, LIBRARY_ONLY as above
  REFINERY_HOME=/tmp/rh-$(basename "$1") run_library "$1" "${LIBRARY_FIRST:-}"
}

run_library() {
  local tree=$1 tag=""
  [ "$tree" != . ] && tag=-$(basename "$(realpath "$tree")")
  ( cd "$tree" && python3 - "$2" ) > /tmp/library-ids.txt <<'PY'
import os, sys
from engine.problems import scan_all
first = [s for s in sys.argv[1].split(",") if s]
only = [s for s in os.environ.get("LIBRARY_ONLY", "").split(",") if s]
lib = [p for p in scan_all().problems if any(i.device == "cuda" for i in p.implementations)
       and (not only or p.slug in only)]
lib.sort(key=lambda p: first.index(p.slug) if p.slug in first else len(first))
V = "tests/test_verify_gpu.py"
for p in lib:
    print(f"{V}::test_no_shipped_cuda_implementation_is_rejected[{p.slug}]")
    if p.expectations and os.environ.get("LIBRARY_PROMISES", "1") != "0":
        print(f"{V}::test_the_promised_speed_order_holds_on_the_largest_configuration[{p.slug}]")
PY
  ( cd "$tree" && PYTHONPATH=$PWD:/tmp/site REFINERY_LIBRARY_RESULTS=$OUT/library$tag.jsonl \
    run_pytest "$(cap ${LIBRARY_CAP:-$(( $(left) - 10 ))})" $(cat /tmp/library-ids.txt) ) > $OUT/library$tag.log 2>&1
  note "library$tag: $(grep -c PASSED $OUT/library$tag.log) passed, $(grep -cE '(FAILED|ERROR)$' $OUT/library$tag.log) failed"
  grep -E "^(FAILED|ERROR) " $OUT/library$tag.log | cut -c1-240 | tee -a "$log"
}

step_units() {
  run_pytest "$(cap 300)" tests/test_verify_gpu.py tests/test_analysis_gpu.py tests/test_dynamic_gpu.py tests/test_scale_ray.py \
    -k 'not no_shipped and not promised' > $OUT/units.log 2>&1
  grep -E "(PASSED|FAILED|ERROR|SKIPPED)" $OUT/units.log | grep -v " PASSED$" | cut -c1-200 | tee -a "$log"
  note "units: $(grep -E '[0-9]+ (passed|failed)' $OUT/units.log | tail -1)"
}

step_pytest() {
  run_pytest "$(cap ${PYTEST_CAP:-300})" ${1//,/ } -k "${PYTEST_K:-not no_shipped and not promised}" > $OUT/pytest.log 2>&1
  grep -E "(PASSED|FAILED|ERROR|SKIPPED)" $OUT/pytest.log | grep -v " PASSED$" | cut -c1-200 | tee -a "$log"
  note "pytest: $(grep -E '[0-9]+ (passed|failed)' $OUT/pytest.log | tail -1)"
}

step_cpu() {
  # Tests that need no GPU but should hold on the GPU machine too (its sandbox, its cgroups): not `-m gpu`.
  timeout "$(cap 240)" python3 -m pytest -v -rfEs --timeout 170 -p no:cacheprovider ${1//,/ } > $OUT/cpu.log 2>&1
  grep -E "(PASSED|FAILED|ERROR|SKIPPED)" $OUT/cpu.log | grep -v " PASSED$" | cut -c1-200 | tee -a "$log"
  note "cpu: $(grep -E '[0-9]+ (passed|failed)' $OUT/cpu.log | tail -1)"
}

step_mcts() {
  local slugs=(${1//,/ })
  for p in "${slugs[@]}"; do
    [ "$(left)" -gt 30 ] || { note "mcts: no time for $p"; continue; }
    local t0=$SECONDS
    timeout "$(cap ${MCTS_CAP:-90})" python3 -m engine.cli run --problem "$p" --strategy mcts --rounds ${MCTS_ROUNDS:-5} \
      --device gpu > /tmp/run-$p.log 2>&1
    note "mcts $p ($((SECONDS - t0)) s): $(tail -1 /tmp/run-$p.log | cut -c1-160)"
    { echo "== $p"; cat /tmp/run-$p.log; } >> $OUT/mcts.log
  done
  cp /tmp/rh/refinery.db $OUT/runs.db
}

step_ray() {
  # One pass over four problems' full checks took 93 s on the H200 (local pool): two problems, three passes.
  timeout "$(cap 300)" python3 benchmarks/ray_scaling.py --problems ${1:-relu,softmax} --workers 1,2 \
    --repeat 1 --out $OUT/ray_scaling.json >> $OUT/benchmarks.log 2>&1
  note "ray: exit $?"
}

step_throughput() {
  # throughput:DIR runs the benchmark of another tree (an export of an earlier commit: a baseline in the same call)
  local tree=${1:-.}
  ( cd "$tree" && PYTHONPATH=$PWD:/tmp/site timeout "$(cap ${THROUGHPUT_CAP:-240})" python3 \
    benchmarks/verifier_throughput.py --native ${NATIVE:-40} --inline ${INLINE:-1} \
    ${THROUGHPUT_AGAINST:+--against "$THROUGHPUT_AGAINST"} \
    --out $OUT/throughput-$(basename "$(realpath "$tree")")${THROUGHPUT_TAG:+-$THROUGHPUT_TAG}.json ) \
    >> $OUT/benchmarks.log 2>&1
  note "throughput ${tree}: exit $?, $(grep '^native:' $OUT/benchmarks.log | tail -1 | cut -c1-400)"
}

step_honest() {
  # Submitting stops at half the cap so the last waves (about 2 x 16 candidates) finish inside it.
  local c rc; c=$(cap ${HONEST_CAP:-420})
  timeout "$c" python3 benchmarks/honest_concurrency.py ${1:+--problems "$1"} ${HONEST_ROUNDS:+--rounds "$HONEST_ROUNDS"} \
    --seconds $(( c / 2 )) --out $OUT/honest.jsonl > /tmp/honest.log 2>&1
  rc=$?
  cat /tmp/honest.log >> $OUT/benchmarks.log
  note "honest: exit $rc, $(grep -cv '"summary"' $OUT/honest.jsonl 2>/dev/null) lines, $(grep -E '^[0-9]+ candidates in' /tmp/honest.log | cut -c1-300) $(grep '^FALSE REJECTS' /tmp/honest.log)"
  grep "false reject:" /tmp/honest.log | cut -c1-240 | tee -a "$log"
}

step_warmup() {
  timeout "$(cap 150)" python3 benchmarks/runner_warmup.py ${1:+--waves "$1"} --out $OUT/warmup.json \
    >> $OUT/benchmarks.log 2>&1
  note "warmup: exit $?"; grep '^{"runners"' $OUT/benchmarks.log | cut -c1-300 | tee -a "$log"
}

step_env() { export "$1"; note "env $1"; }

step_pinning() {
  timeout "$(cap 120)" python3 benchmarks/region_pinning.py --json $OUT/pinning.json >> $OUT/benchmarks.log 2>&1
  note "pinning: exit $?"; grep "MiB:" $OUT/benchmarks.log | tee -a "$log"
}

step_steps() {
  timeout "$(cap 120)" python3 benchmarks/timing_step_costs.py --out $OUT/timing_steps.json >> $OUT/benchmarks.log 2>&1
  note "steps: exit $?"; grep -E "^(inputs|flush|the call|outputs|chunk|fused|commit|page|block)" $OUT/benchmarks.log \
    | tee -a "$log"
}

step_placement() {
  timeout "$(cap 90)" python3 benchmarks/atomic_placement.py --json $OUT/placement.json >> $OUT/benchmarks.log 2>&1
  note "placement: exit $?"; grep -E "^(histogram|reduction) " $OUT/benchmarks.log | tee -a "$log"
}

step_ncu() {
  local only=()
  [ -n "$1" ] && only=(--only ${1//,/ })
  timeout "$(left)" python3 benchmarks/ncu_agreement.py "${only[@]}" --deadline $(( $(left) - 45 )) --budget 30 \
    --json $OUT/ncu_agreement.json >> $OUT/benchmarks.log 2>&1
  note "ncu: exit $?"
}

step_ncucost() {
  timeout "$(left)" python3 benchmarks/ncu_metric_cost.py ${1//,/ } --budget 40 --json $OUT/ncu_cost.json \
    >> $OUT/benchmarks.log 2>&1
  note "ncucost: exit $?"
}

step_repeat() {
  timeout "$(cap 300)" python3 benchmarks/verifier_repeat.py "$1" --times ${REPEAT_TIMES:-8} --profile-between \
    --json $OUT/repeat.json >> $OUT/benchmarks.log 2>&1
  note "repeat: exit $?, $(tail -1 $OUT/benchmarks.log | cut -c1-200)"
}

step_polybench() {
  timeout "$(cap ${POLYBENCH_CAP:-300})" python3 benchmarks/polybench_import.py "$1" --verify \
    ${POLYBENCH_ONLY:+--only $POLYBENCH_ONLY} \
    --json $OUT/polybench.json >> $OUT/polybench.log 2>&1
  note "polybench: exit $?, $(tail -3 $OUT/polybench.log | tr '\n' ' ' | cut -c1-240)"
}

for step in "$@"; do
  name=${step%%:*}; arg=""; [ "$name" != "$step" ] && arg=${step#*:}
  if [ "$(left)" -le 30 ]; then note "skipped $name: out of time"; continue; fi
  note "start $name"
  "step_$name" "$arg"
done
note "done"
# The device brings back at most eight files: past that, everything but the session log travels as one archive.
if [ "$(find $OUT -maxdepth 1 -type f | wc -l)" -gt 8 ]; then
  (cd $OUT && tar -czf results.tar.gz --exclude=session.log --exclude=results.tar.gz --remove-files -- *) \
    && note "packed into results.tar.gz"
fi
