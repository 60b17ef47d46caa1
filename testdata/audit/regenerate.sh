#!/usr/bin/env bash
# Regenerates kube-events.jsonl: runs session.sh against the reference
# kube-apiserver (../shared/peer's build, started by its start.sh with
# policy.yaml) and keeps its audit events, their times, IDs and source
# addresses left out. Needs the peer binaries (../shared/peer/build.sh)
# and jq.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# The peer scripts sit beside the main checkout: ../shared/peer.
peer=${PEER_SCRIPTS:-$(git -C "$here" rev-parse --path-format=absolute --git-common-dir)/../../shared/peer}
work=$(mktemp -d)
trap 'PEER_DIR=$work "$peer/stop.sh" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
shared=${PEER_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/devplane-peer/bin}
ln -s "$shared" "$work/bin"
export PEER_DIR=$work PEER_PORT=${PEER_PORT:-6543}
PEER_EXTRA="--audit-policy-file=$here/policy.yaml --audit-log-path=$work/audit.log" "$peer/start.sh"
KUBECONFIG=$work/run/kubeconfig "$here/session.sh"
sleep 1
# Values that differ from run to run are dropped; for uid, resourceVersion
# and the bodies only whether they are there is kept.
jq -c 'del(.auditID, .requestReceivedTimestamp, .stageTimestamp, .sourceIPs)
       | if .objectRef.uid then .objectRef.uid = "<set>" else . end
       | if .objectRef.resourceVersion then .objectRef.resourceVersion = "<set>" else . end
       | if .requestObject then .requestObject = "<set>" else . end
       | if .responseObject then .responseObject = "<set>" else . end' \
  "$work/audit.log" > "$here/kube-events.jsonl"
wc -l "$here/kube-events.jsonl"
