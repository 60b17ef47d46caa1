package testenv_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/faults"
	"github.com/devplane/devplane/apiserver/testenv"
)

// warnings collects the Warning headers a client receives.
type warnings struct {
	mu    sync.Mutex
	texts []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.texts...)
}

// faultEnv is one devplane for the fault tests, each in its namespace.
func faultEnv(t *testing.T) (*testenv.Instance, *kubernetes.Clientset) {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{})
	return env, clientFor(t, quiet(env.Config()))
}

// quiet keeps client-go from logging each injected fault's warning.
func quiet(cfg *rest.Config) *rest.Config {
	cfg.WarningHandler = rest.NoWarnings{}
	return cfg
}

func makeNamespace(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func makeConfigMap(t *testing.T, c kubernetes.Interface, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	cm, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// rawGet sends a GET with the admin's credentials and returns the
// response and its body, as the wire has them (client-go would retry).
func rawGet(t *testing.T, env *testenv.Instance, path string) (*http.Response, metav1.Status) {
	t.Helper()
	hc, err := rest.HTTPClientFor(quiet(env.Config()))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(env.URL() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var st metav1.Status
	_ = json.Unmarshal(body, &st)
	return resp, st
}

func TestFaultErrorsAreKubeStatuses(t *testing.T) {
	env, c := faultEnv(t)
	makeNamespace(t, c, "errs")
	makeConfigMap(t, c, "errs", "target")
	path := "/api/v1/namespaces/errs/configmaps/target"
	for _, tc := range []struct {
		code       int
		reason     metav1.StatusReason
		message    string
		retryAfter string
	}{
		{409, metav1.StatusReasonConflict, `Operation cannot be fulfilled on configmaps "target": the object has been modified; please apply your changes to the latest version and try again`, ""},
		{429, metav1.StatusReasonTooManyRequests, "Too many requests, please try again later.", "1"},
		{500, metav1.StatusReasonInternalError, "Internal error occurred: injected server error", ""},
		{503, metav1.StatusReasonServiceUnavailable, "the server is currently unable to handle the request", ""},
		{504, metav1.StatusReasonTimeout, "Timeout: request did not complete within requested timeout - context deadline exceeded", ""},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			name := fmt.Sprintf("error-%d", tc.code)
			// Gets of config maps in the namespace only: the controllers
			// write config maps too (the root CA's), sometimes right then.
			f := env.InjectFault(t, testenv.Fault{Name: name, Verbs: []string{"get"}, Resources: []string{"configmaps"},
				Namespaces: []string{"errs"}, Error: tc.code})
			resp, st := rawGet(t, env, path)
			if resp.StatusCode != tc.code || st.Code != int32(tc.code) || st.Reason != tc.reason || st.Message != tc.message {
				t.Errorf("got %d %+v, want %d %s %q", resp.StatusCode, st, tc.code, tc.reason, tc.message)
			}
			if st.Kind != "Status" || st.Status != metav1.StatusFailure {
				t.Errorf("body kind %q status %q, want a failed Status", st.Kind, st.Status)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tc.retryAfter)
			}
			want := `299 - "devplane: injected fault ` + name + `"`
			if got := resp.Header.Get("Warning"); got != want {
				t.Errorf("Warning = %q, want %q", got, want)
			}
			if hits := f.Hits(); len(hits) != 1 || hits[0].Verb != "get" || hits[0].Name != "target" || hits[0].Namespace != "errs" {
				t.Errorf("hits = %+v, want the one get of errs/target", hits)
			}
		})
	}
	// Their rules removed with their subtests, the request is served.
	if resp, st := rawGet(t, env, path); resp.StatusCode != http.StatusOK {
		t.Errorf("without rules: %d %+v, want 200", resp.StatusCode, st)
	}
}

func TestFaultConflictSeenByClientGo(t *testing.T) {
	env, c := faultEnv(t)
	makeNamespace(t, c, "conflict")
	cm := makeConfigMap(t, c, "conflict", "target")
	env.InjectFault(t, testenv.Fault{Verbs: []string{"update"}, Resources: []string{"configmaps"}, Error: 409, Times: 1})
	seen := &warnings{}
	cfg := env.Config()
	cfg.WarningHandler = seen
	cs := clientFor(t, cfg)
	cm.Data = map[string]string{"k": "v"}
	_, err := cs.CoreV1().ConfigMaps("conflict").Update(t.Context(), cm, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("first update: %v, want a conflict", err)
	}
	if w := seen.all(); len(w) != 1 || !strings.HasPrefix(w[0], "devplane: injected fault fault-") {
		t.Errorf("warnings = %q, want the one naming the fault", w)
	}
	if _, err := cs.CoreV1().ConfigMaps("conflict").Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("second update (past Times): %v", err)
	}
}

func TestFaultTooManyRequestsRetriedByClientGo(t *testing.T) {
	env, c := faultEnv(t)
	makeNamespace(t, c, "busy")
	makeConfigMap(t, c, "busy", "target")
	f := env.InjectFault(t, testenv.Fault{Resources: []string{"configmaps"}, Error: 429, Times: 1})
	// client-go waits out Retry-After and sends the request again.
	if _, err := c.CoreV1().ConfigMaps("busy").Get(t.Context(), "target", metav1.GetOptions{}); err != nil {
		t.Fatalf("get: %v (client-go should have retried)", err)
	}
	if n := len(f.Hits()); n != 1 {
		t.Errorf("hits = %d, want 1", n)
	}
}

func TestFaultDelayServesLate(t *testing.T) {
	env, c := faultEnv(t)
	makeNamespace(t, c, "slow")
	makeConfigMap(t, c, "slow", "target")
	const delay = 400 * time.Millisecond
	env.InjectFault(t, testenv.Fault{Names: []string{"target"}, Delay: delay})
	start := time.Now()
	cm, err := c.CoreV1().ConfigMaps("slow").Get(t.Context(), "target", metav1.GetOptions{})
	if err != nil || cm.Name != "target" {
		t.Fatalf("get: %v, %v", cm, err)
	}
	if took := time.Since(start); took < delay {
		t.Errorf("get took %s, want at least the %s delay", took, delay)
	}
}

func TestFaultLimits(t *testing.T) {
	env, c := faultEnv(t)
	makeNamespace(t, c, "limits")
	makeConfigMap(t, c, "limits", "target")
	// outcomes gets target n times: true where the fault fired.
	outcomes := func(n int) []bool {
		out := make([]bool, n)
		for i := range out {
			_, err := c.CoreV1().ConfigMaps("limits").Get(t.Context(), "target", metav1.GetOptions{})
			if err != nil && !apierrors.IsInternalError(err) {
				t.Fatal(err)
			}
			out[i] = err != nil
		}
		return out
	}
	base := testenv.Fault{Namespaces: []string{"limits"}, Error: 500}
	with := func(name string, set func(*testenv.Fault)) testenv.Fault {
		f := base
		f.Name = name
		set(&f)
		return f
	}

	t.Run("Times", func(t *testing.T) {
		f := env.InjectFault(t, with("first-two", func(f *testenv.Fault) { f.Times = 2 }))
		if got, want := fmt.Sprint(outcomes(4)), "[true true false false]"; got != want {
			t.Errorf("outcomes %s, want %s", got, want)
		}
		if n := len(f.Hits()); n != 2 {
			t.Errorf("hits = %d, want 2", n)
		}
	})
	t.Run("Every", func(t *testing.T) {
		env.InjectFault(t, with("every-third", func(f *testenv.Fault) { f.Every = 3 }))
		if got, want := fmt.Sprint(outcomes(7)), "[false false true false false true false]"; got != want {
			t.Errorf("outcomes %s, want %s", got, want)
		}
	})
	t.Run("ProbabilityIsSeeded", func(t *testing.T) {
		run := func(name string) []bool {
			f := env.InjectFault(t, with(name, func(f *testenv.Fault) { f.Probability = 0.5; f.Seed = 42 }))
			defer f.Remove()
			return outcomes(24)
		}
		first, second := run("coin-1"), run("coin-2")
		if fmt.Sprint(first) != fmt.Sprint(second) {
			t.Errorf("same seed, different outcomes:\n%v\n%v", first, second)
		}
		fired := 0
		for _, f := range first {
			if f {
				fired++
			}
		}
		if fired == 0 || fired == len(first) {
			t.Errorf("probability 0.5 fired %d of %d times", fired, len(first))
		}
	})
	t.Run("For", func(t *testing.T) {
		env.InjectFault(t, with("briefly", func(f *testenv.Fault) { f.For = 300 * time.Millisecond }))
		if got := outcomes(1); !got[0] {
			t.Fatal("did not fire while in force")
		}
		time.Sleep(400 * time.Millisecond)
		if got := outcomes(2); got[0] || got[1] {
			t.Errorf("fired after expiring: %v", got)
		}
	})
}

func TestFaultMatching(t *testing.T) {
	env, c := faultEnv(t)
	for _, ns := range []string{"match", "other"} {
		makeNamespace(t, c, ns)
		makeConfigMap(t, c, ns, "target")
	}
	ctx := t.Context()
	alice := clientFor(t, quiet(env.ConfigFor("alice", "system:masters")))
	agentCfg := quiet(env.Config())
	agentCfg.UserAgent = "fault-test/1.0"
	agent := clientFor(t, agentCfg)
	getCM := func(cs kubernetes.Interface, ns, name string) func() error {
		return func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
			return err
		}
	}
	createCM := func(manager string) func() error {
		return func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "fm-", Namespace: "match"}}
			_, err := c.CoreV1().ConfigMaps("match").Create(ctx, cm, metav1.CreateOptions{FieldManager: manager})
			return err
		}
	}
	abs := func(path string) func() error {
		return func() error { return c.CoreV1().RESTClient().Get().AbsPath(path).Do(ctx).Error() }
	}
	for _, tc := range []struct {
		name      string
		fault     testenv.Fault
		hit, miss func() error
	}{
		{"verb", testenv.Fault{Verbs: []string{"list"}}, func() error {
			_, err := c.CoreV1().ConfigMaps("match").List(ctx, metav1.ListOptions{})
			return err
		}, getCM(c, "match", "target")},
		{"resource", testenv.Fault{Resources: []string{"configmaps"}}, getCM(c, "match", "target"), func() error {
			_, err := c.CoreV1().Secrets("match").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"group", testenv.Fault{Resources: []string{"events.events.k8s.io"}}, func() error {
			_, err := c.EventsV1().Events("match").List(ctx, metav1.ListOptions{})
			return err
		}, func() error {
			_, err := c.CoreV1().Events("match").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"subresource", testenv.Fault{Resources: []string{"namespaces/status"}},
			abs("/api/v1/namespaces/match/status"), abs("/api/v1/namespaces/match")},
		{"namespace", testenv.Fault{Namespaces: []string{"match"}}, getCM(c, "match", "target"), getCM(c, "other", "target")},
		{"name", testenv.Fault{Names: []string{"target"}}, getCM(c, "other", "target"), getCM(c, "other", "absent")},
		{"user", testenv.Fault{Users: []string{"alice"}}, getCM(alice, "match", "target"), getCM(c, "match", "target")},
		{"user agent", testenv.Fault{UserAgents: []string{"fault-test/"}}, getCM(agent, "match", "target"), getCM(c, "match", "target")},
		{"field manager", testenv.Fault{FieldManagers: []string{"fm-a"}}, createCM("fm-a"), createCM("fm-b")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fault
			f.Error = 500
			injected := env.InjectFault(t, f)
			if err := tc.miss(); apierrors.IsInternalError(err) {
				t.Errorf("a request differing in its %s was hit: %v", tc.name, err)
			}
			if err := tc.hit(); !apierrors.IsInternalError(err) {
				t.Errorf("a matching request was not hit: %v", err)
			}
			if n := len(injected.Hits()); n != 1 {
				t.Errorf("hits = %d, want 1", n)
			}
		})
	}
}

// watchEvents collects a watch's events until it ends (bounded).
func watchEvents(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	defer w.Stop()
	var evs []watch.Event
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("the watch did not end within 20s; events: %d", len(evs))
		}
	}
}

func TestFaultEndsWatches(t *testing.T) {
	env, c := faultEnv(t)
	makeNamespace(t, c, "watched")
	ctx := t.Context()
	cms := c.CoreV1().ConfigMaps("watched")

	t.Run("AfterEvents", func(t *testing.T) {
		env.InjectFault(t, testenv.Fault{Namespaces: []string{"watched"}, Watch: &testenv.WatchEnd{AfterEvents: 2}})
		w, err := cms.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			makeConfigMap(t, c, "watched", fmt.Sprintf("cm-%d", i))
		}
		evs := watchEvents(t, w)
		if len(evs) != 2 || evs[0].Type != watch.Added || evs[1].Type != watch.Added {
			t.Errorf("events %v, want two ADDED, then the end", evs)
		}
	})
	t.Run("Gone", func(t *testing.T) {
		cm, err := cms.Get(ctx, "cm-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f := env.InjectFault(t, testenv.Fault{Resources: []string{"configmaps"}, Watch: &testenv.WatchEnd{Gone: true}})
		// Only watches: a get goes through.
		if _, err := cms.Get(ctx, "cm-0", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		evs := watchEvents(t, w)
		if len(evs) != 1 || evs[0].Type != watch.Error {
			t.Fatalf("events %v, want one ERROR", evs)
		}
		err = apierrors.FromObject(evs[0].Object)
		if !apierrors.IsResourceExpired(err) || !strings.HasPrefix(err.Error(), "too old resource version: "+cm.ResourceVersion) {
			t.Errorf("error event %v, want 410 Expired, too old resource version", err)
		}
		if hits := f.Hits(); len(hits) != 1 || hits[0].Verb != "watch" {
			t.Errorf("hits %+v, want the watch", hits)
		}
	})
}

func TestFaultEndpointIsForAdmins(t *testing.T) {
	env, c := faultEnv(t)
	makeNamespace(t, c, "remote")
	ctx := t.Context()
	admin := c.CoreV1().RESTClient()
	// Lists of config maps only: the controllers write in the namespace too.
	body, _ := json.Marshal(testenv.Fault{Name: "remote", Namespaces: []string{"remote"}, Verbs: []string{"list"},
		Resources: []string{"configmaps"}, Error: 503})
	if err := admin.Post().AbsPath(faults.Path).Body(body).Do(ctx).Error(); err != nil {
		t.Fatalf("adding: %v", err)
	}
	if _, err := c.CoreV1().ConfigMaps("remote").List(ctx, metav1.ListOptions{}); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("list under the added fault: %v, want 503", err)
	}
	raw, err := admin.Get().AbsPath(faults.Path).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var listed []faults.Listed
	if err := json.Unmarshal(raw, &listed); err != nil || len(listed) != 1 || listed[0].Name != "remote" || listed[0].Hits != 1 {
		t.Errorf("listed %s (%v), want remote with one hit", raw, err)
	}

	bob := clientFor(t, env.ConfigFor("bob")).CoreV1().RESTClient()
	if err := bob.Get().AbsPath(faults.Path).Do(ctx).Error(); !apierrors.IsForbidden(err) {
		t.Errorf("bob listing faults: %v, want forbidden", err)
	}
	if err := bob.Delete().AbsPath(faults.Path, "remote").Do(ctx).Error(); !apierrors.IsForbidden(err) {
		t.Errorf("bob removing a fault: %v, want forbidden", err)
	}

	if err := admin.Delete().AbsPath(faults.Path, "remote").Do(ctx).Error(); err != nil {
		t.Fatalf("removing: %v", err)
	}
	if _, err := c.CoreV1().ConfigMaps("remote").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list after removal: %v", err)
	}
	if env.ControlPlane().Faults().Active() {
		t.Error("rules still active after the last was removed")
	}
}

func TestFaultSparesNonResourceAndForbiddenRequests(t *testing.T) {
	env, c := faultEnv(t)
	everything := env.InjectFault(t, testenv.Fault{Error: 500})
	ctx := t.Context()
	for _, path := range []string{"/version", "/readyz", "/api", "/apis"} {
		if err := c.CoreV1().RESTClient().Get().AbsPath(path).Do(ctx).Error(); err != nil {
			t.Errorf("GET %s: %v, want it served", path, err)
		}
	}
	// Faults come after authorization: a request refused there stays refused.
	bob := clientFor(t, quiet(env.ConfigFor("bob")))
	if _, err := bob.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bob listing secrets: %v, want forbidden", err)
	}
	if hits := everything.Hits(); len(hits) != 0 {
		t.Errorf("hits %+v, want none", hits)
	}
	if _, err := c.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsInternalError(err) {
		t.Errorf("the admin listing secrets: %v, want the injected 500", err)
	}
}

// A webhook time-out fault makes the webhooks of matched requests time out
// as webhooks that do not answer: each call waits its timeoutSeconds and
// fails with kube's error, and its failurePolicy decides; the webhook
// server never sees the call. Webhooks the rule does not name are called.
func TestFaultTimesOutWebhooks(t *testing.T) {
	sideEffects := admissionregistrationv1.SideEffectClassNone
	fail, ignore := admissionregistrationv1.Fail, admissionregistrationv1.Ignore
	timeout := int32(1)
	hook := func(name string, policy *admissionregistrationv1.FailurePolicyType) admissionregistrationv1.ValidatingWebhook {
		url := "https://127.0.0.1/" + strings.SplitN(name, ".", 2)[0]
		return admissionregistrationv1.ValidatingWebhook{
			Name:         name,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"hooked": "true"}},
			FailurePolicy:           policy,
			SideEffects:             &sideEffects,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
		}
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "timeouts"},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{hook("strict.devplane.dev", &fail), hook("lenient.devplane.dev", &ignore)},
	}
	env := testenv.StartT(t, testenv.Options{Webhooks: testenv.WebhookOptions{Validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{cfg}}})
	ln, err := env.WebhookListener()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls := map[string]int{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		mu.Lock()
		calls[r.URL.Path]++
		mu.Unlock()
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(review)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	callsTo := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range calls {
			out[k] = v
			calls[k] = 0
		}
		return out
	}
	c := clientFor(t, quiet(env.Config()))
	makeNamespace(t, c, "hooked")
	create := func(name string) (time.Duration, error) {
		start := time.Now()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"hooked": "true"}}}
		_, err := c.CoreV1().ConfigMaps("hooked").Create(t.Context(), cm, metav1.CreateOptions{})
		return time.Since(start), err
	}
	const webhookTimeout = time.Second

	if _, err := create("before"); err != nil {
		t.Fatalf("create with both webhooks answering: %v", err)
	}
	if got := callsTo(); got["/strict"] != 1 || got["/lenient"] != 1 {
		t.Fatalf("calls without a fault: %v, want each webhook once", got)
	}

	// The lenient webhook (failurePolicy Ignore) times out: the create
	// goes through once its timeout has passed.
	lenient := env.InjectFault(t, testenv.Fault{Name: "lenient-hangs", Resources: []string{"configmaps"},
		WebhookTimeout: &testenv.WebhookTimeout{Webhooks: []string{"lenient.devplane.dev"}}})
	took, err := create("lenient-times-out")
	if err != nil {
		t.Fatalf("create with the Ignore webhook timing out: %v", err)
	}
	if took < webhookTimeout {
		t.Errorf("create took %s, want at least the webhook's %s timeout", took, webhookTimeout)
	}
	if got := callsTo(); got["/strict"] != 1 || got["/lenient"] != 0 {
		t.Errorf("calls with lenient timing out: %v, want strict once, lenient never", got)
	}
	if len(lenient.Hits()) != 1 {
		t.Errorf("hits %v, want 1", lenient.Hits())
	}
	lenient.Remove()

	// Every webhook times out: the strict one (Fail) refuses the create
	// with kube's words for a call that timed out.
	env.InjectFault(t, testenv.Fault{Name: "all-hang", Verbs: []string{"create"}, WebhookTimeout: &testenv.WebhookTimeout{}})
	took, err = create("strict-times-out")
	if !apierrors.IsInternalError(err) {
		t.Fatalf("create with the Fail webhook timing out: %v, want an internal error", err)
	}
	_, port := env.WebhookAddr()
	want := fmt.Sprintf(`failed calling webhook "strict.devplane.dev": failed to call webhook: Post "https://127.0.0.1:%d/strict?timeout=1s": context deadline exceeded`, port)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to say %q", err, want)
	}
	if took < webhookTimeout {
		t.Errorf("refusal took %s, want at least the webhook's %s timeout", took, webhookTimeout)
	}
	if got := callsTo(); got["/strict"] != 0 || got["/lenient"] != 0 {
		t.Errorf("calls with every webhook timing out: %v, want none", got)
	}
	if _, err := c.CoreV1().ConfigMaps("hooked").Get(t.Context(), "strict-times-out", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused ConfigMap: %v, want NotFound", err)
	}
}
