#!/usr/bin/env bash
# Make sure Debian's Chromium is installed, for `make e2e` (Playwright drives it; it never downloads a browser), and a
# font with an OpenType MATH table for the formulas of the speaker notes and the handouts (Debian's
# fonts-dejavu-extra: DejaVu Math TeX Gyre; book/_static/course-slides.js names it among others).
# Exit 0 when `chromium` is on PATH afterwards; exit 1, saying why, when it is missing and cannot be installed
# (not root and no password-less sudo, no apt-get, or the install failed). A math font that cannot be installed is
# reported, not fatal here: the browser test then names the formulas drawn without one.
set -uo pipefail

has_math_font() {
    command -v fc-list >/dev/null 2>&1 && fc-list : family | grep -qiE "STIX Two Math|Latin Modern Math|DejaVu Math"
}

packages=()
command -v chromium >/dev/null 2>&1 || packages+=(chromium)
has_math_font || packages+=(fonts-dejavu-extra)
if [ ${#packages[@]} -eq 0 ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_chromium: ${packages[*]} missing and no apt-get: install Chromium and put it on PATH (or set" \
        "CHROMIUM), and a math font (DejaVu Math TeX Gyre, STIX Two Math or Latin Modern Math)" >&2
    command -v chromium >/dev/null 2>&1
    exit $?
fi
if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    echo "ensure_chromium: ${packages[*]} missing, and no rights to install (not root, no password-less sudo):" >&2
    echo "    sudo apt-get install ${packages[*]}" >&2
    command -v chromium >/dev/null 2>&1
    exit $?
fi
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2; do
    "${as_root[@]}" apt-get update -qq \
        && "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null \
        && break
    echo "ensure_chromium: apt-get failed (attempt $attempt)" >&2
    sleep 5
done
has_math_font || echo "ensure_chromium: WARNING: no math font: the notes' formulas will be drawn flat" >&2
if command -v chromium >/dev/null 2>&1; then
    echo "ensure_chromium: $(chromium --version 2>/dev/null | head -n 1)"
    exit 0
fi
echo "ensure_chromium: could not install chromium with apt-get" >&2
exit 1
