#!/bin/sh
# The local stand-in for temporalio/server's entrypoint: the server renders its own config
# (temporal-config.yaml.tmpl, "enable-template"); listening on every address, it must tell the other
# services of the cluster (membership) one address of this container they can reach.
set -eu
if [ "${BIND_ON_IP:-127.0.0.1}" = "0.0.0.0" ] && [ -z "${TEMPORAL_BROADCAST_ADDRESS:-}" ]; then
  TEMPORAL_BROADCAST_ADDRESS="$(hostname -i | cut -d' ' -f1)"
  export TEMPORAL_BROADCAST_ADDRESS
fi
exec temporal-server --root / --config /etc/temporal/config --env docker start
