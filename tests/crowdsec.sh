#!/bin/bash
# A private CrowdSec local API (LAPI) for the tests and the bench: the
# packaged engine (Debian's crowdsec 1.4.6) run alone (-no-cs: no
# acquisition, no parsers, no hub download, no central API: nothing
# reaches the network) on a copy of its config whose paths, database and
# logs are all in one directory.
#
#   tests/crowdsec.sh start DIR PORT   makes DIR's config when there is none,
#                                      starts the LAPI on 127.0.0.1:PORT,
#                                      gives cscli its machine credentials;
#                                      prints the LAPI's URL
#   tests/crowdsec.sh bouncer DIR NAME  registers a bouncer; prints its key
#   tests/crowdsec.sh cscli DIR ARGS... cscli on DIR's config
#   tests/crowdsec.sh stop DIR         stops it (its data kept: start again
#                                      resumes with its decisions)
#   tests/crowdsec.sh remove DIR       stops it and removes DIR
#
# DIR/crowdsec.pid holds the engine's pid; DIR/bloomgate-cs marks a DIR
# this script made (remove refuses any other). Errors: one line, exit 1.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib-require.sh
source "$ROOT/scripts/lib-require.sh"
MARK=bloomgate-cs

die() {
	echo "crowdsec.sh: $*" >&2
	exit 1
}

[ $# -ge 2 ] || die "usage: $0 start|bouncer|cscli|stop|remove DIR ..."
cmd=$1 dir=$2
shift 2
require_cmds crowdsec cscli curl

running() { [ -s "$dir/crowdsec.pid" ] && kill -0 "$(cat "$dir/crowdsec.pid")" 2>/dev/null; }

config() { # PORT
	mkdir -p "$dir/data" "$dir/log" "$dir/hub" || die "cannot make $dir"
	touch "$dir/$MARK"
	cp /etc/crowdsec/profiles.yaml /etc/crowdsec/simulation.yaml "$dir/" ||
		die "the packaged config is missing (is crowdsec installed?)"
	echo '{}' >"$dir/hub/.index.json"
	: >"$dir/acquis.yaml"
	# /etc/crowdsec/config.yaml's shape, every path in DIR, no central
	# API (no online_client), no metrics listener
	cat >"$dir/config.yaml" <<-EOF
	common:
	  daemonize: false
	  log_media: file
	  log_level: info
	  log_dir: $dir/log/
	  working_dir: .
	config_paths:
	  config_dir: $dir/
	  data_dir: $dir/data/
	  simulation_path: $dir/simulation.yaml
	  hub_dir: $dir/hub/
	  index_path: $dir/hub/.index.json
	  notification_dir: $dir/notifications/
	  plugin_dir: /usr/lib/crowdsec/plugins/
	crowdsec_service:
	  acquisition_path: $dir/acquis.yaml
	cscli:
	  output: human
	db_config:
	  type: sqlite
	  db_path: $dir/data/crowdsec.db
	  use_wal: true
	  flush:
	    max_items: 5000000
	    max_age: 7d
	api:
	  client:
	    credentials_path: $dir/local_api_credentials.yaml
	  server:
	    listen_uri: 127.0.0.1:$1
	    profiles_path: $dir/profiles.yaml
	    console_path: $dir/console.yaml
	prometheus:
	  enabled: false
	EOF
	echo "$1" >"$dir/port"
}

case $cmd in
start)
	port=${1:-}
	[ -n "$port" ] || die "start: a PORT"
	[ -e "$dir/config.yaml" ] || config "$port"
	port=$(cat "$dir/port")
	if ! running; then
		crowdsec -c "$dir/config.yaml" -no-cs >>"$dir/crowdsec.out" 2>&1 &
		echo $! >"$dir/crowdsec.pid"
		for _ in $(seq 1 250); do
			code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/decisions" 2>/dev/null)
			[ "$code" = 403 ] && break
			running || die "the engine exited: $(tail -n 1 "$dir/crowdsec.out")"
			sleep 0.02
		done
		[ "$code" = 403 ] || die "the local API does not answer on 127.0.0.1:$port"
	fi
	if [ ! -s "$dir/local_api_credentials.yaml" ]; then
		cscli -c "$dir/config.yaml" machines add bloomgate-test --auto \
			-f "$dir/local_api_credentials.yaml" --force >/dev/null 2>&1 ||
			die "cscli machines add failed"
	fi
	echo "http://127.0.0.1:$port/"
	;;
bouncer)
	cscli -c "$dir/config.yaml" bouncers add "${1:?a NAME}" -o raw 2>/dev/null ||
		die "cscli bouncers add failed"
	;;
cscli)
	exec cscli -c "$dir/config.yaml" "$@"
	;;
stop | remove)
	if running; then
		pid=$(cat "$dir/crowdsec.pid")
		kill "$pid"
		for _ in $(seq 1 250); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.02
		done
		kill -9 "$pid" 2>/dev/null
	fi
	rm -f "$dir/crowdsec.pid"
	if [ "$cmd" = remove ] && [ -e "$dir/$MARK" ]; then
		rm -rf "$dir"
	fi
	;;
*) die "unknown command $cmd" ;;
esac
