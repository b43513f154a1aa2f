#!/usr/bin/env bash
# Stops and removes what deploy/local/up.sh started; `--volumes` drops the data too.
set -euo pipefail
# shellcheck source=deploy/local/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
set -a
# shellcheck disable=SC1091
[ -f "$CACHE/compose.env" ] && source "$CACHE/compose.env"
set +a
args=()
[ "${1:-}" = --volumes ] && args=(-v)
cd "$REPO/deploy" && "$PODMAN_COMPOSE" -p "${WEFT_COMPOSE_PROJECT:-weft-local}" -f compose.yaml -f compose.local.yaml down "${args[@]}"
