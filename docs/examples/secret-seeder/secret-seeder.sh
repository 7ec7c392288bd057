#!/bin/sh
# A second namespace initializer, after Furnish's own (docs/guide/initializers.md). Run as
# the ServiceAccount secret-seeder/seeder once a namespace's first pending initializer is
# `secret-seeder`: it puts a Secret into the namespace, then removes itself from the namespace's
# furnish.dev/initializers annotation. Until then nobody but it (and the system controllers) may
# write into the namespace; when it was the last, the namespace turns furnish.dev/phase=ready.
#
#   secret-seeder.sh NAMESPACE
#
# KUBECTL overrides the kubectl command (default `kubectl`, with the pod's ServiceAccount).
set -eu
ns=${1:?usage: secret-seeder.sh NAMESPACE}
me=secret-seeder
kubectl=${KUBECTL:-kubectl}

# Idempotent: a rerun after a crash finds the Secret already there.
$kubectl -n "$ns" create secret generic app-credentials --from-literal=token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" \
  || $kubectl -n "$ns" get secret app-credentials >/dev/null

# Remove ourselves: the list and its resourceVersion are read together and written back with that
# resourceVersion, so a concurrent change makes this fail (retry) instead of being overwritten.
state=$($kubectl get namespace "$ns" -o jsonpath='{.metadata.resourceVersion} {.metadata.annotations.furnish\.dev/initializers}')
rv=${state%% *}
rest=$(printf '%s\n' "${state#* }" | tr ',' '\n' | grep -vx "$me" | paste -sd, - || true)
$kubectl annotate namespace "$ns" --overwrite --resource-version="$rv" "furnish.dev/initializers=$rest"
