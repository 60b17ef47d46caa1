package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

func TestPlanWritesOnlyDifferences(t *testing.T) {
	current := []*mvccpb.KeyValue{
		{Key: []byte("/registry/a"), Value: []byte("same"), ModRevision: 5},
		{Key: []byte("/registry/b"), Value: []byte("new"), ModRevision: 6},
		{Key: []byte("/registry/c"), Value: []byte("extra"), ModRevision: 7},
		{Key: []byte("/registry/e"), Value: []byte("event"), ModRevision: 8, Lease: 42},
		{Key: []byte("/registry/f"), Value: []byte("leased"), ModRevision: 9, Lease: 42},
	}
	want := []KV{
		{"/registry/a", []byte("same")},
		{"/registry/b", []byte("old")},
		{"/registry/d", []byte("gone")},
		{"/registry/f", []byte("leased")},
	}
	var got []string
	for _, o := range plan(current, want) {
		kind := "put"
		if o.delete {
			kind = "delete"
		}
		got = append(got, fmt.Sprintf("%s %s %s @%d", kind, o.key, o.value, o.modRevision))
	}
	wantOps := []string{
		"delete /registry/c  @7",
		"delete /registry/e  @8",
		"put /registry/b old @6",
		"put /registry/d gone @0",
		"put /registry/f leased @9", // the same value, but without the lease
	}
	if !slices.Equal(got, wantOps) {
		t.Errorf("plan:\n%q\nwant\n%q", got, wantOps)
	}
}

func TestFileRoundTripAndDamage(t *testing.T) {
	s := &Snapshot{Revision: 1234, KVs: []KV{
		{"/registry/configmaps/default/a", []byte("value a")},
		{"/registry/configmaps/default/b", nil},
		{"/registry/namespaces/default", bytes.Repeat([]byte{0, 1, 2, '\n'}, 100_000)},
	}}
	var buf bytes.Buffer
	n, err := s.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo: %d, %v (wrote %d)", n, err, buf.Len())
	}
	got, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != s.Revision || len(got.KVs) != len(s.KVs) {
		t.Fatalf("read %d keys at %d", len(got.KVs), got.Revision)
	}
	for i := range s.KVs {
		if got.KVs[i].Key != s.KVs[i].Key || !bytes.Equal(got.KVs[i].Value, s.KVs[i].Value) {
			t.Errorf("key %d: %q differs", i, got.KVs[i].Key)
		}
	}

	file := buf.Bytes()
	outOfOrder := &Snapshot{KVs: []KV{{"/registry/b", nil}, {"/registry/a", nil}}}
	var bad bytes.Buffer
	outOfOrder.WriteTo(&bad)
	elsewhere := &Snapshot{KVs: []KV{{"/other/a", nil}}}
	var other bytes.Buffer
	elsewhere.WriteTo(&other)
	flipped := bytes.Clone(file)
	flipped[len(flipped)-100] ^= 1
	for name, data := range map[string][]byte{
		"empty":        nil,
		"not ours":     []byte("hello\n"),
		"truncated":    file[:len(file)-1],
		"cut in a key": file[:60],
		"flipped bit":  flipped,
		"trailing":     append(bytes.Clone(file), 0),
		"out of order": bad.Bytes(),
		"not registry": other.Bytes(),
	} {
		if _, err := Read(bytes.NewReader(data)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
}

func TestKeysUnderPrefixAndServedCRDs(t *testing.T) {
	crd := `{"spec":{"group":"g.io","names":{"plural":"things"},"versions":[{"name":"v1","served":true},{"name":"v2","served":false}],` +
		`"schema":{"big":[1,2,3]}},"status":{"conditions":[{"type":"Established","status":"True"}]}}`
	pending := `{"spec":{"group":"h.io","names":{"plural":"others"},"versions":[{"name":"v1","served":true}]},"status":{}}`
	s := &Snapshot{KVs: []KV{
		{CRDKeys + "others.h.io", []byte(pending)},
		{CRDKeys + "things.g.io", []byte(crd)},
		{"/registry/configmaps/a", nil},
	}}
	if got := s.Keys(CRDKeys); len(got) != 2 {
		t.Errorf("Keys(CRDKeys): %d", len(got))
	}
	want := []Served{{CRDKeys + "things.g.io", "g.io", "v1", "things"}}
	if got := s.ServedByCRDs(); !slices.Equal(got, want) {
		t.Errorf("ServedByCRDs: %v, want %v", got, want)
	}
}
