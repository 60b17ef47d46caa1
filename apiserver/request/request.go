// Package request knows what an HTTP request to the API asks for: which
// resource, which verb, on whose behalf. Filters parse it once and put it
// into the context; handlers and authorizers read it from there.
package request

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/fields"
)

// RequestInfo is the parsed form of an API request path, following
// kube-apiserver's rules so authorization and audit see the same verbs.
type RequestInfo struct {
	// IsResourceRequest is false for discovery, health and other
	// non-resource paths; Verb is then the lower-case HTTP method.
	IsResourceRequest bool
	Path              string
	// Verb is get, list, watch, create, update, patch, delete or
	// deletecollection for resource requests.
	Verb        string
	APIPrefix   string // "api" or "apis"
	APIGroup    string // "" for the core group
	APIVersion  string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
	// Parts is the path after the namespace segment, e.g.
	// ["configmaps", "foo"] or ["namespaces", "x", "finalize"].
	Parts []string
	// Streaming marks a non-resource request that streams until the
	// client hangs up (?watch=true on one of streamingPaths).
	Streaming bool
}

// streamingPaths are the non-resource paths that may stream: the
// recent-request follow (apiserver/audit's RecentPath).
var streamingPaths = map[string]bool{"/debug/devplane/requests": true}

// namespaceSubresources are the subresources of a namespace object, which
// must not be mistaken for a resource inside that namespace.
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// Parse works out what r asks for. A path under /api or /apis that is too
// short to name a resource is a non-resource (discovery) request. The only
// error is a legacy watch path that names nothing to watch.
func Parse(r *http.Request) (*RequestInfo, error) {
	info := &RequestInfo{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}

	parts := splitPath(r.URL.Path)
	if len(parts) == 0 || (parts[0] != "api" && parts[0] != "apis") {
		info.Streaming = streamingPaths[r.URL.Path] && r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true"
		return info, nil
	}
	info.APIPrefix = parts[0]
	parts = parts[1:]
	if info.APIPrefix == "apis" {
		if len(parts) < 2 { // /apis or /apis/<group>
			return info, nil
		}
		info.APIGroup = parts[0]
		parts = parts[1:]
	}
	if len(parts) < 2 { // /api, /api/v1, /apis/<group>/<version>
		if len(parts) == 1 {
			info.APIVersion = parts[0]
		}
		return info, nil
	}
	info.APIVersion = parts[0]
	parts = parts[1:]
	info.IsResourceRequest = true

	if parts[0] == "watch" {
		if len(parts) < 2 {
			return nil, fmt.Errorf("unable to determine kind and namespace from url %v", r.URL)
		}
		info.Verb = "watch"
		parts = parts[1:]
	} else {
		info.Verb = resourceVerb(r.Method)
	}

	if parts[0] == "namespaces" && len(parts) > 1 {
		info.Namespace = parts[1]
		// /namespaces/<ns>/<resource>... is a resource inside the namespace;
		// /namespaces/<ns>[/status|/finalize] is the namespace object itself.
		if len(parts) > 2 && !namespaceSubresources[parts[2]] {
			parts = parts[2:]
		}
	}
	info.Parts = parts
	if len(parts) >= 3 {
		info.Subresource = parts[2]
	}
	if len(parts) >= 2 {
		info.Name = parts[1]
	}
	info.Resource = parts[0]

	if info.Name == "" && info.Verb == "get" {
		q := r.URL.Query()
		info.Verb = "list"
		if isTrue(q.Get("watch")) {
			info.Verb = "watch"
		}
		// kube treats a list or watch narrowed to one name as a request on
		// that object, so per-object authorization applies.
		if sel, err := fields.ParseSelector(q.Get("fieldSelector")); err == nil {
			if name, ok := sel.RequiresExactMatch("metadata.name"); ok && len(path.IsValidPathSegmentName(name)) == 0 {
				info.Name = name
			}
		}
	}
	if info.Name == "" && info.Verb == "delete" {
		info.Verb = "deletecollection"
	}
	return info, nil
}

func resourceVerb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

func isTrue(v string) bool {
	return v == "1" || strings.EqualFold(v, "true")
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// longRunningSubresources hold a connection open for as long as the client
// wants, like watches.
var longRunningSubresources = map[string]bool{
	"attach": true, "exec": true, "proxy": true, "log": true, "portforward": true,
}

// IsLongRunning reports whether the request may stay open indefinitely, so
// request timeouts and in-flight limits must not apply to it.
func IsLongRunning(info *RequestInfo) bool {
	if info == nil || !info.IsResourceRequest {
		return info != nil && info.Streaming
	}
	return info.Verb == "watch" || info.Verb == "proxy" || longRunningSubresources[info.Subresource]
}

// IsMutating reports whether verb (a resource verb or a lower-case HTTP
// method) changes state.
func IsMutating(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection", "post", "put":
		return true
	}
	return false
}

// User is the authenticated identity behind a request.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

type contextKey int

const (
	requestInfoKey contextKey = iota
	userKey
	noCompressionKey
	fieldManagerKey
)

// WithoutCompression marks ctx's response as not to be compressed (the
// client is on a network where gzip costs more than it saves).
func WithoutCompression(ctx context.Context) context.Context {
	return context.WithValue(ctx, noCompressionKey, true)
}

// CompressionDisabled reports whether WithoutCompression marked ctx.
func CompressionDisabled(ctx context.Context) bool {
	off, _ := ctx.Value(noCompressionKey).(bool)
	return off
}

// WithRequestInfo returns ctx carrying info.
func WithRequestInfo(ctx context.Context, info *RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey, info)
}

// RequestInfoFrom returns the RequestInfo put into ctx by WithRequestInfo.
func RequestInfoFrom(ctx context.Context) (*RequestInfo, bool) {
	info, ok := ctx.Value(requestInfoKey).(*RequestInfo)
	return info, ok && info != nil
}

// WithUser returns ctx carrying the requesting user.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// UserFrom returns the user put into ctx by WithUser.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey).(*User)
	return u, ok && u != nil
}

// WithFieldManager returns ctx carrying the field manager of the write
// its request makes: the request's fieldManager, or the one kube derives
// from its User-Agent.
func WithFieldManager(ctx context.Context, manager string) context.Context {
	return context.WithValue(ctx, fieldManagerKey, manager)
}

// FieldManagerFrom returns the manager put into ctx by WithFieldManager.
func FieldManagerFrom(ctx context.Context) (string, bool) {
	m, ok := ctx.Value(fieldManagerKey).(string)
	return m, ok
}

// AsAPIServer marks ctx as the API server acting on its own behalf
// (bootstrap objects, in-process controllers of stored state): user
// system:apiserver in system:masters, which authorization always allows.
func AsAPIServer(ctx context.Context) context.Context {
	return WithUser(ctx, &User{Name: "system:apiserver", Groups: []string{"system:masters"}})
}

// QualifiedResource spells a resource as kube qualifies it:
// resource.group, then /subresource (pods/log, deployments.apps/scale).
func QualifiedResource(resource, group, subresource string) string {
	s := resource
	if group != "" {
		s += "." + group
	}
	if subresource != "" {
		s += "/" + subresource
	}
	return s
}
