package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Path is where a server serves its rules (a non-resource URL: RBAC
// grants it to cluster admins only, through nonResourceURLs "*").
const Path = "/debug/devplane/faults"

// Handler serves in's rules at Path: GET lists them (with ?hits=<name>,
// that rule's hits), POST adds the Fault in its JSON body, DELETE
// Path/<name> removes one.
func Handler(in *Injector) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, Path), "/")
		switch {
		case r.Method == http.MethodGet && name == "":
			if rule := r.URL.Query().Get("hits"); rule != "" {
				writeJSON(w, http.StatusOK, orEmpty(in.Hits(rule)))
				return
			}
			writeJSON(w, http.StatusOK, orEmpty(in.List()))
		case r.Method == http.MethodPost && name == "":
			var f Fault
			dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&f); err != nil {
				http.Error(w, fmt.Sprintf("decoding the fault: %v", err), http.StatusBadRequest)
				return
			}
			if err := in.Add(f); err != nil {
				code := http.StatusBadRequest
				if errors.Is(err, errExists) {
					code = http.StatusConflict
				}
				http.Error(w, err.Error(), code)
				return
			}
			writeJSON(w, http.StatusCreated, f)
		case r.Method == http.MethodDelete && name != "":
			if !in.Remove(name) {
				http.Error(w, fmt.Sprintf("no fault %q", name), http.StatusNotFound)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		default:
			http.Error(w, "GET or POST "+Path+", DELETE "+Path+"/<name>", http.StatusMethodNotAllowed)
		}
	})
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}
