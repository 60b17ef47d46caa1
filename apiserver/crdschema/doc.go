// Package crdschema knows everything the extensions server needs about a
// CustomResourceDefinition and its objects, independent of HTTP and storage:
// CRD validation and defaulting, name acceptance, and per-version compiled
// schemas that default, prune, validate (OpenAPI + CEL), print tables, expose
// scale and OpenAPI, and convert between versions.
//
// All schema semantics come from k8s.io/apiextensions-apiserver so that
// behaviour and error messages match a real kube-apiserver.
package crdschema
