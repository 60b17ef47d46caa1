package history

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/filters"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/storage"
)

// Path is where a server serves object history (a non-resource URL: RBAC
// grants it to cluster admins only, through nonResourceURLs "*"). Its
// query names the object: group (absent for the core group), resource
// (plural), namespace (for namespaced resources), name; limit bounds the
// versions read (DefaultLimit).
const Path = "/debug/devplane/history"

// DefaultLimit and MaxLimit bound the versions one request reads.
const (
	DefaultLimit = 1000
	MaxLimit     = 100_000
)

// History is one object's stored versions, oldest first.
type History struct {
	Group     string `json:"group,omitempty"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Retention is how long etcd keeps versions (the compactor's).
	Retention string    `json:"retention"`
	Versions  []Version `json:"versions"`
	// Compacted: older versions were compacted away (the oldest shown is
	// not the object's creation). Truncated: the limit left out older ones.
	Compacted bool `json:"compacted,omitempty"`
	Truncated bool `json:"truncated,omitempty"`
}

// Version is one stored version and who wrote it.
type Version struct {
	ResourceVersion string `json:"resourceVersion"`
	// Time is when it was written: recorded with the write, else the time
	// of the managedFields entry it changed (to the second); zero when
	// neither is known.
	Time        time.Time `json:"time,omitzero"`
	User        string    `json:"user,omitempty"`
	Verb        string    `json:"verb,omitempty"`
	Subresource string    `json:"subresource,omitempty"`
	// FieldManager is the writer's (Writer.FieldManager); when not
	// recorded, the managedFields entry the version added or changed.
	FieldManager string `json:"fieldManager,omitempty"`
	// Recorded: user, verb and time come from the record made at write time
	// (false: the write was before this server started, or is older than
	// what the recorder keeps).
	Recorded bool `json:"recorded"`
	// Created marks the write that created the object; Deleted its
	// deletion (no Object).
	Created bool            `json:"created,omitempty"`
	Deleted bool            `json:"deleted,omitempty"`
	Object  json.RawMessage `json:"object,omitempty"`
}

// Handler serves GET Path from the stores of regs' resources, with rec's
// writers.
func Handler(regs func() []*registry.Registry, rec *Recorder, retention time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			filters.WriteStatus(w, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "history"}, r.Method))
			return
		}
		q := r.URL.Query()
		h := &History{Group: q.Get("group"), Resource: q.Get("resource"), Namespace: q.Get("namespace"),
			Name: q.Get("name"), Retention: retention.String()}
		limit, err := parseLimit(q.Get("limit"))
		if err == nil && (h.Resource == "" || h.Name == "") {
			err = apierrors.NewBadRequest("resource and name are required: " + Path + "?group=apps&resource=deployments&namespace=default&name=web")
		}
		if err != nil {
			filters.WriteStatus(w, err)
			return
		}
		gr := schema.GroupResource{Group: h.Group, Resource: h.Resource}
		store, versioned := storeOf(regs(), gr)
		switch {
		case store == nil:
			err = apierrors.NewNotFound(schema.GroupResource{Resource: "resources"}, gr.String())
		case store.Namespaced && h.Namespace == "":
			err = apierrors.NewBadRequest(fmt.Sprintf("%s is namespaced: the namespace is required", gr))
		case !store.Namespaced:
			h.Namespace = ""
		}
		if err != nil {
			filters.WriteStatus(w, err)
			return
		}
		key := store.Key(h.Namespace, h.Name)
		versions, compacted, truncated, err := versioned.Versions(r.Context(), key, rec.Deletions(key), limit)
		if err == nil && len(versions) == 0 {
			err = apierrors.NewNotFound(gr, h.Name)
		}
		if err != nil {
			filters.WriteStatus(w, err)
			return
		}
		h.Compacted, h.Truncated = compacted, truncated
		if h.Versions, err = describe(versions, store.Kind, rec); err != nil {
			filters.WriteStatus(w, apierrors.NewInternalError(err))
			return
		}
		body, err := json.Marshal(h)
		if err != nil {
			filters.WriteStatus(w, apierrors.NewInternalError(err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(body, '\n'))
	})
}

func parseLimit(s string) (int, error) {
	if s == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > MaxLimit {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("limit must be a number from 1 to %d, not %q", MaxLimit, s))
	}
	return n, nil
}

// storeOf is the store of gr whose storage reads etcd's history: a
// resource served in several versions has one such (the others convert).
func storeOf(regs []*registry.Registry, gr schema.GroupResource) (*registry.Store, storage.Versioned) {
	for _, reg := range regs {
		for _, res := range reg.Resources() {
			if res.Store == nil || res.GVR.GroupResource() != gr {
				continue
			}
			if v, ok := res.Store.Storage.(storage.Versioned); ok {
				return res.Store, v
			}
		}
	}
	return nil, nil
}

// describe turns versions (newest first) into Versions, oldest first,
// each with its writer: recorded, or else what its managedFields tell.
func describe(versions []storage.Version, kind schema.GroupVersionKind, rec *Recorder) ([]Version, error) {
	out := make([]Version, len(versions))
	for i, v := range versions {
		d := Version{ResourceVersion: strconv.FormatInt(v.Revision, 10), Created: v.Created, Deleted: v.Deleted}
		if v.Object != nil {
			if _, isUnstructured := v.Object.(runtime.Unstructured); !isUnstructured {
				v.Object.GetObjectKind().SetGroupVersionKind(kind)
			}
			raw, err := json.Marshal(v.Object)
			if err != nil {
				return nil, err
			}
			d.Object = raw
		}
		if w, ok := rec.Writer(v.Revision); ok {
			d.Time, d.User, d.Verb, d.Subresource, d.FieldManager, d.Recorded = w.Time, w.User, w.Verb, w.Subresource, w.FieldManager, true
		} else {
			switch {
			case v.Created:
				d.Verb = registry.WriteCreate
			case v.Deleted:
				d.Verb = registry.WriteDelete
			}
			if v.Object != nil {
				var older runtime.Object // the version before, in the same incarnation
				if !v.Created && i+1 < len(versions) {
					older = versions[i+1].Object
				}
				d.FieldManager, d.Time = ChangedManager(older, v.Object)
			}
		}
		out[len(versions)-1-i] = d
	}
	return out, nil
}
