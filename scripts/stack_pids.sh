# shellcheck shell=bash
# The native stack's processes, each known by its pid file and identity:
# start() records them, ours() tells the process start() began from a
# recycled pid, stop() signals only that one. Sourced by scripts/stack.sh,
# whose PIDS and LOGS they use.

pid_of() { [[ -f "$PIDS/$1.pid" ]] && cat "$PIDS/$1.pid"; }

# proc_id PID: "<start time> <executable>" of a live process. The start time
# (field 22 of /proc/PID/stat, clock ticks after boot) survives exec and tells
# a recycled pid apart: it alone decides (same_process); the executable is
# for the messages (start() may record it before the daemon's exec, on a
# busy machine). A binary replaced on disk reads "PATH (deleted)".
proc_id() {
  local stat exe f
  [[ "$1" =~ ^[0-9]+$ ]] || return 1
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  read -r -a f <<<"${stat##*) }" # after comm (field 2), which may hold spaces and parentheses
  exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
  printf '%s %s\n' "${f[19]}" "${exe% (deleted)}"
}

# same_process ID ID: two proc_id records name one process (same start time).
same_process() { [[ -n "$1" && "${1%% *}" == "${2%% *}" ]]; }

# ours NAME: succeeds, with PID set, when NAME's pid file names the very
# process start() began. Otherwise fails, with WHY saying what is wrong (empty
# when there is no pid file or its process has exited: nothing to signal).
# Globals, not output: a $(...) subshell would lose WHY.
PID="" WHY=""
ours() {
  local name="$1" p want have
  PID="" WHY=""
  p=$(pid_of "$name") || return 1
  have=$(proc_id "$p") || return 1
  want=$(cat "$PIDS/$name.id" 2>/dev/null) || want=""
  if [[ -z "$want" ]]; then
    WHY="$name: pid $p in $PIDS/$name.pid has no record of the process it named ($PIDS/$name.id): pid $p (${have#* }) is not signalled (if it is the stack's, from an older stack.sh, stop it yourself: kill $p)"
    return 1
  elif ! same_process "$have" "$want"; then
    WHY="$name: pid $p in $PIDS/$name.pid is now another process (${have#* }, start time ${have%% *}; recorded: ${want#* }, start time ${want%% *}): it is not signalled"
    return 1
  fi
  PID="$p"
}
alive() { ours "$1"; }

# forget NAME: removes NAME's pid and identity files.
forget() { rm -f "$PIDS/$1.pid" "$PIDS/$1.id"; }

# start NAME CMD...: runs a daemon in its own session; log, pid and identity in $STATE.
start() {
  local name="$1"; shift
  mkdir -p "$PIDS" "$LOGS"
  setsid "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null &
  local pid=$! want i
  # For a moment the child is this shell, then setsid, before it execs the
  # daemon: record the executable once it is the daemon's (one run through a
  # wrapper script never becomes it: then what runs after a second counts).
  want=$(readlink -f "$(command -v "$1")" 2>/dev/null) || want=""
  for ((i = 0; i < 100; i++)); do
    [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == "$want" ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  forget "$name"
  proc_id "$pid" >"$PIDS/$name.id" || true # exited already: wait_for says so, with the log
  echo "$pid" >"$PIDS/$name.pid"
}

# stop NAME: TERM (then KILL after 10 s) to NAME's process, only if it is the
# one start() began; a stale pid file is reported and removed. Fails when
# nothing was stopped.
stop() {
  local name="$1" p i want have stat
  if ! ours "$name"; then
    [[ -n "$WHY" ]] && warn "$WHY; removed the stale $PIDS/$name.pid"
    forget "$name"
    return 1
  fi
  p="$PID" want=$(cat "$PIDS/$name.id")
  kill -TERM "$p" 2>/dev/null || true
  # Until it has exited: an exiting process has no readable executable yet
  # still runs; a zombie (state Z) has exited; another identity means the
  # pid was released and reused.
  for ((i = 0; i < 100; i++)); do
    stat=$(cat "/proc/$p/stat" 2>/dev/null) || break
    [[ "${stat##*) }" == Z* ]] && break
    if have=$(proc_id "$p"); then same_process "$have" "$want" || break; fi
    sleep 0.1
  done
  same_process "$(proc_id "$p" 2>/dev/null)" "$want" && kill -KILL "$p" 2>/dev/null
  forget "$name"
}
