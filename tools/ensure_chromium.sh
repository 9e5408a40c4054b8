#!/usr/bin/env bash
# Make sure Debian's Chromium is installed, for `make e2e` (Playwright drives it; it never downloads a browser).
# Exit 0 when `chromium` is on PATH afterwards; exit 1, saying why, when it is missing and cannot be installed
# (not root and no password-less sudo, no apt-get, or the install failed).
set -uo pipefail

if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_chromium: no chromium and no apt-get: install Chromium and put it on PATH (or set CHROMIUM)" >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    echo "ensure_chromium: no chromium, and no rights to install it (not root, no password-less sudo):" >&2
    echo "    sudo apt-get install chromium" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2; do
    "${as_root[@]}" apt-get update -qq \
        && "${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null \
        && break
    echo "ensure_chromium: apt-get failed (attempt $attempt)" >&2
    sleep 5
done
if command -v chromium >/dev/null 2>&1; then
    echo "ensure_chromium: installed $(chromium --version 2>/dev/null | head -n 1)"
    exit 0
fi
echo "ensure_chromium: could not install chromium with apt-get" >&2
exit 1
