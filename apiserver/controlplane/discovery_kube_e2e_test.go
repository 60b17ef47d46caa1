package controlplane_test

// devplane's discovery against kube-apiserver's, kept as a snapshot in
// testdata/discovery (see its README for how it is made): a resource that
// kube serves by default and devplane does not, or serves differently
// (verbs, kind, scope, short names, categories, subresources), fails here.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeDiscoverySnapshot is kube-apiserver's discovery with default flags, at
// the Kubernetes version our k8s.io modules are.
const kubeDiscoverySnapshot = "kube-v1.37.2.txt"

func discoverySnapshotPath(t testing.TB) string {
	t.Helper()
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "discovery", kubeDiscoverySnapshot)
}

// TestDiscoveryMatchesKube compares the legacy (/api, /apis/<g>/<v>) and the
// aggregated (apidiscovery.k8s.io/v2) discovery of a fresh devplane with the
// snapshot of kube-apiserver's, line by line.
//
// DEVPLANE_WRITE_DISCOVERY_FROM=<kubeconfig> rewrites the snapshot from the
// server that kubeconfig names instead (see testdata/discovery/README.md).
func TestDiscoveryMatchesKube(t *testing.T) {
	if from := os.Getenv("DEVPLANE_WRITE_DISCOVERY_FROM"); from != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", from)
		if err != nil {
			t.Fatal(err)
		}
		lines := discoveryLines(t, cfg)
		if err := os.WriteFile(discoverySnapshotPath(t), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skipf("wrote %d lines to %s from %s", len(lines), discoverySnapshotPath(t), cfg.Host)
	}
	data, err := os.ReadFile(discoverySnapshotPath(t))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(data)), "\n")

	s := startControlPlane(t, "")
	got := discoveryLines(t, s.cp.RESTConfig())

	missing, extra := diffLines(want, got)
	for _, l := range missing {
		t.Errorf("kube serves, devplane does not: %s", l)
	}
	for _, l := range extra {
		t.Errorf("devplane serves, kube does not: %s", l)
	}
}

// diffLines returns the lines only in want and those only in got.
func diffLines(want, got []string) (missing, extra []string) {
	in := func(lines []string) map[string]bool {
		m := make(map[string]bool, len(lines))
		for _, l := range lines {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	for _, l := range want {
		if !g[l] {
			missing = append(missing, l)
		}
	}
	for _, l := range got {
		if !w[l] {
			extra = append(extra, l)
		}
	}
	return missing, extra
}

// discoveryLines renders a server's discovery as sorted lines, one a group,
// resource or subresource, prefixed by the form they come from ("legacy" or
// "aggregated"), so two servers are compared with a line diff.
func discoveryLines(t testing.TB, cfg *rest.Config) []string {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, accept string, into any) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v\n%s", path, resp.StatusCode, err, body)
		}
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	var lines []string

	// Legacy: the group list, then each group version's resource list.
	var core metav1.APIVersions
	get("/api", "application/json", &core)
	var groups metav1.APIGroupList
	get("/apis", "application/json", &groups)
	gvPaths := map[string]string{}
	for _, v := range core.Versions {
		lines = append(lines, fmt.Sprintf("legacy group core versions=%s preferred=v1", strings.Join(core.Versions, ",")))
		gvPaths["/api/"+v] = v
	}
	for _, g := range groups.Groups {
		var versions []string
		for _, v := range g.Versions {
			versions = append(versions, v.Version)
			gvPaths["/apis/"+v.GroupVersion] = v.GroupVersion
		}
		lines = append(lines, fmt.Sprintf("legacy group %s versions=%s preferred=%s", g.Name, strings.Join(versions, ","), g.PreferredVersion.Version))
	}
	for path, gv := range gvPaths {
		var list metav1.APIResourceList
		get(path, "application/json", &list)
		for _, r := range list.APIResources {
			kind := r.Kind
			if r.Group != "" || r.Version != "" {
				kind = r.Group + "/" + r.Version + "." + r.Kind
			}
			lines = append(lines, fmt.Sprintf("legacy %s %s singular=%s namespaced=%t kind=%s verbs=%s short=%s categories=%s",
				gv, r.Name, r.SingularName, r.Namespaced, kind, joinSorted(r.Verbs), strings.Join(r.ShortNames, ","), joinSorted(r.Categories)))
		}
	}

	// Aggregated: one document for /api, one for /apis.
	const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	for _, path := range []string{"/api", "/apis"} {
		var list apidiscoveryv2.APIGroupDiscoveryList
		get(path, aggregated, &list)
		for _, g := range list.Items {
			group := g.Name
			if group == "" {
				group = "core"
			}
			var versions []string
			for _, v := range g.Versions {
				versions = append(versions, v.Version)
				gv := v.Version
				if g.Name != "" {
					gv = g.Name + "/" + v.Version
				}
				for _, r := range v.Resources {
					kind := ""
					if r.ResponseKind != nil {
						kind = r.ResponseKind.Kind
					}
					lines = append(lines, fmt.Sprintf("aggregated %s %s singular=%s scope=%s kind=%s verbs=%s short=%s categories=%s",
						gv, r.Resource, r.SingularResource, r.Scope, kind, joinSorted(r.Verbs), strings.Join(r.ShortNames, ","), joinSorted(r.Categories)))
					for _, sub := range r.Subresources {
						subKind := ""
						if sub.ResponseKind != nil {
							subKind = sub.ResponseKind.Group + "/" + sub.ResponseKind.Version + "." + sub.ResponseKind.Kind
						}
						lines = append(lines, fmt.Sprintf("aggregated %s %s/%s kind=%s verbs=%s",
							gv, r.Resource, sub.Subresource, subKind, joinSorted(sub.Verbs)))
					}
				}
			}
			// Version order is preference order in aggregated discovery.
			lines = append(lines, fmt.Sprintf("aggregated group %s versions=%s", group, strings.Join(versions, ",")))
		}
	}
	sort.Strings(lines)
	return lines
}

func joinSorted(s []string) string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return strings.Join(c, ",")
}
