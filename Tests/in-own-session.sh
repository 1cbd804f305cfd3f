#!/usr/bin/env bash
# Runs a command (the test run) in a session of its own and, once it has exited, kills every
# process it left in that session: a test run that crashes or is killed never gets to stop the
# servers its tests started (lookout serve, lookout-sim, nginx, prometheus, alertmanager), which
# would go on holding ports and CPU. Exits with the command's status.
set -u
# Started from a script, the command is not a process group leader, so setsid(1) does not fork:
# its pid is the new session's id.
setsid "$@" &
session=$!
trap 'kill -TERM "$session" 2>/dev/null' INT TERM
wait "$session"
status=$?
# A trapped signal ends the first wait early: wait for the command itself.
while kill -0 "$session" 2>/dev/null; do wait "$session"; status=$?; done
for stat in /proc/[0-9]*/stat; do
    line=$(cat "$stat" 2>/dev/null) || continue
    # After the command name in parentheses: state, ppid, process group, session.
    read -r _ _ _ sid _ <<< "${line##*) }"
    [ "$sid" = "$session" ] && kill -KILL "${stat//[^0-9]/}" 2>/dev/null
done
exit "$status"
