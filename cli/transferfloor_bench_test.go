package cli_test

// The transfer floor of BenchmarkServedLoad's lists: the very bytes
// devplane answered, served from memory over TLS and HTTP/2 set up by
// devplane's own code (server.ConfigureHTTP2) in another process, fetched
// by client-go's transport. No API server answers a list faster over that transport, so
// kube's time over this one bounds any ratio of list times.

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/server"
	"github.com/devplane/devplane/certs"
)

// bytesServerEnv names the directory whose files the child serves.
const bytesServerEnv = "DEVPLANE_BENCH_BYTES_SERVER"

// listBodies are the list responses devplane gave, by encoding.
type listBodies map[string][]byte

// transferFloor serves bodies from a child process and times fetching
// each, as runLoad times devplane's raw lists.
func transferFloor(b *testing.B, bodies listBodies) *loadFigures {
	b.Helper()
	dir := b.TempDir()
	for enc, body := range bodies {
		if err := os.WriteFile(filepath.Join(dir, enc), body, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	// The child serves with this bundle's serving certificate (it loads
	// what is here); the client trusts its CA.
	bundle, err := servingBundle(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0])
	child.Env = append(os.Environ(), bytesServerEnv+"="+dir)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("bytes server: %v", err)
	}
	hc, err := rest.HTTPClientFor(&rest.Config{Host: strings.TrimSpace(url), TLSClientConfig: rest.TLSClientConfig{CAData: bundle.CA.CertPEM}})
	if err != nil {
		b.Fatal(err)
	}
	f := &loadFigures{server: "bytes alone"}
	n := loadObjects()
	for _, enc := range []string{"json", "protobuf"} {
		body, ok := bodies[enc]
		if !ok {
			continue
		}
		var times []time.Duration
		for range 7 {
			took, got := timedFetch(b, ctx, hc, strings.TrimSpace(url)+"/"+enc, "*/*")
			times = append(times, took)
			if got != int64(len(body)) {
				b.Fatalf("bytes server sent %d bytes of %d", got, len(body))
			}
		}
		f.set(fmt.Sprintf("%s list of %d, server+transfer ms", enc, n), ms(percentile(times, 50)))
	}
	return f
}

// serveBytes runs in the child: it serves each file of dir at /<name> over
// TLS (dir's certificate bundle) and HTTP/2 set up as devplane's server is,
// and prints its URL.
func serveBytes(dir string) {
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		fail(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue // the certificates
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			fail(err)
		}
		files[e.Name()] = data
	}
	bundle, err := servingBundle(dir)
	if err != nil {
		fail(err)
	}
	serving, err := bundle.Serving.TLSCertificate()
	if err != nil {
		fail(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
		}),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{serving}, NextProtos: []string{"h2"}},
	}
	if err := server.ConfigureHTTP2(srv, 250); err != nil {
		fail(err)
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		fail(err)
	}
	fmt.Printf("https://%s\n", ln.Addr())
	fail(srv.Serve(server.NewTLSListener(ln, srv.TLSConfig)))
}

// servingBundle is the certificate bundle kept in dir/pki: created by the
// parent, loaded by the child.
func servingBundle(dir string) (*certs.Bundle, error) {
	return certs.Ensure(certs.Options{Dir: filepath.Join(dir, "pki"), Logger: slog.New(slog.DiscardHandler)})
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bytes server:", err)
	os.Exit(1)
}
