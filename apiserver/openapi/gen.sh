#!/usr/bin/env bash
# Regenerates zz_generated.openapi.go from the k8s.io/* API packages in go.mod
# with kube-openapi's openapi-gen (pinned to the kube-openapi version in go.mod),
# then rewrites its definition map to build definitions lazily (internal/lazify).
# Run from anywhere: go generate ./apiserver/openapi
set -euo pipefail
cd "$(dirname "$0")"

kube_openapi_version=$(go list -m -f '{{.Version}}' k8s.io/kube-openapi)

input_packages=(
	k8s.io/api/core/v1
	k8s.io/api/apps/v1
	k8s.io/api/batch/v1
	k8s.io/api/autoscaling/v1
	k8s.io/api/autoscaling/v2
	k8s.io/api/coordination/v1
	k8s.io/api/events/v1
	k8s.io/api/discovery/v1
	k8s.io/api/networking/v1
	k8s.io/api/policy/v1
	k8s.io/api/rbac/v1
	k8s.io/api/storage/v1
	k8s.io/api/scheduling/v1
	# batch/v1 Job refers to workload scheduling types that only exist here.
	k8s.io/api/scheduling/v1alpha3
	k8s.io/api/node/v1
	k8s.io/api/admissionregistration/v1
	k8s.io/api/resource/v1
	k8s.io/api/flowcontrol/v1
	k8s.io/api/storagemigration/v1
	k8s.io/api/certificates/v1
	k8s.io/api/authentication/v1
	k8s.io/api/authorization/v1
	k8s.io/apimachinery/pkg/apis/meta/v1
	k8s.io/apimachinery/pkg/runtime
	k8s.io/apimachinery/pkg/version
	k8s.io/apimachinery/pkg/api/resource
	k8s.io/apimachinery/pkg/util/intstr
	k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1
)

# The upstream API types carry known API-rule violations (documented in
# Kubernetes itself); they are not ours to fix, so the report is discarded.
violations=$(mktemp)
trap 'rm -f "$violations"' EXIT

go run "k8s.io/kube-openapi/cmd/openapi-gen@${kube_openapi_version}" \
	--output-dir . \
	--output-pkg github.com/devplane/devplane/apiserver/openapi \
	--output-file zz_generated.openapi.go \
	--go-header-file /dev/null \
	--report-filename "$violations" \
	"${input_packages[@]}"

# openapi-gen's map builds every definition at once; make it a map of the
# builder functions so only the definitions in use are ever built.
go run ./internal/lazify zz_generated.openapi.go
