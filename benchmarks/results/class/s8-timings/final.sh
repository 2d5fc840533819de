#!/usr/bin/env bash
# Session 8's idle timings at what lands (main c758308: nothing on a turn's path changes this session):
# three runs each of 30 students thinking and 20 API clients, one student measured on 15 replies, and three runs of
# one student over 30 turns with the app's default (reminders on).
cd "$(git rev-parse --show-toplevel)"
O=benchmarks/results/class/s8-timings; P=$O/progress
for k in 1 2 3; do
  flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_class api --clients 30 --pattern think --turns 3 --solo-turns 15 --json $O/think30-$k.json > $O/think30-$k.log 2>&1
  echo "think30-$k rc=$? $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $P
  flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_class api --clients 20 --pattern burst --turns 3 --solo-turns 15 --json $O/api20-$k.json > $O/api20-$k.log 2>&1
  echo "api20-$k rc=$? $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $P
  flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_app --turns 30 --warmup 2 --window 6 --json $O/flat30-$k.json > $O/flat30-$k.log 2>&1
  echo "flat30-$k rc=$? $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $P
done
echo FINAL DONE >> $P
