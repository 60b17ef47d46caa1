package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/request"
)

// headerUser signs every request in as the user its X-Test-User header names.
type headerUser struct{}

func (headerUser) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	return &request.User{Name: r.Header.Get("X-Test-User"), Groups: []string{"system:authenticated"}}, true, nil
}

// recordingAuthorizer allows alice only and counts the decisions it makes
// for each user.
type recordingAuthorizer struct {
	mu    sync.Mutex
	calls map[string]int
}

func (a *recordingAuthorizer) Authorize(_ context.Context, attrs authz.Attributes) (authz.Decision, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls[attrs.User.Name]++
	if attrs.User.Name == "alice" {
		return authz.Allow, "", nil
	}
	return authz.NoOpinion, "", nil
}

func (a *recordingAuthorizer) callsFor(user string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[user]
}

// TestInFlightLimitRefusesBeforeAuthorization checks kube's filter order:
// with every in-flight slot taken, a request is answered 429 without its
// authorization being decided.
func TestInFlightLimitRefusesBeforeAuthorization(t *testing.T) {
	authorizer := &recordingAuthorizer{calls: map[string]int{}}
	c := &Config{
		Name:                        "test",
		Authenticator:               headerUser{},
		Authorizer:                  authorizer,
		MaxRequestsInFlight:         1,
		MaxMutatingRequestsInFlight: 1,
	}
	s, err := c.Complete().New(nil)
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	s.SetAPIHandler(func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Test-User") == "alice" {
				close(entered)
				<-release
			}
			w.WriteHeader(http.StatusOK)
		})
	})
	p, err := s.PrepareRun()
	if err != nil {
		t.Fatal(err)
	}
	defer p.grownStacks.Stop()

	get := func(user string) int {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps", nil)
		r.Header.Set("X-Test-User", user)
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, r)
		return rec.Code
	}

	// alice takes the only read slot and holds it.
	aliceDone := make(chan int, 1)
	go func() { aliceDone <- get("alice") }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("alice's request never reached the handler")
	}

	// bob, whom authorization would refuse, is refused by the limit first.
	code := get("bob")
	close(release)
	if code != http.StatusTooManyRequests {
		t.Errorf("bob over the limit: code %d, want 429", code)
	}
	if n := authorizer.callsFor("bob"); n != 0 {
		t.Errorf("authorization decided %d times for a request over the limit, want 0", n)
	}
	if code := <-aliceDone; code != http.StatusOK {
		t.Errorf("alice: code %d, want 200", code)
	}

	// Under the limit, bob's request reaches authorization and is refused there.
	if code := get("bob"); code != http.StatusForbidden {
		t.Errorf("bob under the limit: code %d, want 403", code)
	}
	if n := authorizer.callsFor("bob"); n != 1 {
		t.Errorf("authorization decided %d times for bob, want 1", n)
	}
}
