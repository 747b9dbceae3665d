#!/usr/bin/env bash
# Installs the Debian packages collsim needs to build and test, only those that are missing.
set -euo pipefail

packages=(gcc meson ninja-build pkg-config python3 libglib2.0-dev libcjson-dev libgsl-dev
          openmpi-bin libopenmpi-dev clang-format clang
          libplplot-dev plplot-driver-cairo librsvg2-bin graphviz)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "collsim: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
