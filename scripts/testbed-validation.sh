#!/usr/bin/env bash
# Runs the PAM 2013 workloads (fixed-rate link without jitter, then a cellular trace) on the simulator
# and the testbed, CUBIC on both,
# and writes one JSON per workload into OUT (default out/validation-testbed). Needs root; ~5 min.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/out/validation-testbed}"
mkdir -p "$out"
jl="$root/.venv/bin/jitterlab"
sc="$root/scenarios/testbed"
"$jl" compare "$sc/pam2013-web.toml" --set 'traffic[1].flows=1' --set 'duration="10s"' --set 'traffic=[{kind="audio",name="audio",from="server",to="mobile"}]' --json "$out/audio.json"
"$jl" compare "$sc/pam2013-bulk.toml" --json "$out/bulk.json"
for n in 1 2 6; do
  for iw in 3 10; do
    "$jl" compare "$sc/pam2013-web.toml" --set "traffic[1].flows=$n" --set "traffic[1].iw=$iw" --json "$out/web-n$n-iw$iw.json"
  done
done
# issue 11: a real cellular capacity trace on both backends (skipped when ../shared/traces is absent)
if [ -f "$root/../shared/traces/TMobile-UMTS-driving.down" ]; then
  "$jl" compare "$sc/umts-bulk.toml" --json "$out/umts-bulk.json"
  "$jl" compare "$sc/umts-web.toml" --json "$out/umts-web.json"
else
  echo "skipping the trace comparisons: $root/../shared/traces/TMobile-UMTS-driving.down is absent" >&2
fi
