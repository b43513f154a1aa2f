#!/bin/sh
# Creates Temporal's two PostgreSQL databases (temporal, temporal_visibility) and brings their
# schemas to the version of the temporal-sql-tool in this image (temporalio/admin-tools).
# Safe to run again: an existing database is kept, update-schema applies only what is missing.
set -eu
: "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${POSTGRES_PWD:?}"
DB_PORT="${DB_PORT:-5432}"
SCHEMA_DIR="${SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}"
export SQL_PASSWORD="$POSTGRES_PWD"

sql() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"; }

for db in temporal:temporal temporal_visibility:visibility; do
  name="${db%%:*}"
  schema="${db#*:}"
  # `create` fails on an existing database; the schema steps below tell a real failure apart.
  sql --db "$name" create 2>/dev/null || echo "database $name exists"
  # setup-schema -v 0.0 creates the schema_version table; on a set-up database it is a no-op error.
  sql --db "$name" setup-schema -v 0.0 2>/dev/null || true
  sql --db "$name" update-schema -d "$SCHEMA_DIR/$schema/versioned"
done
echo "temporal schemas ready"
