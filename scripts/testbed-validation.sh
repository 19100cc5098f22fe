#!/usr/bin/env bash
# Issue 12's validation: the simulator against the testbed (real Linux 6.x in namespaces) on the
# fixed path (HTB 4 Mbit/s + pfifo 500, 20 ms each way, CUBIC): audio alone, a bulk download,
# n = 1, 2, 6 web flows x IW3/IW10, each TCP case also with a 20 kB receive-buffer budget.
# Writes OUT/table.md (the table of docs/validation.md) and OUT/table.json; SEEDS testbed runs per
# case (default 3; ~6 min per seed). Needs root; the testbed lock keeps runs from overlapping.
# Then the PAM 2013 trace comparisons of issue 11 (skipped without Debian's mahimahi-traces, which
# scripts/install-references.sh installs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/out/validation-testbed}"
seeds="${SEEDS:-3}"
mkdir -p "$out"
"$root/scripts/bootstrap.sh"
py="$root/.venv/bin/python"
# Testbed runs must not overlap (they share the machine's real time): one lock for all of them.
lock="${JITTERLAB_TESTBED_LOCK:-/tmp/jitterlab-testbed.lock}"
run() { flock "$lock" "$@"; }
run "$py" "$root/scripts/testbed_validation.py" "$out" --seeds "$seeds"
jl="$root/.venv/bin/jitterlab"
sc="$root/scenarios/testbed"
umts=/usr/share/mahimahi/traces/TMobile-UMTS-driving.down
if [ -f "$umts" ]; then
  run "$jl" compare "$sc/umts-bulk.toml" --json "$out/umts-bulk.json"
  run "$jl" compare "$sc/umts-web.toml" --json "$out/umts-web.json"
else
  echo "skipping the trace comparisons: $umts is absent (scripts/install-references.sh)" >&2
fi
