#!/usr/bin/env bash
# The image and compose file, end to end on this machine (`npm run image:test`):
#   build every image (deploy/local/build-images.sh; --no-build to skip), start the stack from
#   empty volumes (up.sh --fresh), then check: the API's /health and /ready, the worker's
#   readiness, the non-root user, a Luma sync against the Luma simulator (a connection, its
#   first run to SUCCESS with 250 events, records read back), the run found in Temporal by
#   Weft's search attributes, and a graceful stop (SIGTERM -> exit 0) of the API and the
#   worker. The stack is taken down at the end unless --keep.
set -euo pipefail
# shellcheck source=deploy/local/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

build=true
keep=false
for arg in "$@"; do
  case "$arg" in
    --no-build) build=false ;;
    --keep) keep=true ;;
    *) echo "usage: $0 [--no-build] [--keep]" >&2 && exit 2 ;;
  esac
done

PROJECT="${WEFT_COMPOSE_PROJECT:-weft-local}"
API="http://127.0.0.1:${WEFT_API_PORT:-3003}"
started=$SECONDS
failures=0
ok() { log "ok   $*"; }
fail() {
  log "FAIL $*"
  failures=$((failures + 1))
}
container() { podman ps -a -q --filter "label=io.podman.compose.project=$PROJECT" --filter "label=com.docker.compose.service=$1" | head -1; }
simulators=()
cleanup() {
  for s in "${simulators[@]}"; do podman rm -f -t 1 "$s" >/dev/null 2>&1 || true; done
  $keep || "$LOCAL_DIR/down.sh" --volumes >/dev/null 2>&1 || true
}
trap cleanup EXIT

$build && "$LOCAL_DIR/build-images.sh" all
WEFT_EGRESS_ALLOW_PROVIDERS=127.0.0.1:3010 "$LOCAL_DIR/up.sh" --fresh
set -a
# shellcheck disable=SC1091
source "$CACHE/compose.env"
set +a
api_id="$(container weft-api)"
worker_id="$(container weft-worker)"

# Probes and the user the processes run as.
[ "$(curl -s -o /dev/null -w '%{http_code}' "$API/health")" = 200 ] && ok "GET /health 200" || fail "GET /health"
ready="$(curl -s -w ' %{http_code}' "$API/ready")"
[ "${ready##* }" = 200 ] && ok "GET /ready 200 ${ready% *}" || fail "GET /ready: $ready"
podman exec "$worker_id" node /app/healthcheck.cjs && ok "worker ready (healthcheck.cjs -> :3004/ready)" || fail "worker readiness"
for id in "$api_id" "$worker_id"; do
  user="$(podman exec "$id" sh -c 'id -u; cat /proc/1/cmdline | tr "\0" " "')"
  [ "$(echo "$user" | head -1)" = 10001 ] && ok "runs as uid 10001, PID 1: $(echo "$user" | tail -1)" || fail "user: $user"
done

# The Luma simulator on the loopback of the API (which checks a new key) and of the worker
# (which syncs), seeded alike, as `npm start -- --sandbox` runs it.
simulator='const { createLumaSimulator } = require("/app/dist/sandbox/luma");
const sim = createLumaSimulator({ seed: 1, eventCount: 250 });
sim.start(3010).then((url) => console.log("luma simulator", url));
process.on("SIGTERM", () => sim.stop().then(() => process.exit(0)));'
for target in "$api_id" "$worker_id"; do
  name="$PROJECT-luma-$(podman inspect -f '{{.Name}}' "$target" | tr -c 'a-zA-Z0-9_.\n-' '-')"
  # podman-compose puts the services in a pod, and only a container of that pod may join one's network.
  podman run -d --rm --name "$name" --pod "$(podman inspect -f '{{.Pod}}' "$target")" --network "container:$target" \
    --no-healthcheck --entrypoint node localhost/weft:local -e "$simulator" >/dev/null
  simulators+=("$name")
done
sleep 2

auth=(-H "Authorization: Bearer $WEFT_DEV_SECRET_KEY" -H 'Content-Type: application/json')
out="$(curl -s -w ' %{http_code}' -X POST "$API/integrations" "${auth[@]}" \
  -d '{"unique_key":"luma","provider":"luma","provider_overrides":{"base_url":"http://127.0.0.1:3010"}}')"
[[ "${out##* }" =~ ^20[01]$ ]] && ok "integration luma created in dev" || fail "POST /integrations: $out"
out="$(curl -s -w ' %{http_code}' -X POST "$API/connections" "${auth[@]}" \
  -d '{"provider_config_key":"luma","connection_id":"demo-user","credentials":{"type":"API_KEY","apiKey":"sandbox-luma-api-key"}}')"
[[ "${out##* }" =~ ^20[01]$ ]] && ok "connection demo-user created (key checked against the simulator)" || fail "POST /connections: $out"

sync_started=$SECONDS
status=''
while [ $((SECONDS - sync_started)) -lt 120 ]; do
  status="$(curl -s "$API/sync/status?provider_config_key=luma&syncs=list-events&connection_id=demo-user" "${auth[@]}")"
  echo "$status" | grep -qE '"status":"(SUCCESS|ERROR)"' && break
  sleep 1
done
if echo "$status" | grep -q '"status":"SUCCESS"' && echo "$status" | grep -q '"added":250'; then
  ok "first sync run SUCCESS in $((SECONDS - sync_started)) s: $(echo "$status" | grep -o '"latestResult":{[^}]*}}')"
else
  fail "sync status: $status"
fi
records="$(curl -s "$API/records?model=CalendarEvent&limit=5" "${auth[@]}" -H 'Connection-Id: demo-user' -H 'Provider-Config-Key: luma')"
count="$(echo "$records" | grep -o '"_weft_metadata"' | wc -l)"
[ "$count" = 5 ] && ok "GET /records: 5 CalendarEvent records" || fail "records: ${records:0:300}"

# The run, found in Temporal's (PostgreSQL) visibility by the search attributes weft setup registered.
runs="$(podman exec "$(container temporal)" temporal workflow list --address 127.0.0.1:7233 \
  --query 'WeftIntegration="luma" AND WeftConnectionId="demo-user" AND WeftSyncName="list-events"' 2>&1 || true)"
echo "$runs" | grep -q 'Completed' && ok "temporal workflow list by Weft's search attributes: $(echo "$runs" | grep -c Completed) completed run(s)" ||
  fail "workflow list: $runs"

# SIGTERM: each process stops by itself (exit 0), well inside compose's 60 s grace period.
for service in weft-worker weft-api; do
  id="$(container "$service")"
  t0=$(date +%s%N)
  podman stop -t 60 "$id" >/dev/null
  ms=$((($(date +%s%N) - t0) / 1000000))
  code="$(podman inspect -f '{{.State.ExitCode}}' "$id")"
  [ "$code" = 0 ] && ok "$service stopped on SIGTERM in $ms ms, exit 0" || fail "$service exit $code after $ms ms: $(podman logs --tail 5 "$id" 2>&1)"
done

log "$failures failure(s) in $((SECONDS - started)) s"
[ "$failures" = 0 ]
