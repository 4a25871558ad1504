# lib.sh — what the harnesses in scripts/ecosystem/*/run.sh share; sourced after they define
# `die` (message, exit 2).

# pack_packages DEST PKG... — `npm pack` of packages/<PKG> of $HOPPER_ROOT into DEST (built first).
pack_packages() {
  local dest=$1 p
  shift
  for p in "$@"; do
    [ -d "$HOPPER_ROOT/packages/$p/dist" ] || die "packages/$p/dist missing: run npm run build in $HOPPER_ROOT"
    (cd "$HOPPER_ROOT/packages/$p" && npm pack --silent --pack-destination "$dest" >/dev/null) || die "npm pack packages/$p failed"
  done
}

# start_private_redis PORT LOGFILE — a throwaway redis-server (no persistence) on 127.0.0.1:PORT,
# stopped when the script exits; refuses a port where something already answers.
REDIS_PID=""
stop_private_redis() { [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null; }
start_private_redis() {
  local port=$1 logfile=$2
  command -v redis-server >/dev/null || die "redis-server not found"
  trap stop_private_redis EXIT
  if redis-cli -p "$port" ping >/dev/null 2>&1; then die "something already answers on port $port: choose another REDIS_PORT"; fi
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --logfile "$logfile" &
  REDIS_PID=$!
  for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$port" ping >/dev/null 2>&1 || die "redis-server did not start on $port"
}
