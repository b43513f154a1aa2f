# shellcheck shell=bash disable=SC2034
# Sourced by the scripts in deploy/local/: where the local images' inputs are kept, and the
# container engine settings this kind of machine needs.
#
# - Cache: ${WEFT_IMAGE_CACHE:-~/.cache/weft/image} holds the debootstrap'd Debian root, the
#   build contexts, the podman-compose virtualenv and a containers.conf.
# - containers.conf: runc, because crun 1.8 stops at "cgroups in hybrid mode not supported"
#   on a cgroup v1 host with a cgroup2 mount beside it; explicit ulimits no higher than this
#   process's hard limits, because podman asks for nofile=1048576 (and its own nproc is
#   lowered to 32768) and, without CAP_SYS_RESOURCE, "setrlimit RLIMIT_NOFILE: Operation not
#   permitted". Set CONTAINERS_CONF yourself to use your own.
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LOCAL_DIR="$REPO/deploy/local"
CACHE="${WEFT_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/weft/image}"
BIN_CACHE="${WEFT_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/weft/bin}"
TEMPORAL_VERSION=1.29.1
mkdir -p "$CACHE"

if [ -z "${CONTAINERS_CONF:-}" ]; then
  nofile="$(ulimit -Hn)"
  nproc="$(ulimit -Hu)"
  [ "$nofile" = unlimited ] && nofile=1048576
  { [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
  cat >"$CACHE/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "runc"
CONF
  export CONTAINERS_CONF="$CACHE/containers.conf"
fi

PODMAN_COMPOSE="$CACHE/venv/bin/podman-compose"

log() { printf '[image %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
