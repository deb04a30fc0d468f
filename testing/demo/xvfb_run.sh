#!/usr/bin/env bash
# Runs a command with a virtual X display of its own (Debian's ParaView
# renders through X only, and pvbatch aborts with SIGABRT when it cannot
# reach its display).  Two things keep the display reachable when several
# runs share a machine:
#  - the X authority cookie lives in AUTH_DIR, a folder of the caller's,
#    not in xvfb-run's folder under /tmp: when that folder went away during
#    a run (a /tmp clean-up by another process), the next view pvbatch made
#    found no cookie and the run aborted;
#  - -n before -a: xvfb-run's search for a free display starts at the
#    random number (-a then -n would search from :99 and take the random
#    number unchecked).
# Usage: xvfb_run.sh AUTH_DIR COMMAND [ARGS...]
set -uo pipefail
auth_dir=${1:?usage: xvfb_run.sh AUTH_DIR COMMAND [ARGS...]}
shift
command -v xvfb-run >/dev/null || { echo "xvfb_run: xvfb-run not found (apt-get install xvfb xauth)" >&2; exit 77; }
mkdir -p "$auth_dir"
auth=$(mktemp "$auth_dir/.Xauthority.XXXXXX")
xvfb-run -n $((100 + RANDOM % 800)) -a -f "$auth" -s '-screen 0 1280x1024x24' "$@"
status=$?
rm -f "$auth"
exit $status
