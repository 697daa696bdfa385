#!/usr/bin/env bash
# Headless Chromium and its WebDriver for the inbox browser tests (tests/tests/inbox/browser.rs).
#
#   scripts/chromium.sh     # installs Debian's `chromium` + `chromium-driver` when absent
#
# The tests look for /usr/bin/chromium and /usr/bin/chromedriver (or TOOLNEXUS_CHROMIUM and
# TOOLNEXUS_CHROMEDRIVER). Everything goes to stderr.
set -euo pipefail

log() { echo "chromium.sh: $*" >&2; }

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  log "found $(command -v chromium) and $(command -v chromedriver)"
  exit 0
fi

log "chromium/chromedriver not found: installing them from the distribution's packages"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update >&2
$sudo apt-get install -y --no-install-recommends chromium chromium-driver >&2
log "installed $(command -v chromium) and $(command -v chromedriver)"
