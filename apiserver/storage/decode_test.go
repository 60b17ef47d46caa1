package storage

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestStoreConfigDecode checks that Config.Decode is tried first, that its
// objects get their resourceVersion, and that declining falls back to the
// codec.
func TestStoreConfigDecode(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	calls := 0
	cfg.Decode = func(data []byte, _, into runtime.Object) (bool, error) {
		calls++
		if strings.Contains(string(data), "fast") {
			into.(*corev1.ConfigMap).Name = "from-decode"
			return true, nil
		}
		if strings.Contains(string(data), "broken") {
			return false, errors.New("broken")
		}
		return false, nil
	}
	store := NewStore(testClient, cfg)
	for _, name := range []string{"fast", "slow", "broken"} {
		if err := store.Create(ctx, objectKey(cfg, "ns", name), newConfigMap("ns", name, nil), &corev1.ConfigMap{}, 0); err != nil && name != "broken" {
			t.Fatal(err)
		}
	}

	got := &corev1.ConfigMap{}
	if err := store.Get(ctx, objectKey(cfg, "ns", "fast"), GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "from-decode" || got.ResourceVersion != modRevision(t, objectKey(cfg, "ns", "fast")) {
		t.Fatalf("handled by Decode: got name %q rv %q", got.Name, got.ResourceVersion)
	}
	got = &corev1.ConfigMap{}
	if err := store.Get(ctx, objectKey(cfg, "ns", "slow"), GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "slow" || got.ResourceVersion != modRevision(t, objectKey(cfg, "ns", "slow")) {
		t.Fatalf("declined by Decode: got name %q rv %q", got.Name, got.ResourceVersion)
	}
	err := store.Get(ctx, objectKey(cfg, "ns", "broken"), GetOptions{}, &corev1.ConfigMap{})
	if !apierrors.IsInternalError(err) {
		t.Fatalf("Decode error: want an internal error, got %v", err)
	}
	if calls == 0 {
		t.Fatal("Decode never called")
	}
}
