#!/usr/bin/env bash
# Installs the reference tools the cross-check tests compare against (Debian's ns2, tshark, tcpdump,
# chromium) and the testbed's ethtool when we are root and they are missing. Never fatal: tests skip with the reason when a
# tool is absent.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# ns-3 for validation/ns3 (headers and libraries of the PyPI wheel; its programs are built with g++).
if [ -x "$root/.venv/bin/python" ] && ! "$root/.venv/bin/python" -c "import sysconfig, pathlib, sys; sys.exit(not (pathlib.Path(sysconfig.get_paths()['purelib']) / 'ns3/include/ns3/core-module.h').exists())" 2>/dev/null; then
  echo "[references] installing the ns3 wheel (ns-3 3.44) into .venv" >&2
  "$root/.venv/bin/python" -m pip install -q "ns3==3.44.post0" >&2 || echo "[references] pip could not install ns3; the ns-3 cross-checks will skip" >&2
fi
# Mahimahi's cellular traces (GPL-3.0 data, so not in this repository): Debian's `mahimahi-traces`
# (bullseye, architecture all, no dependencies) puts them in /usr/share/mahimahi/traces, where the
# validation scenarios (scenarios/testbed/*.toml) name them. Not in bookworm, so the .deb is fetched
# from the Debian archive by its pinned SHA-256 and installed with dpkg.
mm_deb=mahimahi-traces_0.98-1.1_all.deb
mm_sha=31f096d488d66e141641a3a9517932b9106936824824c0d27a12fbd2a045e1ac
if [ ! -f /usr/share/mahimahi/traces/TMobile-UMTS-driving.down ] && [ "$(id -u)" = 0 ]; then
  echo "[references] installing Debian's mahimahi-traces (bullseye) for the trace validations" >&2
  tmp=$(mktemp -d)
  for base in http://deb.debian.org/debian http://archive.debian.org/debian; do
    python3 -c 'import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1], timeout=300).read())' \
      "$base/pool/main/m/mahimahi/$mm_deb" "$tmp/$mm_deb" 2>/dev/null && break
  done
  if [ -f "$tmp/$mm_deb" ] && echo "$mm_sha  $tmp/$mm_deb" | sha256sum -c --quiet - 2>/dev/null; then
    dpkg -i "$tmp/$mm_deb" >/dev/null 2>&1 || echo "[references] dpkg could not install $mm_deb" >&2
  else
    echo "[references] could not fetch $mm_deb (or its SHA-256 differs); trace validations will skip" >&2
  fi
  rm -rf "$tmp"
fi
want=()
command -v g++ >/dev/null 2>&1 || want+=(g++)
command -v ns >/dev/null 2>&1 || want+=(ns2)
command -v tshark >/dev/null 2>&1 || want+=(tshark)
command -v tcpdump >/dev/null 2>&1 || want+=(tcpdump)
command -v chromium >/dev/null 2>&1 || want+=(chromium)
# The testbed turns veth offloads off with ethtool (otherwise the wire shows GSO super-packets).
command -v ethtool >/dev/null 2>&1 || want+=(ethtool)
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "[references] not root: cannot install ${want[*]}" >&2; exit 1
fi
echo "[references] installing ${want[*]} (Debian packages)" >&2
export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null 2>&1 || { echo "[references] apt-get failed for ${want[*]}" >&2; exit 1; }
