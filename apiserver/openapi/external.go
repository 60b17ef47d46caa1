package openapi

import (
	"encoding/json"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// External is the OpenAPI description of one group version served by
// another API server (an aggregated APIService's backend), as that server
// publishes it. Either document may be nil.
type External struct {
	// V2 is the backend's /openapi/v2: its paths under the group
	// version and its definitions are merged into /openapi/v2.
	V2 *spec.Swagger
	// V3 is the backend's /openapi/v3/apis/<group>/<version>, served
	// as that group version's document.
	V3 *spec3.OpenAPI
}

// SetExternal serves doc for group/version in place of any local
// resources of that group version, until DeleteExternal. Documents are
// merged lazily, on the next request. doc must not be mutated afterwards.
func (s *Service) SetExternal(group, version string, doc External) {
	key := groupVersionPath(group, version)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.external[key] = doc
	if doc.V3 != nil {
		v3 := doc.V3
		s.v3.set(key, &v3Document{build: func() ([]byte, error) { return json.Marshal(v3) }})
	} else {
		s.v3.remove(key)
	}
	delete(s.groupVersion, key) // its local document, if any, was replaced
	s.updateLocked(s.resources, s.extra)
}

// DeleteExternal stops serving group/version's external document; local
// resources of that group version, if any, are described again.
func (s *Service) DeleteExternal(group, version string) {
	key := groupVersionPath(group, version)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.external[key]; !ok {
		return
	}
	delete(s.external, key)
	s.v3.remove(key)
	s.updateLocked(s.resources, s.extra)
}

func (s *Service) isExternal(key string) bool {
	doc, ok := s.external[key]
	return ok && doc.V3 != nil
}
