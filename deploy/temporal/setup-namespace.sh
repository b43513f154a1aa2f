#!/bin/sh
# Creates the namespace Weft uses and Weft's search attributes (Keyword) in it, with the
# `temporal` CLI of temporalio/admin-tools. Safe to run again: what exists is left as it is.
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

existing="$(temporal operator search-attribute list --namespace "$NAMESPACE")"
for name in WeftEnvironment WeftIntegration WeftConnectionId WeftSyncName WeftOperation; do
  if printf '%s\n' "$existing" | grep -qw "$name"; then
    echo "search attribute $name exists"
  else
    temporal operator search-attribute create --namespace "$NAMESPACE" --name "$name" --type Keyword
  fi
done
echo "namespace $NAMESPACE ready"
