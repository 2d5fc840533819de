#!/usr/bin/env bash
# The class runs again, alternated: main before (9a28c96) then what lands, each pattern
cd .
O=OUT; P=$O/progress
for pat in "30 think" "20 burst" "10 burst"; do
  set -- $pat; n=$1; p=$2; tag=$([ $p = think ] && echo think$n || ([ $n = 20 ] && echo api20 || echo burst10))
  for who in base final; do
    repo=.; [ $who = base ] && repo=MAIN
    flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_class api --clients $n --pattern $p --turns 3 --repo $repo --json $O/$tag-$who-2.json > $O/$tag-$who-2.log 2>&1
    echo "$tag-$who-2 rc=$? $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $P
  done
done
echo CLASS DONE >> $P
