package testenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/devplane/devplane/apiserver/snapshot"
)

// Snapshot is an Instance's whole API state at one moment: every object
// (built-in and custom), every CRD, the IP and node-port allocations, but
// no Events. Take one with Instance.Snapshot once a suite's fixtures are
// loaded; then Restore it between specs, or start each parallel spec on a
// copy of its own with Options.From (a fork).
//
// A Snapshot is read-only: it may be restored and forked any number of
// times, from several goroutines.
type Snapshot struct {
	state *snapshot.Snapshot
	// pki is the instance's certificates, which a fork shares: the same
	// CA, serving certificate and service-account key, so certificates
	// and tokens issued before the snapshot keep working in the fork.
	pki map[string][]byte
}

// Revision is the etcd revision the snapshot was taken at: every object
// in it had a resourceVersion at or below it.
func (s *Snapshot) Revision() int64 { return s.state.Revision }

// Objects is how many stored objects the snapshot holds (IP and node-port
// allocations included).
func (s *Snapshot) Objects() int { return len(s.state.KVs) }

// WriteTo writes the snapshot in the format of `devplane snapshot save`
// (the API state only, not the certificates).
func (s *Snapshot) WriteTo(w io.Writer) (int64, error) { return s.state.WriteTo(w) }

// ReadSnapshot reads a file written by Snapshot.WriteTo or `devplane
// snapshot save`. An instance forked from it gets certificates of its own.
func ReadSnapshot(r io.Reader) (*Snapshot, error) {
	state, err := snapshot.Read(r)
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	return &Snapshot{state: state}, nil
}

// Snapshot reads the whole API state, in one read at one etcd revision.
func (i *Instance) Snapshot(ctx context.Context) (*Snapshot, error) {
	state, err := i.cp.TakeSnapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	pki, err := readPKI(filepath.Join(i.dir, "pki"))
	if err != nil {
		return nil, fmt.Errorf("testenv: snapshot: %w", err)
	}
	return &Snapshot{state: state, pki: pki}, nil
}

// Restore brings the API back to s's state: objects created since are
// deleted, deleted ones come back, changed ones get their old content
// (uid, creationTimestamp, spec, status...), in milliseconds and without
// admission or finalizers. Time moves forward: each object it touches gets
// a new, higher resourceVersion, and a watch running across the restore
// receives ADDED, MODIFIED and DELETED events that bring it to s's state
// (an informer never relists, and never sees a resourceVersion go back).
// Restore returns once every watch cache holds that state and the
// restored CRDs are served, so a list right after sees it.
//
// s may come from another Instance (or a file): objects are restored as
// they were there; this Instance keeps its own certificates.
func (i *Instance) Restore(ctx context.Context, s *Snapshot) error {
	if _, err := i.cp.RestoreSnapshot(ctx, s.state); err != nil {
		return fmt.Errorf("testenv: restore: %w", err)
	}
	return nil
}

// readPKI reads the certificate files of a data dir.
func readPKI(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = data
	}
	return files, nil
}

// writePKI puts a snapshot's certificates in a new data dir.
func writePKI(dir string, files map[string][]byte) error {
	if len(files) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
