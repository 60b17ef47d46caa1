package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/devplane/devplane/apiserver/openapi"
)

// OpenAPISink receives the remote APIServices' OpenAPI documents, one
// group version at a time (*openapi.Service implements it).
type OpenAPISink interface {
	SetExternal(group, version string, doc openapi.External)
	DeleteExternal(group, version string)
}

// OpenAPIRefresh is how old a backend's fetched OpenAPI documents may get
// before they are fetched again; an APIService change refetches at once.
var OpenAPIRefresh = time.Minute

// maxOpenAPIBytes bounds one fetched document.
const maxOpenAPIBytes = 64 << 20

// openAPIEntry is what was last handed to the sink for one APIService.
type openAPIEntry struct {
	group, version  string
	resourceVersion string // of the APIService the documents were fetched for
	fetched         time.Time
}

// runOpenAPI is the apiservice-openapi-controller hook: it keeps the sink
// holding the documents of every Available remote APIService, fetched
// through the proxy transport, and drops those that are unavailable or gone.
func (a *Aggregator) runOpenAPI(ctx context.Context) error {
	if a.deps.OpenAPI == nil {
		return nil
	}
	a.start(ctx)
	go func() {
		if a.waitSynced(ctx) != nil {
			return
		}
		entries := map[string]openAPIEntry{}
		for ctx.Err() == nil {
			a.refreshOpenAPI(ctx, entries)
			t := time.NewTimer(OpenAPIRefresh / 4)
			select {
			case <-ctx.Done():
			case <-a.kickOpenAPI:
			case <-t.C:
			}
			t.Stop()
		}
	}()
	return nil
}

// refreshOpenAPI brings the sink in step with the APIServices; entries is
// the controller's own state.
func (a *Aggregator) refreshOpenAPI(ctx context.Context, entries map[string]openAPIEntry) {
	ctx = systemContext(ctx)
	wanted := map[string]*apiregv1.APIService{}
	for _, s := range a.apiServices() {
		if isLocal(s) {
			continue
		}
		if c := availableCondition(s); c != nil && c.Status == apiregv1.ConditionTrue {
			wanted[s.Name] = s
		}
	}
	for name, e := range entries {
		if s := wanted[name]; s == nil || s.Spec.Group != e.group || s.Spec.Version != e.version {
			a.deps.OpenAPI.DeleteExternal(e.group, e.version)
			delete(entries, name)
		}
	}
	type result struct {
		s   *apiregv1.APIService
		doc openapi.External
		err error
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results []result
	)
	for name, s := range wanted {
		if e, ok := entries[name]; ok && e.resourceVersion == s.ResourceVersion && time.Since(e.fetched) < OpenAPIRefresh {
			continue
		}
		wg.Go(func() {
			doc, err := a.fetchOpenAPI(ctx, s)
			mu.Lock()
			results = append(results, result{s, doc, err})
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, r := range results {
		if r.err != nil {
			if ctx.Err() == nil {
				a.logger.Info("fetching OpenAPI", "apiservice", r.s.Name, "err", r.err)
			}
			continue // keep serving what was fetched before, if anything
		}
		a.deps.OpenAPI.SetExternal(r.s.Spec.Group, r.s.Spec.Version, r.doc)
		entries[r.s.Name] = openAPIEntry{group: r.s.Spec.Group, version: r.s.Spec.Version,
			resourceVersion: r.s.ResourceVersion, fetched: time.Now()}
	}
}

// fetchOpenAPI GETs the backend's /openapi/v3/apis/<group>/<version> and
// /openapi/v2; a backend may serve either. It fails only when neither is.
func (a *Aggregator) fetchOpenAPI(ctx context.Context, s *apiregv1.APIService) (openapi.External, error) {
	var doc openapi.External
	addr, err := a.resolve(ctx, s.Spec.Service)
	if err != nil {
		return doc, err
	}
	b, err := a.backendFor(s)
	if err != nil {
		return doc, err
	}
	v3 := &spec3.OpenAPI{}
	errV3 := a.fetchJSON(ctx, b, addr, "/openapi/v3/apis/"+s.Spec.Group+"/"+s.Spec.Version, v3)
	if errV3 == nil {
		doc.V3 = v3
	}
	v2 := &spec.Swagger{}
	errV2 := a.fetchJSON(ctx, b, addr, "/openapi/v2", v2)
	if errV2 == nil {
		doc.V2 = v2
	}
	if doc.V2 == nil && doc.V3 == nil {
		return doc, fmt.Errorf("v3: %v; v2: %v", errV3, errV2)
	}
	return doc, nil
}

func (a *Aggregator) fetchJSON(ctx context.Context, b *backend, addr, path string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	setIdentity(req.Header, User)
	resp, err := b.transport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxOpenAPIBytes))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}
