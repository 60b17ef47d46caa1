package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/snapshot"
	"github.com/devplane/devplane/embedded"
)

// offlineTimeout bounds opening a stopped instance's etcd: a store some
// other process holds open never answers.
const offlineTimeout = 15 * time.Second

// snapshotCommand saves and restores an instance's whole API state: a
// running instance's through its /debug/devplane/snapshot endpoint (admin
// kubeconfig), a stopped one's in its data dir's etcd.
func snapshotCommand() *cli.Command {
	var inst instanceFlags
	var kubeconfig string
	target := func() []cli.Flag {
		return inst.flags(&cli.StringFlag{Name: "kubeconfig", Destination: &kubeconfig,
			Usage: "an admin kubeconfig for a running instance (default: the instance's)"})
	}
	file := func(c *cli.Context, verb string) (string, error) {
		if c.NArg() > 1 && strings.HasPrefix(c.Args().Get(1), "-") {
			return "", exitf(1, "error: flags go before the file: devplane snapshot %s [flags] FILE", verb)
		}
		if c.NArg() != 1 {
			return "", exitf(1, "error: name one file: devplane snapshot %s [flags] FILE", verb)
		}
		return c.Args().First(), nil
	}
	return &cli.Command{
		Name:  "snapshot",
		Usage: "save an instance's whole API state to a file, or restore it (running or stopped)",
		Description: "A snapshot holds every object, CRD and custom resource, and the IP and node-port allocations\n" +
			"(not Events). Restoring writes the differences as new changes: resourceVersions move forward,\n" +
			"and watching clients receive the ADDED, MODIFIED and DELETED events that bring them to the\n" +
			"restored state.",
		Subcommands: []*cli.Command{
			{
				Name:      "save",
				Usage:     "write the instance's API state to FILE",
				ArgsUsage: "FILE",
				Flags:     target(),
				Action: func(c *cli.Context) error {
					path, err := file(c, "save")
					if err != nil {
						return err
					}
					s, err := takeSnapshot(c.Context, &inst, kubeconfig)
					if err != nil {
						return err
					}
					if err := writeSnapshotFile(path, s); err != nil {
						return exitf(1, "error: %v", err)
					}
					fmt.Fprintf(c.App.Writer, "saved %d objects (%.1f MB) at revision %d to %s\n", len(s.KVs), float64(s.Size())/1e6, s.Revision, path)
					return nil
				},
			},
			{
				Name:      "restore",
				Usage:     "make the instance's API state the one in FILE",
				ArgsUsage: "FILE",
				Flags:     target(),
				Action: func(c *cli.Context) error {
					path, err := file(c, "restore")
					if err != nil {
						return err
					}
					f, err := os.Open(path)
					if err != nil {
						return exitf(1, "error: %v", err)
					}
					s, err := snapshot.Read(f)
					f.Close()
					if err != nil {
						return exitf(1, "error: %s: %v", path, err)
					}
					res, err := restoreSnapshot(c.Context, &inst, kubeconfig, s)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "restored %s: %d objects written, %d deleted (revision %d)\n", path, res.Put, res.Deleted, res.Revision)
					return nil
				},
			},
		},
	}
}

// running reports whether the target is a running instance: one given
// by --kubeconfig, or whose data dir says its process is alive.
func running(inst *instanceFlags, kubeconfig string) (dir string, up bool, err error) {
	if kubeconfig != "" {
		return "", true, nil
	}
	if dir, err = inst.dir(); err != nil {
		return "", false, err
	}
	_, up, err = readState(dir)
	if err != nil {
		return "", false, exitf(1, "error: %v", err)
	}
	return dir, up, nil
}

func takeSnapshot(ctx context.Context, inst *instanceFlags, kubeconfig string) (*snapshot.Snapshot, error) {
	dir, up, err := running(inst, kubeconfig)
	if err != nil {
		return nil, err
	}
	if !up {
		var s *snapshot.Snapshot
		err := offline(ctx, dir, func(ctx context.Context, etcd embedded.Etcd) (err error) {
			s, err = snapshot.Take(ctx, etcd.Client())
			return err
		})
		return s, err
	}
	rc, err := snapshotClient(inst, kubeconfig)
	if err != nil {
		return nil, err
	}
	raw, err := rc.Get().AbsPath(snapshot.Path).DoRaw(ctx)
	if err != nil {
		return nil, exitf(1, "error: taking a snapshot: %v", err)
	}
	s, err := snapshot.Read(bytes.NewReader(raw))
	if err != nil {
		return nil, exitf(1, "error: the server's snapshot: %v", err)
	}
	return s, nil
}

func restoreSnapshot(ctx context.Context, inst *instanceFlags, kubeconfig string, s *snapshot.Snapshot) (snapshot.Result, error) {
	dir, up, err := running(inst, kubeconfig)
	if err != nil {
		return snapshot.Result{}, err
	}
	if !up {
		var res snapshot.Result
		err := offline(ctx, dir, func(ctx context.Context, etcd embedded.Etcd) (err error) {
			res, err = snapshot.Restore(ctx, etcd.Client(), s)
			return err
		})
		return res, err
	}
	rc, err := snapshotClient(inst, kubeconfig)
	if err != nil {
		return snapshot.Result{}, err
	}
	var body bytes.Buffer
	if _, err := s.WriteTo(&body); err != nil {
		return snapshot.Result{}, exitf(1, "error: %v", err)
	}
	raw, err := rc.Put().AbsPath(snapshot.Path).SetHeader("Content-Type", snapshot.ContentType).
		Body(body.Bytes()).DoRaw(ctx)
	if err != nil {
		return snapshot.Result{}, exitf(1, "error: restoring: %v", err)
	}
	var res snapshot.Result
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, exitf(1, "error: the server's answer: %v", err)
	}
	return res, nil
}

// snapshotClient reaches the instance's API with its admin kubeconfig; a
// snapshot takes longer than a fault's request.
func snapshotClient(inst *instanceFlags, kubeconfig string) (rest.Interface, error) {
	return adminClient(inst, kubeconfig, 5*time.Minute)
}

// offline runs fn on a stopped instance's etcd, opened in its data dir.
func offline(ctx context.Context, dir string, fn func(context.Context, embedded.Etcd) error) error {
	etcdDir := filepath.Join(dir, "etcd")
	if _, err := os.Stat(etcdDir); err != nil {
		return exitf(1, "error: no instance at %s (no etcd data: %v)", dir, errors.Unwrap(err))
	}
	startCtx, cancel := context.WithTimeout(ctx, offlineTimeout)
	defer cancel()
	etcd, err := embedded.Start(startCtx, embedded.Options{
		DataDir: etcdDir,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return exitf(1, "error: opening the stopped instance's etcd in %s (is a devplane running on it?): %v", etcdDir, err)
	}
	err = fn(ctx, etcd)
	if stopErr := etcd.Stop(); err == nil && stopErr != nil {
		err = stopErr
	}
	if err != nil {
		return exitf(1, "error: %v", err)
	}
	return nil
}

// writeSnapshotFile writes s to path through a temporary file, so a
// failed save never leaves half a snapshot under the name.
func writeSnapshotFile(path string, s *snapshot.Snapshot) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := s.WriteTo(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
