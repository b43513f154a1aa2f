#!/bin/sh
# The local stand-in for the postgres image's entrypoint: on an empty data directory, initdb
# with POSTGRES_USER as the superuser and POSTGRES_PASSWORD as its password (password auth
# over TCP from anywhere, as the official image sets up); then PostgreSQL in the foreground.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --pgdata="$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  # The official image also creates a database named after the user (pg_isready -U checks it).
  postgres --single -D "$PGDATA" postgres <<SQL >/dev/null
CREATE DATABASE "$POSTGRES_USER";
SQL
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
