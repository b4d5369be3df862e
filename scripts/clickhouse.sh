#!/usr/bin/env bash
# A private ClickHouse server for the tests and for trying the collector's ClickHouse store, run as
# the current user in a directory of its own (config, data, logs), listening on 127.0.0.1 only.
#
#   scripts/clickhouse.sh start [DIR]   starts it (once) and prints its HTTP URL on stdout
#   scripts/clickhouse.sh stop [DIR]    ends it; the data stays in DIR
#
# DIR defaults to target/clickhouse. The HTTP and native ports are free ones picked at start.
# Installs Debian's clickhouse-server and clickhouse-client (18.16) when missing, as root.
# `start` fails, showing the end of the server's log, if the server does not answer GET /ping
# within 30 s; it tries three pairs of ports before giving up.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "clickhouse.sh: $*" >&2; }
usage() { say "usage: scripts/clickhouse.sh start|stop [DIR]"; exit 2; }

[ $# -ge 1 ] && [ $# -le 2 ] || usage
command=$1
mkdir -p "${2:-target/clickhouse}"
dir=$(cd "${2:-target/clickhouse}" && pwd) # absolute: the config names it
pidfile=$dir/server.pid
urlfile=$dir/url

# Whether the server this script started in $dir runs. The command line is checked too, so a stale
# pid file never makes us signal another process that got the same pid.
running() {
  [ -f "$pidfile" ] || return 1
  local pid
  pid=$(cat "$pidfile")
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/config.xml"
}

server_binary() {
  command -v clickhouse-server || { [ -x /usr/sbin/clickhouse-server ] && echo /usr/sbin/clickhouse-server; }
}

install() {
  server_binary >/dev/null && return
  if [ "$(id -u)" != 0 ]; then
    say "clickhouse-server is missing: run this as root, or: sudo apt-get install clickhouse-server clickhouse-client"
    exit 1
  fi
  say "installing Debian's clickhouse-server and clickhouse-client"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clickhouse-server clickhouse-client >/dev/null
  server_binary >/dev/null || { say "clickhouse-server is still missing after apt-get install"; exit 1; }
}

# A port nothing listens on now (the server may still lose it to a race: start then tries again).
free_port() {
  local port
  for _ in $(seq 1 100); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  say "found no free port"
  exit 1
}

# Whether GET /ping on port $1 answers "Ok." (bash's /dev/tcp: curl may not be installed).
ping_ok() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET /ping HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    timeout 2 cat <&3 | grep -q '^Ok\.'
  ) 2>/dev/null
}

write_config() {
  local http_port=$1 tcp_port=$2
  mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas" "$dir/log"
  cat >"$dir/config.xml" <<EOF
<?xml version="1.0"?>
<!-- Written by scripts/clickhouse.sh: a private server for tests, loopback only. -->
<yandex>
    <logger>
        <level>information</level>
        <log>$dir/log/server.log</log>
        <errorlog>$dir/log/server.err.log</errorlog>
        <size>10M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$http_port</http_port>
    <tcp_port>$tcp_port</tcp_port>
    <path>$dir/data/</path>
    <tmp_path>$dir/tmp/</tmp_path>
    <user_files_path>$dir/user_files/</user_files_path>
    <format_schema_path>$dir/format_schemas/</format_schema_path>
    <users_config>$dir/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mark_cache_size>67108864</mark_cache_size>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <max_concurrent_queries>100</max_concurrent_queries>
</yandex>
EOF
  cat >"$dir/users.xml" <<'EOF'
<?xml version="1.0"?>
<!-- Written by scripts/clickhouse.sh: the default user, no password, from loopback only. -->
<yandex>
    <profiles>
        <default/>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default/>
    </quotas>
</yandex>
EOF
}

start() {
  if running; then
    cat "$urlfile"
    return
  fi
  install
  local server http_port tcp_port pid
  server=$(server_binary)
  for attempt in 1 2 3; do
    http_port=$(free_port)
    tcp_port=$(free_port)
    [ "$http_port" != "$tcp_port" ] || continue
    write_config "$http_port" "$tcp_port"
    # Its own output goes to a file: whoever captures ours ($(...)) must not wait for the server.
    "$server" --config-file="$dir/config.xml" </dev/null >"$dir/log/stdout.log" 2>&1 &
    pid=$!
    echo "$pid" >"$pidfile"
    for _ in $(seq 1 150); do
      if ping_ok "$http_port"; then
        echo "http://127.0.0.1:$http_port" | tee "$urlfile"
        return
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -9 "$pid" 2>/dev/null || true
      say "the server did not answer /ping within 30 s; the end of its log:"
      tail -n 30 "$dir/log/server.err.log" "$dir/log/stdout.log" >&2 2>/dev/null || true
      rm -f "$pidfile"
      exit 1
    fi
    say "the server exited at start (attempt $attempt; ports $http_port, $tcp_port); the end of its log:"
    tail -n 15 "$dir/log/server.err.log" "$dir/log/stdout.log" >&2 2>/dev/null || true
    rm -f "$pidfile"
  done
  say "the server did not start"
  exit 1
}

stop() {
  if ! running; then
    rm -f "$pidfile" "$urlfile"
    say "no server of $dir is running"
    return
  fi
  local pid
  pid=$(cat "$pidfile")
  kill "$pid"
  for _ in $(seq 1 75); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "the server did not stop within 15 s: killing it"
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile" "$urlfile"
}

case "$command" in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
