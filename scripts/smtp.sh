#!/usr/bin/env bash
# A real SMTP server on 127.0.0.1 for the email notifier tests: aiosmtpd from PyPI, pinned, in a
# virtual environment under the build directory (created when absent). Every message it
# receives is written, as received, to its mail folder (one `<n>.eml` file each), which the
# tests read (tests/tests/inbox/email.rs; they skip with a notice without it, and fail under
# CI=true).
#
# usage: eval "$(scripts/smtp.sh start)"   exports TOOLNEXUS_SMTP_URL, TOOLNEXUS_SMTP_DIR,
#                                          TOOLNEXUS_SMTP_PID
#        scripts/smtp.sh stop              stops the server of those exports, deletes its folder
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${CARGO_TARGET_DIR:-$REPO/target}/smtp/venv"
AIOSMTPD_VERSION="1.4.6"

installed() {
  [ -x "$VENV/bin/python" ] &&
    "$VENV/bin/python" -c "import sys; from importlib.metadata import version; sys.exit(version('aiosmtpd') != '$AIOSMTPD_VERSION')" 2>/dev/null
}

case "${1:-}" in
  start)
    if ! installed; then
      python3 -m venv "$VENV" >&2
      "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        "aiosmtpd==$AIOSMTPD_VERSION" >&2
      installed || { echo "smtp.sh: aiosmtpd did not install into $VENV" >&2; exit 1; }
    fi
    DIR="$(mktemp -d "${TMPDIR:-/tmp}/toolnexus-smtp.XXXXXX")"
    PORT="$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    nohup "$VENV/bin/python" - "$PORT" "$DIR" >"$DIR/server.log" 2>&1 <<'PY' &
import asyncio, os, sys, time
from aiosmtpd.controller import Controller

port, folder = int(sys.argv[1]), sys.argv[2]

class Keep:
    n = 0
    async def handle_DATA(self, server, session, envelope):
        Keep.n += 1
        tmp = os.path.join(folder, f".{Keep.n}.tmp")
        with open(tmp, "wb") as f:
            f.write(envelope.original_content or envelope.content)
        # a complete file appears at once: the tests never read half a message
        os.rename(tmp, os.path.join(folder, f"{Keep.n}.eml"))
        return "250 Message accepted for delivery"

controller = Controller(Keep(), hostname="127.0.0.1", port=port)
controller.start()
open(os.path.join(folder, "ready"), "w").close()
while True:
    time.sleep(3600)
PY
    PID=$!
    for _ in $(seq 1 100); do
      [ -e "$DIR/ready" ] && break
      sleep 0.1
    done
    [ -e "$DIR/ready" ] || { echo "smtp.sh: the server did not start:" >&2; cat "$DIR/server.log" >&2; exit 1; }
    echo "export TOOLNEXUS_SMTP_URL=smtp://127.0.0.1:$PORT TOOLNEXUS_SMTP_DIR=$DIR TOOLNEXUS_SMTP_PID=$PID"
    ;;
  stop)
    if [ -n "${TOOLNEXUS_SMTP_PID:-}" ]; then
      kill "$TOOLNEXUS_SMTP_PID" 2>/dev/null || true
    fi
    if [ -n "${TOOLNEXUS_SMTP_DIR:-}" ] && [ -d "$TOOLNEXUS_SMTP_DIR" ]; then
      rm -rf "$TOOLNEXUS_SMTP_DIR"
    fi
    ;;
  *)
    echo "usage: scripts/smtp.sh start|stop" >&2
    exit 2
    ;;
esac
