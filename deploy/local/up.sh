#!/usr/bin/env bash
# Starts deploy/compose.yaml with deploy/compose.local.yaml on this machine (podman and
# podman-compose), in dependency order, and waits until `weft api` answers /health.
#
#   deploy/local/build-images.sh     # once, and after changing Weft: the images
#   deploy/local/up.sh               # start (prints the API's URL); add --fresh to drop the volumes first
#   deploy/local/down.sh             # stop and remove the containers (keeps the volumes)
#
# Why not one `podman-compose up`: podman 4.3 (Debian bookworm) runs health checks from
# systemd timers, and there is no systemd here, so no container ever turns healthy by itself,
# and podman-compose ignores `condition: service_healthy` below podman 4.6. This script runs
# each service's health check itself (`podman healthcheck run`) before starting what depends
# on it; `service_completed_successfully` is checked by the one-shot's exit code.
#
# Secrets (WEFT_ENCRYPTION_KEY, TEMPORAL_DB_PASSWORD, MONGODB_PASSWORD, and the dev and prod
# secret keys `weft setup` gives the environments) are generated once into
# $WEFT_IMAGE_CACHE/compose.env and reused, so the volumes stay readable.
set -euo pipefail
# shellcheck source=deploy/local/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

fresh=false
[ "${1:-}" = --fresh ] && fresh=true

if [ ! -x "$PODMAN_COMPOSE" ]; then
  log "podman-compose 1.6.0 into $CACHE/venv (PyPI)"
  python3 -m venv "$CACHE/venv"
  "$CACHE/venv/bin/pip" install -q podman-compose==1.6.0
fi

if [ ! -f "$CACHE/compose.env" ]; then
  {
    echo "WEFT_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)"
    echo "TEMPORAL_DB_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')"
    echo "MONGODB_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')"
    echo "WEFT_DEV_SECRET_KEY=weft_dev_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    echo "WEFT_PROD_SECRET_KEY=weft_prod_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  } >"$CACHE/compose.env"
  chmod 600 "$CACHE/compose.env"
fi
set -a
# shellcheck disable=SC1091
source "$CACHE/compose.env"
set +a

PROJECT="${WEFT_COMPOSE_PROJECT:-weft-local}"
compose() { (cd "$REPO/deploy" && "$PODMAN_COMPOSE" -p "$PROJECT" -f compose.yaml -f compose.local.yaml "$@"); }
container() { podman ps -a -q --filter "label=io.podman.compose.project=$PROJECT" --filter "label=com.docker.compose.service=$1" | head -1; }

wait_healthy() { # service, seconds
  local id deadline=$((SECONDS + $2))
  id="$(container "$1")"
  [ -n "$id" ] || { echo "no container for $1" >&2 && return 1; }
  until podman healthcheck run "$id" >/dev/null 2>&1; do
    if [ "$(podman inspect -f '{{.State.Running}}' "$id")" != true ] || [ $SECONDS -ge $deadline ]; then
      echo "$1 did not become healthy; its log:" >&2
      podman logs --tail 40 "$id" >&2
      return 1
    fi
    sleep 1
  done
}

wait_completed() { # service
  local id code
  id="$(container "$1")"
  code="$(podman wait "$id")"
  if [ "$code" != 0 ]; then
    echo "$1 exited with $code; its log:" >&2
    podman logs --tail 40 "$id" >&2
    return 1
  fi
}

step() {
  local started=$SECONDS
  "$@"
  log "  ($((SECONDS - started)) s)"
}

up() { compose up -d --no-deps "$@" >/dev/null 2>"$CACHE/compose-up.log" || { cat "$CACHE/compose-up.log" >&2 && return 1; }; }

if $fresh; then
  log "down, volumes dropped"
  compose down -v >/dev/null 2>&1 || true
fi

started=$SECONDS
log "postgresql, mongodb (FerretDB)"
step up postgresql mongodb
step wait_healthy postgresql 120
step wait_healthy mongodb 60
log "temporal-schema (temporal-sql-tool)"
step up temporal-schema
step wait_completed temporal-schema
log "temporal"
step up temporal
step wait_healthy temporal 120
log "temporal-namespace (namespace + search attributes)"
step up temporal-namespace
step wait_completed temporal-namespace
log "weft-setup (indexes, search attributes, environments)"
step up weft-setup
step wait_completed weft-setup
log "weft-api, weft-worker"
step up weft-api weft-worker
step wait_healthy weft-api 120
step wait_healthy weft-worker 60
log "up in $((SECONDS - started)) s; API: http://127.0.0.1:${WEFT_API_PORT:-3003} (secrets, WEFT_DEV_SECRET_KEY among them, in $CACHE/compose.env)"
