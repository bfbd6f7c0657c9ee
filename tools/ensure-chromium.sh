#!/usr/bin/env bash
# Makes sure the browser test (test/e2e/debug-ui.test.ts) has a Chromium to drive, before jest runs.
# A Chromium named by CHROMIUM_PATH, or Debian's at /usr/bin/chromium, is used as it is. Without
# one, as root with apt-get (a Debian machine like CI's), Debian's `chromium` package is installed;
# otherwise this fails with one line naming the fix. playwright-core never downloads a browser.
set -euo pipefail

if [ -n "${CHROMIUM_PATH:-}" ]; then
  [ -x "$CHROMIUM_PATH" ] && exit 0
  echo "ensure-chromium: CHROMIUM_PATH=$CHROMIUM_PATH is not an executable file; fix it or unset it to use /usr/bin/chromium" >&2
  exit 1
fi
[ -x /usr/bin/chromium ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no Chromium for the browser test; run 'apt-get install chromium' as root, or set CHROMIUM_PATH=/path/to/chromium" >&2
  exit 1
fi

log=$(mktemp)
start=$(date +%s)
echo "ensure-chromium: installing Debian's chromium for the browser test (apt-get, about 120 MB)" >&2
# The package lists of a fresh machine may be missing or old: update them only if the install needs it.
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >"$log" 2>&1; then
  if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; } >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    rm -f "$log"
    echo "ensure-chromium: 'apt-get install chromium' failed (output above); install it by hand or set CHROMIUM_PATH=/path/to/chromium" >&2
    exit 1
  fi
fi
rm -f "$log"
echo "ensure-chromium: chromium installed in $(($(date +%s) - start)) s" >&2
