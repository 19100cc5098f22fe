#!/usr/bin/env bash
# Makes .venv ready to run jitterlab from this checkout: creates the virtualenv, installs the Python
# dependencies when requirements change, and rebuilds the native module (maturin, profile dist) when any
# Rust or packaging file changed since the last build. Idempotent and quiet when nothing changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/.venv"
log() { printf '[bootstrap] %s\n' "$*" >&2; }

if [ ! -x "$venv/bin/python" ]; then
  log "creating virtualenv in .venv"
  python3 -m venv "$venv"
fi
py="$venv/bin/python"

req_hash=$(sha256sum scripts/requirements.txt | cut -c1-16)
if [ ! -f "$venv/.req-$req_hash" ]; then
  log "installing Python dependencies (scripts/requirements.txt)"
  "$py" -m pip install -q --disable-pip-version-check -r scripts/requirements.txt
  rm -f "$venv"/.req-* && touch "$venv/.req-$req_hash"
fi

# Rebuild when any tracked build input is newer than the last successful build.
stamp="$venv/.native-built"
need_build=1
if [ -f "$stamp" ] && "$py" -c "import jitterlab._native" 2>/dev/null; then
  if [ -z "$(find crates Cargo.toml Cargo.lock pyproject.toml -newer "$stamp" -type f 2>/dev/null | head -n 1)" ]; then
    need_build=0
  fi
fi
# JITTERLAB_NO_NATIVE_BUILD=1: the Python side only (scripts/build-wheel.sh compiles the module
# itself, for the wheel's target; building it here too compiled the workspace twice)
[ "${JITTERLAB_NO_NATIVE_BUILD:-0}" = 1 ] && need_build=0
if [ "$need_build" = 1 ]; then
  log "building the native module (the wheel's own build: maturin, profile dist, manylinux2014 via zig; first time takes a few minutes)"
  buildlog="$venv/.native-build.log"
  # The very build scripts/build-wheel.sh makes (same command, same environment), so that cargo
  # reuses it when the wheel is built (tests/test_wheel.py): one compilation of the module, not two.
  wheels="$root/target/wheels/bootstrap"
  rm -rf "$wheels"
  if ! JITTERLAB_NO_NATIVE_BUILD=1 "$root/scripts/build-wheel.sh" "$wheels" >"$buildlog" 2>&1; then
    tail -n 60 "$buildlog" >&2; log "native build failed (full log: $buildlog)"; exit 1
  fi
  # Installed as `maturin develop` would: the wheel gives the metadata and the `jitterlab` entry
  # point, its extension goes beside this checkout's sources, and the package is those sources.
  "$py" -m pip install -q --no-deps --force-reinstall --disable-pip-version-check "$wheels"/jitterlab-*.whl
  "$py" - "$root/python/jitterlab" "$wheels"/jitterlab-*.whl <<'PY'
import pathlib, shutil, sys, sysconfig, zipfile
dest, whl = pathlib.Path(sys.argv[1]), sys.argv[2]
with zipfile.ZipFile(whl) as z:
    (so,) = [n for n in z.namelist() if n.startswith("jitterlab/_native") and n.endswith(".so")]
    (dest / pathlib.Path(so).name).write_bytes(z.read(so))
site = pathlib.Path(sysconfig.get_paths()["purelib"])
shutil.rmtree(site / "jitterlab")
(site / "jitterlab.pth").write_text(str(dest.parent) + "\n")
PY
  "$py" -c "import jitterlab._native" || { log "native module does not import"; exit 1; }
  touch "$stamp"
fi

# The package's bytecode, compiled here: the package is this checkout's sources (not installed by
# pip, which compiles a wheel's), and with PYTHONDONTWRITEBYTECODE=1 (set on this project's
# machines) every process would compile jitterlab's modules again: ~0.05 s of CPU each, a sixth of
# `jitterlab sweep`'s start and of every spawned worker's (docs/performance.md, issue 31). A file
# edited since is compiled in memory on import, as without this step. Quiet; only stale files.
"$py" -m compileall -q -j 0 "$root/python/jitterlab" >/dev/null
