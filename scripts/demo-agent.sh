#!/bin/bash
# bloomgate agent demo (`make demo-agent`): the demo gateway in network
# namespaces, fed by `bloomgate agent` from a list served over HTTP by a
# local server (build/tests/httpd). Shows the agent fetching the list and
# traffic to it dropped; the list changing on the server and the new entry
# dropped within seconds; the server answering 500 and the filter keeping
# its entries; `check` naming the URL and line; a scrape of /metrics.
# Everything it creates is removed on exit, also on Ctrl-C. Needs root.
set -u
cd "$(dirname "$0")/.." || exit 1

# shellcheck source=scripts/demo-env.sh
source scripts/demo-env.sh
HTTPD=build/tests/httpd
[ -x "$HTTPD" ] || { echo "demo: $HTTPD is missing: run make demo-agent" >&2; exit 1; }

REFRESH=2
METRICS_PORT=9571
OLD=198.51.100.23 NEW=203.0.113.42 OTHER=198.51.100.10

if [ -t 1 ]; then B=$'\e[1m' R=$'\e[31m' G=$'\e[32m' N=$'\e[0m'; else B='' R='' G='' N=''; fi
step() { printf '\n%s== %s%s\n' "$B" "$*" "$N"; }
indent() { sed 's/^/    /'; }
show() {
	printf '  %s# bloomgate %s%s\n' "$B" "$*" "$N"
	bg "$@" 2>&1 | indent
}
matches() { [ "$(bg_check "$1")" = match ]; }
src_state_is() { bg status 2>/dev/null | grep -q "^  list remote ([^)]*): $1,"; }
send_report() { # TAG ADDR...
	local tag=$1 a s r
	shift
	traffic "$tag" 5 200 "$@" || { echo "demo: the traffic run failed" >&2; exit 1; }
	for a in "$@"; do
		s=$(sent "$tag" "$a") r=$(recv "$tag" "$a")
		if [ "$r" -eq 0 ]; then res="${R}dropped${N}"; else res="${G}delivered${N}"; fi
		printf '    %-16s sent %s, received %s: %s\n' "$a" "$s" "$r" "$res"
	done
}

e2e_init
WWW=$E2E_TMP/www
mkdir -p "$WWW"
printf '# a blocklist served over HTTP\n%s\n' "$OLD" >"$WWW/list.txt"
spawn_in "$NS_GW" "$HTTPD" -l "$E2E_TMP/http.log" -c "$E2E_TMP/http.ctl" "$WWW" >"$E2E_TMP/http.port"
wait_until 5 test -s "$E2E_TMP/http.port" || { echo "demo: the HTTP server did not start" >&2; exit 1; }
URL=http://127.0.0.1:$(head -1 "$E2E_TMP/http.port")/list.txt
CFG=$E2E_TMP/bloomgate.yaml
cat >"$CFG" <<EOF
interfaces:
  - name: $IF_GWC
    mode: native
state_dir: $E2E_TMP/state
metrics: 127.0.0.1:$METRICS_PORT
debounce: 200ms
lists:
  - name: remote
    url: $URL
    refresh: ${REFRESH}s
    timeout: 1s
EOF

step "The agent's config (lists served by a local HTTP server in the gateway)"
indent <"$CFG"
step "Validate it and fetch every list, without touching the datapath"
show agent --check --config "$CFG"

step "Start the agent: it attaches to $IF_GWC, fetches $URL and builds the filter"
spawn_in "$NS_GW" "$BG_BIN" agent --config "$CFG" 2>"$E2E_TMP/agent.log"
AGENT=$E2E_LAST_PID
wait_until 15 matches "$OLD" || { echo "demo: the agent did not load the list" >&2; cat "$E2E_TMP/agent.log" >&2; exit 1; }
indent <"$E2E_TMP/agent.log"
show status
send_report t1 "$OLD" "$NEW" "$OTHER"

step "The list changes on the server: $NEW is added"
printf '%s\n%s\n' "$OLD" "$NEW" >"$WWW/list.new" && mv "$WWW/list.new" "$WWW/list.txt"
t0=$SECONDS
wait_until $((2 * REFRESH + 5)) matches "$NEW" ||
	{ echo "demo: the change did not reach the filter" >&2; exit 1; }
echo "    $NEW is filtered $((SECONDS - t0)) s later (the list's refresh is ${REFRESH} s)"
send_report t2 "$OLD" "$NEW" "$OTHER"
show check "$NEW"

step "The server answers HTTP 500: the agent keeps the last good copy"
echo "/list.txt 500" >"$E2E_TMP/http.ctl"
wait_until $((2 * REFRESH + 5)) src_state_is failing ||
	{ echo "demo: the agent did not report the list failing" >&2; exit 1; }
show status
send_report t3 "$OLD" "$NEW" "$OTHER"

step "A scrape of /metrics (a few of the families)"
in_ns "$NS_GW" bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$METRICS_PORT"' &&
	printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' |
	grep -E '^bloomgate_(packets_total|verdicts_total|source_entries|source_fetch_failures_total|source_not_modified_total|filter_keys|filter_generation)[ {]' | indent

step "Stop the agent: the filter stays live (fail-static)"
kill -TERM "$AGENT"
wait_pid "$AGENT" 10
tail -1 "$E2E_TMP/agent.log" | indent
send_report t4 "$OLD" "$OTHER"
