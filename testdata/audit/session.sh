#!/bin/sh
# The kubectl session both servers are audited on (KUBECONFIG names the
# server; its user is "admin", in system:masters). Each step is one or a
# few sequential requests; failures are part of the session.
k() { kubectl --cache-dir "$CACHE" "$@" >/dev/null 2>&1 || true; }
CACHE=$(mktemp -d)
trap 'rm -rf "$CACHE"' EXIT
k create namespace audit-demo
k -n audit-demo create configmap cm1 --from-literal=a=1
k -n audit-demo get configmap cm1 -o yaml
k -n audit-demo get configmaps
k -n audit-demo patch configmap cm1 -p '{"data":{"a":"2"}}'
k -n audit-demo label configmap cm1 tier=web
k -n audit-demo get configmap missing
k -n audit-demo create configmap cm1 --from-literal=a=3
k --as=bob -n audit-demo get configmaps
k --as=system:serviceaccount:audit-demo:default -n audit-demo get secrets
k -n audit-demo create serviceaccount robot
k -n audit-demo create token robot
k -n audit-demo get --raw '/api/v1/namespaces/audit-demo/configmaps?watch=true&timeoutSeconds=1'
k -n audit-demo scale --replicas=2 deployment/none
k -n audit-demo delete configmap cm1
k delete namespace audit-demo --wait=false
