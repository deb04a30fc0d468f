#!/usr/bin/env bash
# Runs a command with a virtual X display of its own (Debian's ParaView
# renders through X only, and pvbatch aborts with SIGABRT, "bad X server
# connection", when it cannot open its display).  What made pvbatch abort
# under xvfb-run on a busy machine, and what this script does instead:
#  - An X server resets when its last client disconnects, and refuses the
#    connections that arrive during the reset.  pvbatch opens and closes
#    its display three times (twice within a millisecond while making its
#    first view, once to render): on a loaded machine a connection often
#    lands in a reset (measured: 23-25 of 100 connect/disconnect cycles
#    refused, 4 of 6 pvbatch runs aborted; with -noreset 0 of 100 and 0
#    of 12).  Hence -noreset.
#  - xvfb-run keeps the X cookie in a folder under /tmp; when another
#    process cleaned /tmp during a run, the cookie was gone when pvbatch
#    connected.  The cookie lives in AUTH_DIR, the caller's folder.
#  - Xvfb -displayfd picks a free display number itself and says which,
#    instead of xvfb-run's search of lock files in /tmp.
# Usage: xvfb_run.sh AUTH_DIR COMMAND [ARGS...]
set -uo pipefail
auth_dir=${1:?usage: xvfb_run.sh AUTH_DIR COMMAND [ARGS...]}
shift
for tool in Xvfb xauth mcookie; do
  command -v $tool >/dev/null || { echo "xvfb_run: $tool not found (apt-get install xvfb xauth)" >&2; exit 77; }
done
mkdir -p "$auth_dir"
auth=$(mktemp "$auth_dir/.Xauthority.XXXXXX")
number=$(mktemp "$auth_dir/.Xdisplay.XXXXXX")
server=
finish() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -f "$auth" "$number"
}
trap finish EXIT
cookie=$(mcookie)
# The server takes every cookie in its file, whatever display it names.
xauth -q -f "$auth" add :0 . "$cookie"
Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp -noreset -auth "$auth" 3>"$number" 2>"$number.log" &
server=$!
for ((tries = 0; tries < 600; ++tries)); do  # up to a minute on a busy machine
  grep -q '^[0-9][0-9]*$' "$number" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
display=$(head -n1 "$number" 2>/dev/null)
if ! [[ "$display" =~ ^[0-9]+$ ]] || ! kill -0 "$server" 2>/dev/null; then
  echo "xvfb_run: Xvfb did not start:" >&2
  cat "$number.log" >&2
  rm -f "$number.log"
  exit 1
fi
rm -f "$number.log"
xauth -q -f "$auth" add ":$display" . "$cookie"
DISPLAY=":$display" XAUTHORITY="$auth" "$@"
