package storage

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Versions reads an object's stored versions back, newest first, across
// a deletion and a re-creation, and stops where compaction did.
func TestVersionsAcrossADeletion(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	key := objectKey(cfg, "ns1", "web")
	var want []string // "<rev> <data k>" or "<rev> deleted", oldest first
	write := func(value string, create bool) {
		t.Helper()
		out := &corev1.ConfigMap{}
		var err error
		if create {
			err = store.Create(ctx, key, newConfigMap("ns1", "web", map[string]string{"k": value}), out, 0)
		} else {
			err = store.GuaranteedUpdate(ctx, key, out, false, nil, func(in runtime.Object) (runtime.Object, error) {
				cm := in.(*corev1.ConfigMap).DeepCopy()
				cm.Data["k"] = value
				return cm, nil
			})
		}
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, out.ResourceVersion+" "+value)
	}
	write("1", true)
	write("2", false)
	write("3", false)
	gone := &corev1.ConfigMap{}
	if err := store.Delete(ctx, key, gone, nil, nil); err != nil {
		t.Fatal(err)
	}
	want = append(want, gone.ResourceVersion+" deleted")
	deletedAt, _ := strconv.ParseInt(gone.ResourceVersion, 10, 64)
	// Another key's write between: a revision that is not a deletion of key.
	if err := store.Create(ctx, objectKey(cfg, "ns1", "other"), newConfigMap("ns1", "other", nil), nil, 0); err != nil {
		t.Fatal(err)
	}
	write("4", true)
	write("5", false)
	slices.Reverse(want)

	describe := func(vs []Version) []string {
		var got []string
		for _, v := range vs {
			if v.Deleted {
				got = append(got, fmt.Sprintf("%d deleted", v.Revision))
				continue
			}
			cm := v.Object.(*corev1.ConfigMap)
			if cm.ResourceVersion != strconv.FormatInt(v.Revision, 10) {
				t.Errorf("version %d decoded with resourceVersion %s", v.Revision, cm.ResourceVersion)
			}
			if v.Created != (cm.Data["k"] == "1" || cm.Data["k"] == "4") {
				t.Errorf("version %d (k=%s): created %v", v.Revision, cm.Data["k"], v.Created)
			}
			got = append(got, fmt.Sprintf("%d %s", v.Revision, cm.Data["k"]))
		}
		return got
	}
	versions, compacted, truncated, err := store.Versions(ctx, key, []int64{deletedAt + 1, deletedAt}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(versions); !slices.Equal(got, want) || compacted || truncated {
		t.Fatalf("versions %q (compacted %v, truncated %v), want %q", got, compacted, truncated, want)
	}
	// Without the deletion, only the live object's versions.
	versions, _, _, err = store.Versions(ctx, key, nil, 0)
	if got := describe(versions); err != nil || !slices.Equal(got, want[:2]) {
		t.Fatalf("live versions %q, %v; want %q", got, err, want[:2])
	}
	versions, _, truncated, err = store.Versions(ctx, key, []int64{deletedAt}, 3)
	if got := describe(versions); err != nil || !slices.Equal(got, want[:3]) || !truncated {
		t.Fatalf("3 versions %q (truncated %v), %v; want %q truncated", got, truncated, err, want[:3])
	}

	if _, err := CompactNow(ctx, testClient); err != nil {
		t.Fatal(err)
	}
	versions, compacted, _, err = store.Versions(ctx, key, []int64{deletedAt}, 0)
	if got := describe(versions); err != nil || !slices.Equal(got, want[:1]) || !compacted {
		t.Fatalf("after compaction %q (compacted %v), %v; want %q compacted", got, compacted, err, want[:1])
	}
}
