#!/usr/bin/env bash
# Measurement only (no default changed): 20 API clients at once under other batching settings, then the default again
cd .
O=OUT; P=$O/progress
while ! grep -q "CLASS DONE" $P; do sleep 10; done
for setting in "GUARD_GEN_SPREAD=64" "GUARD_GEN_SPREAD=1000" "GUARD_GEN_BATCH=8" "GUARD_GEN_SPREAD=24"; do
  tag=api20-$(echo $setting | tr '=' '-' | tr 'A-Z' 'a-z')
  flock /tmp/heavy.lock env $setting HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_class api --clients 20 --pattern burst --turns 3 --repo . --json $O/$tag.json > $O/$tag.log 2>&1
  echo "$tag rc=$? $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $P
done
echo SWEEP DONE >> $P
