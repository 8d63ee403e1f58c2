#!/bin/bash
# A private PostgreSQL 15 cluster for the tests of the fleet store
# (tests/unit/test_fleetdb.c): its data, its log and its socket all in one
# directory, no TCP, trust authentication. It never touches the machine's
# own clusters (no pg_ctlcluster, nothing under /var/lib/postgresql or
# /var/run/postgresql): initdb and pg_ctl are called with DIR only.
#
#   tests/pg.sh start DIR      creates the cluster in DIR when there is none
#                              (DIR made when missing), starts it when it
#                              is not running, creates the database
#                              bloomgate when missing; prints one line, the
#                              connection string
#   tests/pg.sh stop DIR       stops it (fast: sessions are cut) and
#                              removes DIR
#   tests/pg.sh stop-keep DIR  stops it and keeps DIR: the database gone
#                              away, to come back with its data by start
#                              or restart
#   tests/pg.sh restart DIR    stops it when it runs, starts it; prints
#                              the connection string
#   tests/pg.sh url DIR        prints the connection string
#
# Layout: DIR/data (the cluster), DIR/postgres.log, DIR/.s.PGSQL.5432 (the
# socket: the port only names it, so clusters in other directories on
# the same port do not clash), DIR/bloomgate-pg (the mark that lets stop
# remove DIR: a mistyped `stop /` removes nothing).
#
# As root (the tests run as root) the cluster belongs to the unprivileged
# user postgres (the server refuses to run as root): DIR is chowned to it
# and initdb and pg_ctl run under runuser. As another user, as that user.
# Everything said goes to stderr, so that stdout is the connection string
# alone; an error is one line and exit 1.
#
# One command at a time on a DIR (flock on DIR itself): a stop waits for
# a start under way. The tests' clean-up after a crash stops the cluster
# while the start the crashed test ran may still be going on; without the
# lock the start would win and leave a server running.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib-require.sh
source "$ROOT/scripts/lib-require.sh"

PGBIN=/usr/lib/postgresql/15/bin
PORT=5432
DB=bloomgate
MARK=bloomgate-pg
# The server is up within a second; a loaded machine (two cores, other
# suites) gets a minute before pg_ctl gives up.
WAIT=60

die() {
	echo "pg.sh: $*" >&2
	exit 1
}

usage() {
	echo "usage: tests/pg.sh start|stop|stop-keep|restart|url DIR" >&2
	exit 2
}

[ $# -eq 2 ] || usage
cmd=$1
[ -n "$2" ] || usage
# The caller's PG* variables must not steer psql (or the server's port)
# to another cluster.
unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGPASSWORD PGSERVICE \
	PGSERVICEFILE PGDATA PGOPTIONS PGSSLMODE

require_cmds "$PGBIN/initdb" "$PGBIN/pg_ctl" psql runuser id flock

if [ "$(id -u)" -eq 0 ]; then
	id postgres >/dev/null 2>&1 ||
		die "no user postgres on this system (the cluster cannot run as root; it comes with the Debian package postgresql-15)"
	as_pg() { runuser -u postgres -- "$@" 9<&-; }
else
	as_pg() { "$@" 9<&-; }
fi

case $cmd in
start | restart) mkdir -p -- "$2" || die "cannot create $2" ;;
stop | stop-keep | url) [ -d "$2" ] || die "$2: no such directory" ;;
*) usage ;;
esac
dir=$(cd -- "$2" && pwd) || die "$2: not accessible"
# fd 9 is closed for every command run below (as_pg, psql): the server
# would inherit it and hold the lock for its life.
exec 9<"$dir" || die "$dir: not accessible"
flock 9 || die "$dir: cannot lock it"
data=$dir/data
log=$dir/postgres.log
# sun_path holds 108 bytes, NUL included
[ $((${#dir} + ${#PORT} + 10)) -lt 108 ] ||
	die "$dir: too long for a socket path (the socket is $dir/.s.PGSQL.$PORT)"
# The postgres user may not enter the caller's working directory
# (/root/...): initdb and pg_ctl then complain, so they run from DIR.
cd "$dir" || die "$dir: not accessible"

run_psql() { psql "$@" 9<&-; }

url() {
	echo "postgresql:///$DB?host=$dir&port=$PORT&user=postgres"
}

running() {
	as_pg "$PGBIN/pg_ctl" -D "$data" status >/dev/null 2>&1
}

stop() {
	[ -f "$data/PG_VERSION" ] || return 0
	running || return 0
	as_pg "$PGBIN/pg_ctl" -D "$data" -m fast -w -t "$WAIT" stop >/dev/null ||
		die "pg_ctl stop failed in $dir (see $log)"
}

init() {
	[ -f "$data/PG_VERSION" ] && return 0
	: >"$dir/$MARK" || die "cannot write in $dir"
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres: "$dir" || die "cannot chown $dir to postgres"
	fi
	chmod 0700 "$dir"
	# --no-sync and fsync=off: a test cluster, thrown away after the run,
	# need not survive a power cut. listen_addresses empty: no TCP at
	# all, the socket in DIR is the one way in.
	if ! out=$(as_pg "$PGBIN/initdb" -D "$data" -U postgres --auth=trust \
		--encoding=UTF8 --locale=C --no-sync 2>&1); then
		die "initdb failed in $dir: $(echo "$out" | grep -v '^$' | tail -n1)"
	fi
	cat >>"$data/postgresql.conf" <<-EOF || die "cannot configure $data"

		# tests/pg.sh
		listen_addresses = ''
		unix_socket_directories = '$dir'
		port = $PORT
		fsync = off
		synchronous_commit = off
		full_page_writes = off
		max_connections = ${PG_MAX_CONNECTIONS:-300}
	EOF
}

start() {
	init
	if ! running; then
		as_pg "$PGBIN/pg_ctl" -D "$data" -l "$log" -w -t "$WAIT" start >/dev/null ||
			die "pg_ctl start failed in $dir: $(tail -n1 "$log" 2>/dev/null)"
	fi
	local q=(run_psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$dir" -p "$PORT" -U postgres -d postgres)
	local have
	have=$("${q[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '$DB'") ||
		die "psql failed in $dir"
	if [ "$have" != 1 ]; then
		"${q[@]}" -c "CREATE DATABASE $DB" || die "cannot create the database $DB in $dir"
	fi
	url
}

case $cmd in
start) start ;;
restart)
	stop
	start
	;;
stop-keep) stop ;;
stop)
	stop
	[ -f "$dir/$MARK" ] || die "$dir: not made by tests/pg.sh (no $MARK), left as it is"
	rm -rf -- "$dir" || die "cannot remove $dir"
	;;
url) url ;;
esac
