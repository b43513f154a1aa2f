#!/usr/bin/env bash
# Builds every image deploy/compose.local.yaml runs, without pulling anything from a container
# registry (this machine can reach Debian's mirror, npm and the Go module proxy, but no image
# registry):
#
#   localhost/weft-local/debian:bookworm   debootstrap --variant=minbase bookworm, imported
#   localhost/weft-local/node:20-bookworm  + this machine's Node.js (>= 20.19), npm and CA bundle
#   localhost/weft-local/postgres:15       + Debian's postgresql-15 (stands in for postgres:16)
#   localhost/weft-local/temporal:1.29.1   + temporal-server, temporal-sql-tool, schema, temporal CLI
#                                            (stands in for temporalio/server and temporalio/admin-tools)
#   localhost/weft-local/ferretdb:1.24.2   + Weft's FerretDB (stands in for mongo:7)
#   localhost/weft:local                   deploy/Containerfile on the local Node.js image
#
# Usage: deploy/local/build-images.sh [--rebuild] [base|weft|all]   (default: all; base images
# that exist are kept unless --rebuild). Needs root, podman, runc and debootstrap
# (apt-get install -y podman runc debootstrap), Go for temporal-sql-tool, and the binaries
# of `npm run infra:build` (temporal, temporal-server, ferretdb in ~/.cache/weft/bin).
set -euo pipefail
# shellcheck source=deploy/local/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

rebuild=false
what=all
for arg in "$@"; do
  case "$arg" in
    --rebuild) rebuild=true ;;
    base | weft | all) what="$arg" ;;
    *) echo "usage: $0 [--rebuild] [base|weft|all]" >&2 && exit 2 ;;
  esac
done

for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null || { echo "$tool not found: apt-get install -y podman runc debootstrap" >&2 && exit 1; }
done

wanted() { $rebuild || ! podman image exists "$1"; }
timed() {
  local started=$SECONDS
  "$@"
  log "  ($((SECONDS - started)) s)"
}
binary() { # name, explicit env var
  local explicit="${!2:-}"
  local file="${explicit:-$BIN_CACHE/$1}"
  [ -x "$file" ] || { echo "no $1 at $file: run \`npm run infra:build\` (or set $2)" >&2 && exit 1; }
  echo "$file"
}

debian_image() {
  local image=localhost/weft-local/debian:bookworm rootfs="$CACHE/rootfs-debian"
  wanted "$image" || return 0
  if [ ! -x "$rootfs/bin/sh" ]; then
    log "debootstrap bookworm into $rootfs"
    rm -rf "$rootfs.tmp"
    debootstrap --variant=minbase bookworm "$rootfs.tmp" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$CACHE/debootstrap.log"
    mv "$rootfs.tmp" "$rootfs"
  fi
  log "import $image"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$image" >/dev/null
}

node_image() {
  local image=localhost/weft-local/node:20-bookworm ctx="$CACHE/ctx/node" node npm_dir
  wanted "$image" || return 0
  node="$(command -v node)"
  "$node" -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a===20&&b>=19?0:1)' ||
    { echo "the image takes this machine's Node.js, which must be 20.x >= 20.19 (found $("$node" --version))" >&2 && exit 1; }
  npm_dir="$(npm root -g)/npm"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp "$(readlink -f "$node")" "$ctx/node"
  cp -r "$npm_dir" "$ctx/npm"
  cp "${WEFT_IMAGE_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "$ctx/ca-certificates.crt"
  log "build $image (Node.js $("$node" --version))"
  podman build -q -f "$LOCAL_DIR/node.Containerfile" -t "$image" "$ctx" >/dev/null
}

postgres_image() {
  local image=localhost/weft-local/postgres:15
  wanted "$image" || return 0
  log "build $image (apt-get install postgresql-15)"
  podman build -q -f "$LOCAL_DIR/postgres.Containerfile" -t "$image" "$LOCAL_DIR" >/dev/null
}

ferretdb_image() {
  local image=localhost/weft-local/ferretdb:1.24.2 ctx="$CACHE/ctx/ferretdb"
  wanted "$image" || return 0
  rm -rf "$ctx" && mkdir -p "$ctx"
  local ferretdb
  ferretdb="$(binary ferretdb WEFT_FERRETDB_BIN)"
  cp "$ferretdb" "$ctx/ferretdb"
  log "build $image ($("$ctx/ferretdb" --version | head -1))"
  podman build -q -f "$LOCAL_DIR/ferretdb.Containerfile" -t "$image" "$ctx" >/dev/null
}

temporal_image() {
  local image="localhost/weft-local/temporal:$TEMPORAL_VERSION" ctx="$CACHE/ctx/temporal" gobin="$CACHE/go-bin" modcache
  wanted "$image" || return 0
  if [ ! -x "$gobin/sql" ]; then
    log "go install go.temporal.io/server/cmd/tools/sql@v$TEMPORAL_VERSION (temporal-sql-tool)"
    GOBIN="$gobin" go install "go.temporal.io/server/cmd/tools/sql@v$TEMPORAL_VERSION"
  fi
  modcache="$(go env GOMODCACHE)"
  rm -rf "$ctx" && mkdir -p "$ctx/bin" "$ctx/schema"
  local server cli
  server="$(binary temporal-server WEFT_TEMPORAL_SERVER_BIN)"
  cli="$(binary temporal WEFT_TEMPORAL_BIN)"
  cp "$server" "$ctx/bin/temporal-server"
  cp "$cli" "$ctx/bin/temporal"
  cp "$gobin/sql" "$ctx/bin/temporal-sql-tool"
  cp -r "$modcache/go.temporal.io/server@v$TEMPORAL_VERSION/schema/postgresql" "$ctx/schema/postgresql"
  chmod -R u+w "$ctx/schema"
  cp "$LOCAL_DIR/temporal-config.yaml.tmpl" "$ctx/temporal-config.yaml"
  cp "$LOCAL_DIR/temporal-entrypoint.sh" "$ctx/"
  log "build $image ($("$ctx/bin/temporal-server" --version))"
  podman build -q -f "$LOCAL_DIR/temporal.Containerfile" -t "$image" "$ctx" >/dev/null
}

weft_image() {
  log "build localhost/weft:local (deploy/Containerfile, NODE_IMAGE=localhost/weft-local/node:20-bookworm)"
  # --format docker: the OCI image format has no HEALTHCHECK (podman drops it with a warning).
  podman build --format docker -f "$REPO/deploy/Containerfile" --build-arg NODE_IMAGE=localhost/weft-local/node:20-bookworm -t localhost/weft:local "$REPO"
}

if [ "$what" != weft ]; then
  timed debian_image
  timed node_image
  timed postgres_image
  timed ferretdb_image
  timed temporal_image
fi
if [ "$what" != base ]; then timed weft_image; fi
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep '^localhost/weft'
