package request

import (
	"context"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		method, url string
		want        RequestInfo
	}{
		{"GET", "/healthz", RequestInfo{Verb: "get"}},
		{"GET", "/api", RequestInfo{Verb: "get", APIPrefix: "api"}},
		{"GET", "/api/v1", RequestInfo{Verb: "get", APIPrefix: "api", APIVersion: "v1"}},
		{"GET", "/apis", RequestInfo{Verb: "get", APIPrefix: "apis"}},
		{"GET", "/apis/apps", RequestInfo{Verb: "get", APIPrefix: "apis"}},
		{"GET", "/apis/apps/v1", RequestInfo{Verb: "get", APIPrefix: "apis", APIGroup: "apps", APIVersion: "v1"}},
		{"POST", "/apis/apps/v1/", RequestInfo{Verb: "post", APIPrefix: "apis", APIGroup: "apps", APIVersion: "v1"}},
		{"GET", "/api/v1/namespaces/ns1/configmaps", resource("list", "", "ns1", "configmaps", "", "", "configmaps")},
		{"GET", "/api/v1/namespaces/ns1/configmaps?watch=true", resource("watch", "", "ns1", "configmaps", "", "", "configmaps")},
		{"GET", "/api/v1/namespaces/ns1/configmaps?watch=1", resource("watch", "", "ns1", "configmaps", "", "", "configmaps")},
		{"GET", "/api/v1/namespaces/ns1/configmaps?watch=false", resource("list", "", "ns1", "configmaps", "", "", "configmaps")},
		{"GET", "/api/v1/namespaces/ns1/configmaps?watch=true&fieldSelector=metadata.name%3Dfoo", resource("watch", "", "ns1", "configmaps", "foo", "", "configmaps")},
		{"GET", "/api/v1/namespaces/ns1/configmaps/foo", resource("get", "", "ns1", "configmaps", "foo", "", "configmaps", "foo")},
		{"HEAD", "/api/v1/namespaces/ns1/configmaps/foo", resource("get", "", "ns1", "configmaps", "foo", "", "configmaps", "foo")},
		{"POST", "/api/v1/namespaces/ns1/configmaps", resource("create", "", "ns1", "configmaps", "", "", "configmaps")},
		{"PUT", "/api/v1/namespaces/ns1/configmaps/foo", resource("update", "", "ns1", "configmaps", "foo", "", "configmaps", "foo")},
		{"PATCH", "/api/v1/namespaces/ns1/configmaps/foo", resource("patch", "", "ns1", "configmaps", "foo", "", "configmaps", "foo")},
		{"DELETE", "/api/v1/namespaces/ns1/configmaps/foo", resource("delete", "", "ns1", "configmaps", "foo", "", "configmaps", "foo")},
		{"DELETE", "/api/v1/namespaces/ns1/configmaps", resource("deletecollection", "", "ns1", "configmaps", "", "", "configmaps")},
		{"GET", "/api/v1/configmaps", resource("list", "", "", "configmaps", "", "", "configmaps")},
		{"GET", "/apis/apps/v1/namespaces/ns1/deployments/web/scale", resource("get", "apps", "ns1", "deployments", "web", "scale", "deployments", "web", "scale")},
		{"PUT", "/apis/apps/v1/namespaces/ns1/deployments/web/status", resource("update", "apps", "ns1", "deployments", "web", "status", "deployments", "web", "status")},
		// The namespace object itself and its subresources.
		{"GET", "/api/v1/namespaces", resource("list", "", "", "namespaces", "", "", "namespaces")},
		{"GET", "/api/v1/namespaces/ns1", resource("get", "", "ns1", "namespaces", "ns1", "", "namespaces", "ns1")},
		{"DELETE", "/api/v1/namespaces/ns1", resource("delete", "", "ns1", "namespaces", "ns1", "", "namespaces", "ns1")},
		{"PUT", "/api/v1/namespaces/ns1/status", resource("update", "", "ns1", "namespaces", "ns1", "status", "namespaces", "ns1", "status")},
		{"PUT", "/api/v1/namespaces/ns1/finalize", resource("update", "", "ns1", "namespaces", "ns1", "finalize", "namespaces", "ns1", "finalize")},
		// Legacy watch paths.
		{"GET", "/api/v1/watch/namespaces/ns1/configmaps", resource("watch", "", "ns1", "configmaps", "", "", "configmaps")},
		{"GET", "/api/v1/watch/namespaces/ns1/configmaps/foo", resource("watch", "", "ns1", "configmaps", "foo", "", "configmaps", "foo")},
		{"GET", "/apis/apps/v1/watch/deployments", resource("watch", "apps", "", "deployments", "", "", "deployments")},
		{"GET", "/api/v1/watch/namespaces", resource("watch", "", "", "namespaces", "", "", "namespaces")},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.url, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.url, nil)
			got, err := Parse(r)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := c.want
			want.Path = r.URL.Path
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func resource(verb, group, ns, res, name, sub string, parts ...string) RequestInfo {
	prefix := "apis"
	if group == "" {
		prefix = "api"
	}
	return RequestInfo{IsResourceRequest: true, Verb: verb, APIPrefix: prefix, APIGroup: group, APIVersion: "v1",
		Namespace: ns, Resource: res, Name: name, Subresource: sub, Parts: parts}
}

func TestParseRejectsEmptyLegacyWatch(t *testing.T) {
	if _, err := Parse(httptest.NewRequest("GET", "/api/v1/watch", nil)); err == nil {
		t.Fatal("want an error for /api/v1/watch")
	}
}

func TestLongRunningAndMutating(t *testing.T) {
	if !IsLongRunning(&RequestInfo{IsResourceRequest: true, Verb: "watch"}) {
		t.Error("watch must be long-running")
	}
	if !IsLongRunning(&RequestInfo{IsResourceRequest: true, Verb: "create", Subresource: "exec"}) {
		t.Error("exec must be long-running")
	}
	if IsLongRunning(&RequestInfo{IsResourceRequest: true, Verb: "list"}) || IsLongRunning(nil) {
		t.Error("list and nil are not long-running")
	}
	for verb, want := range map[string]bool{"create": true, "update": true, "patch": true, "delete": true,
		"deletecollection": true, "post": true, "get": false, "list": false, "watch": false} {
		if IsMutating(verb) != want {
			t.Errorf("IsMutating(%q) = %v", verb, !want)
		}
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if _, ok := RequestInfoFrom(ctx); ok {
		t.Fatal("empty context has no RequestInfo")
	}
	if _, ok := UserFrom(ctx); ok {
		t.Fatal("empty context has no user")
	}
	info := &RequestInfo{Verb: "get"}
	u := &User{Name: "alice", Groups: []string{"system:authenticated"}}
	ctx = WithUser(WithRequestInfo(ctx, info), u)
	if got, ok := RequestInfoFrom(ctx); !ok || got != info {
		t.Fatalf("RequestInfoFrom = %v, %v", got, ok)
	}
	if got, ok := UserFrom(ctx); !ok || got.Name != "alice" {
		t.Fatalf("UserFrom = %v, %v", got, ok)
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{"/api/v1/namespaces/a/configmaps/b", "/apis/apps/v1/watch/", "/api/v1/watch",
		"/api/v1/namespaces/x/status", "//api//v1//", "/apis/g/v/namespaces"} {
		f.Add("GET", seed, "watch=true&fieldSelector=metadata.name%3Dx")
	}
	f.Fuzz(func(t *testing.T, method, p, query string) {
		r := &http.Request{Method: method, URL: &neturl.URL{}, Header: http.Header{}}
		r.URL.Path = p
		r.URL.RawQuery = query
		info, err := Parse(r)
		if err == nil && info == nil {
			t.Fatal("nil info without error")
		}
		if err == nil && info.IsResourceRequest && (len(info.Parts) == 0 || info.Resource != info.Parts[0]) {
			t.Fatalf("resource is not the first part: %+v", info)
		}
	})
}
