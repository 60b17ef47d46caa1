// Package testetcd runs the one etcd a package's tests share. It imports
// nothing of devplane's but embedded, so that in-package tests of packages
// controlplane builds on (storage, ipalloc, endpoints) can use it without an
// import cycle.
package testetcd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/devplane/devplane/embedded"
)

// Main runs m's tests against a fresh embedded etcd and exits with their
// status. setUp gets the etcd before the tests run; the tearDown it returns,
// when not nil, runs after them.
func Main(m *testing.M, setUp func(embedded.Etcd) (tearDown func())) {
	os.Exit(run(m, setUp))
}

func run(m *testing.M, setUp func(embedded.Etcd) func()) int {
	dir, err := os.MkdirTemp("", "test-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Without fsync (the data is thrown away) and also on a 127.0.0.1
	// client URL (Endpoints), so tests can dial a second, independent client.
	// etcd's logs are dropped: shutdown logs "server closed" errors.
	etcd, err := embedded.Start(context.Background(), embedded.Options{
		DataDir:         dir,
		UnsafeNoFsync:   true,
		ListenClientURL: true,
		Logger:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting etcd:", err)
		return 1
	}
	defer etcd.Stop()
	if tearDown := setUp(etcd); tearDown != nil {
		defer tearDown()
	}
	return m.Run()
}
