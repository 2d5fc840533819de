#!/usr/bin/env bash
# Session 7's idle timings: empty cache (provisioned and not) and one student, alternated with main before (9a28c96);
# then 30 turns and the class runs at what lands.
cd .
P=OUT/progress; O=OUT
AVX2="CT2_FORCE_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 GUARD_DTYPE=float32"
repo_of() { [ "$1" = base ] && echo MAIN || echo .; }
note() { echo "$1 rc=$2 $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $P; }
for k in 1 2 3; do
  order="final base"; [ $k = 2 ] && order="base final"
  for who in $order; do
    for mode in prov empty; do
      flag=""; [ $mode = prov ] && flag="--provisioned"
      flock /tmp/heavy.lock env GUARD_APP_REMIND=0 $AVX2 HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_app --empty-cache $flag --turns 3 --warmup 1 --window 3 --repo $(repo_of $who) --json $O/$mode-$who-$k.json > $O/$mode-$who-$k.log 2>&1
      note $mode-$who-$k $?
    done
  done
done
for k in 1 2 3; do
  order="final base"; [ $k = 2 ] && order="base final"
  for who in $order; do
    flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_app --turns 6 --warmup 2 --window 6 --repo $(repo_of $who) --json $O/one-$who-$k.json > $O/one-$who-$k.log 2>&1
    note one-$who-$k $?
  done
done
flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_app --turns 30 --warmup 2 --window 6 --json $O/flat30-final.json > $O/flat30-final.log 2>&1
note flat30-final $?
flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_class api --clients 30 --pattern think --turns 3 --repo . --json $O/think30-final.json > $O/think30-final.log 2>&1
note think30-final $?
flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_class api --clients 20 --pattern burst --turns 3 --repo . --json $O/api20-final.json > $O/api20-final.log 2>&1
note api20-final $?
flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_class api --clients 10 --pattern burst --turns 3 --repo . --json $O/burst10-final.json > $O/burst10-final.log 2>&1
note burst10-final $?
echo ALL DONE >> $P
# Then, by hand: the 30 turns again, reminders on (the app's default, as above: flat30-on-*) and off
# (GUARD_APP_REMIND=0, as session 6 measured them: flat30-off-*), twice each; files renamed flat30-{on,off}-{1,2}.json.
