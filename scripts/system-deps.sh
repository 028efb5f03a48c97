#!/usr/bin/env bash
# Debian packages the tests and tools need: chromium (browser tests), tesseract (OCR),
# WordNet 3.0 (the AVeriTeC METEOR scorer), a compiler for native wheels.
set -euo pipefail
PKGS=(chromium tesseract-ocr wordnet-base wordnet-sense-index build-essential cmake)
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
