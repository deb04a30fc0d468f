#!/usr/bin/env bash
# Installs the Debian 12 packages Vicinity needs (only those missing).
# Runs as root, or through sudo when available.  Usage: install_deps.sh [build|bench]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sets=("$here/deps-build.txt")
[ "${1:-}" = "bench" ] && sets+=("$here/deps-bench.txt")
missing=()
for f in "${sets[@]}"; do
  while read -r pkg; do
    [ -z "$pkg" ] || [ "${pkg#\#}" != "$pkg" ] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done < "$f"
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all packages present"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install_deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "install_deps: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
