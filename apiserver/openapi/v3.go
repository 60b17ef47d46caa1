package openapi

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/munnerz/goautoneg"
	"k8s.io/kube-openapi/pkg/handler3"
)

// The /openapi/v3 discovery document names each group version's document
// with a hash that changes whenever the document does (clients cache by
// it). kube hashes the document itself, so its discovery builds every
// document; here a group version's hash is derived from what its document
// is built from (its resources, their definitions' revisions, the server
// build), so discovery builds nothing and each document is built on its
// first request. Documents without revisions (external ones, supplied
// definitions without a Revision) are hashed from their content.

const (
	protoV3Deprecated = "com.github.proto-openapi.spec.v3@v1.0+protobuf"
	protoV3           = "com.github.proto-openapi.spec.v3.v1.0+protobuf"
)

// v3Document is one group version's document, built and encoded once.
type v3Document struct {
	build func() ([]byte, error)
	hash  string // derived from what the document is built from; "": from its content

	once     sync.Once
	json     []byte
	etag     string
	modified time.Time
	err      error

	protoOnce sync.Once
	proto     []byte
	protoErr  error
}

func (d *v3Document) encoded() ([]byte, string, error) {
	d.once.Do(func() {
		d.json, d.err = d.build()
		d.build = nil // the bytes are what is kept
		d.modified = time.Now()
		d.etag = d.hash
		if d.err == nil && d.etag == "" {
			d.etag = contentHash(d.json)
		}
	})
	return d.json, d.etag, d.err
}

func (d *v3Document) protobuf() ([]byte, error) {
	d.protoOnce.Do(func() {
		var data []byte
		if data, _, d.protoErr = d.encoded(); d.protoErr == nil {
			d.proto, d.protoErr = handler3.ToV3ProtoBinary(data)
		}
	})
	return d.proto, d.protoErr
}

func contentHash(data []byte) string { return fmt.Sprintf("%X", sha512.Sum512(data)) }

// buildIdentity distinguishes binaries whose documents may differ for the
// same resources.
var buildIdentity = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		id := info.Main.Version
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				id += " " + s.Value
			}
		}
		return id
	}
	return ""
})

// derivedHash is the hash of a local group version's document from what
// it is built from.
func derivedHash(serverVersion, key string, resources []Resource) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n%s\n%s\n", serverVersion, buildIdentity(), key)
	for _, r := range resources {
		fmt.Fprintf(&b, "%+v\n", r)
	}
	return contentHash(b.Bytes())
}

// v3Documents are the served group versions' documents and the discovery
// document listing them.
type v3Documents struct {
	mu        sync.Mutex
	docs      map[string]*v3Document // by key, e.g. "apis/apps/v1"
	discovery []byte                 // nil when it must be rebuilt
	modified  time.Time
}

func (v *v3Documents) set(key string, doc *v3Document) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.docs == nil {
		v.docs = map[string]*v3Document{}
	}
	v.docs[key] = doc
	v.discovery = nil
}

func (v *v3Documents) remove(key string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.docs[key]; ok {
		delete(v.docs, key)
		v.discovery = nil
	}
}

func (v *v3Documents) get(key string) *v3Document {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.docs[key]
}

func serverRelativeURL(key, etag string) string {
	u := url.URL{Path: path.Join(pathV3, key), RawQuery: url.Values{"hash": {etag}}.Encode()}
	return u.String()
}

// serveDiscovery answers /openapi/v3: every group version's document URL
// with its hash.
func (v *v3Documents) serveDiscovery(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	if v.discovery == nil {
		type entry struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		}
		paths := make(map[string]entry, len(v.docs))
		keys := make([]string, 0, len(v.docs))
		for key := range v.docs {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			doc := v.docs[key]
			etag := doc.hash
			if etag == "" {
				var err error
				if _, etag, err = doc.encoded(); err != nil {
					v.mu.Unlock()
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
			}
			paths[key] = entry{ServerRelativeURL: serverRelativeURL(key, etag)}
		}
		v.discovery, _ = json.Marshal(map[string]any{"paths": paths})
		v.modified = time.Now()
	}
	data, modified := v.discovery, v.modified
	v.mu.Unlock()
	w.Header().Set("Etag", strconv.Quote(contentHash(data)))
	w.Header().Set("Content-Type", "application/json")
	http.ServeContent(w, r, pathV3, modified, bytes.NewReader(data))
}

// serveDocument answers /openapi/v3/<key> in JSON or protobuf, as
// negotiated, redirecting a stale ?hash= to the current one and letting
// clients cache a current one for good.
func (v *v3Documents) serveDocument(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, pathV3+"/")
	doc := v.get(key)
	if doc == nil {
		http.NotFound(w, r)
		return
	}
	for _, clause := range acceptClauses(w, r) {
		if clause.Type != "application" && clause.Type != "*" {
			continue
		}
		var data []byte
		var contentType string
		var err error
		switch clause.SubType {
		case "json", "*":
			data, _, err = doc.encoded()
			contentType = "application/json"
		case protoV3, protoV3Deprecated:
			data, err = doc.protobuf()
			contentType = "application/" + protoV3
		default:
			continue
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, etag, _ := doc.encoded()
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Etag", strconv.Quote(etag))
		if hash := r.URL.Query().Get("hash"); hash != "" {
			if hash != etag {
				http.Redirect(w, r, serverRelativeURL(key, etag), http.StatusMovedPermanently)
				return
			}
			w.Header().Set("Cache-Control", "public, immutable")
			w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).Format(time.RFC1123))
		}
		http.ServeContent(w, r, "", doc.modified, bytes.NewReader(data))
		return
	}
	w.WriteHeader(http.StatusNotAcceptable)
}

// acceptClauses is the request's Accept header parsed (*/* when absent);
// the response varies by it.
func acceptClauses(w http.ResponseWriter, r *http.Request) []goautoneg.Accept {
	w.Header().Add("Vary", "Accept")
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	return goautoneg.ParseAccept(accept)
}
