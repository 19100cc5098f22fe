#!/usr/bin/env bash
# Builds a manylinux2014 wheel of jitterlab into DIR (default target/wheels): maturin with zig as the
# linker (pip package ziglang), so the extension links against glibc 2.17 symbols whatever this
# machine's glibc is. The git commit is baked in (python/jitterlab/_commit.txt) for `jitterlab --version`.
# Usage: scripts/build-wheel.sh [DIR]   (needs cargo; uses .venv's maturin and ziglang)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${1:-$root/target/wheels}"
# the virtualenv's maturin and ziglang only: the wheel's build below is the one compilation
JITTERLAB_NO_NATIVE_BUILD=1 "$root/scripts/bootstrap.sh"
commit_file="$root/python/jitterlab/_commit.txt"
trap 'rm -f "$commit_file"' EXIT
if c=$(git -C "$root" rev-parse HEAD 2>/dev/null); then
  [ -z "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] || c="$c-dirty"
  printf '%s\n' "$c" > "$commit_file"
fi
# scripts/bootstrap.sh builds the virtualenv's module with this very line: the same environment
# (no caller's virtualenv or Python settings) lets cargo reuse one build for the other.
env -u VIRTUAL_ENV -u CONDA_PREFIX -u PYO3_PYTHON -u PYTHONHOME PATH="$root/.venv/bin:$PATH" \
  "$root/.venv/bin/maturin" build --profile dist --zig --compatibility manylinux2014 --out "$out"
