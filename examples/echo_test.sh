#!/bin/sh
# examples/echo_test.sh <echo_server> <echo_client> -- the echo example pair end to end (CTest):
# a server on a free loopback port serving 8 connections, a client making 8 x 200 round trips.
set -eu
server=$1
client=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$server" 0 8 60 >"$out" &
pid=$!
port=""
i=0
while [ -z "$port" ] && [ $i -lt 300 ]; do
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$out")
    [ -n "$port" ] || sleep 0.1
    i=$((i + 1))
done
if [ -z "$port" ]; then
    echo "echo_test: the server printed no port"; kill "$pid" 2>/dev/null || true; exit 1
fi
"$client" "$port" 8 200 64 30
wait "$pid"
cat "$out"
grep -q "^served 8 connections, 102400 bytes$" "$out"
