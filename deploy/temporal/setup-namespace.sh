#!/bin/sh
# Creates the namespace Weft uses, with the `temporal` CLI of temporalio/admin-tools, and waits
# until the frontend serves it. Safe to run again: an existing namespace is left as it is.
set -eu
: "${TEMPORAL_ADDRESS:?}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
RETENTION="${TEMPORAL_NAMESPACE_RETENTION:-72h}"

until temporal operator cluster health >/dev/null 2>&1; do
  echo "waiting for Temporal at $TEMPORAL_ADDRESS"
  sleep 2
done

if temporal operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1; then
  echo "namespace $NAMESPACE exists"
else
  temporal operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION"
fi

# A namespace just created reaches the frontend's namespace cache within ~10 s; `weft setup`
# (next) registers Weft's search attributes in it.
tries=0
until temporal operator search-attribute list --namespace "$NAMESPACE" >/dev/null 2>&1; do
  tries=$((tries + 1))
  [ "$tries" -lt 30 ] || { echo "namespace $NAMESPACE not served after 60 s" >&2 && exit 1; }
  sleep 2
done
echo "namespace $NAMESPACE ready"
