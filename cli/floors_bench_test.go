package cli_test

// The floors of BenchmarkServedLoad, served from a child process over TLS
// and HTTP/2 set up by devplane's own code (server.ConfigureHTTP2) and
// fetched by client-go's transport:
//   - the transfer floor of its lists: the very bytes devplane answered,
//     served from memory. No API server answers a list faster over that
//     transport, so kube's time over this one bounds any ratio of list
//     times.
//   - the write floor of its creates and updates: each request's body
//     stored as it came in an embedded etcd (fsync on, as devplane runs
//     it) and sent back, with no decoding, validation, admission, managed
//     fields or watch cache. No API server that stores each write durably
//     in etcd answers client-go's writes faster on this machine, so this
//     rate over kube's bounds the ratios of write rates.

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/devplane/devplane/apiserver/server"
	"github.com/devplane/devplane/certs"
	"github.com/devplane/devplane/embedded"
)

// floorServerEnv names the directory whose files the child serves.
const floorServerEnv = "DEVPLANE_BENCH_FLOOR_SERVER"

// listBodies are the list responses devplane gave, by encoding.
type listBodies map[string][]byte

// floors serves bodies from a child process and times fetching each, as
// runLoad times devplane's raw lists, then creates and updates ConfigMaps
// through it as runLoad does (the child storing each body in its own etcd).
func floors(b *testing.B, bodies listBodies) *loadFigures {
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
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0])
	child.Env = append(os.Environ(), floorServerEnv+"="+dir)
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
		b.Fatalf("floor server: %v", err)
	}
	cfg := &rest.Config{Host: strings.TrimSpace(url), TLSClientConfig: rest.TLSClientConfig{CAData: bundle.CA.CertPEM}}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	f := &loadFigures{server: "floor"}
	n := loadObjects()
	for _, enc := range []string{"json", "protobuf"} {
		body, ok := bodies[enc]
		if !ok {
			continue
		}
		var times []time.Duration
		for range 7 {
			took, got := timedFetch(b, ctx, hc, cfg.Host+"/"+enc, "*/*")
			times = append(times, took)
			if got != int64(len(body)) {
				b.Fatalf("floor server sent %d bytes of %d", got, len(body))
			}
		}
		f.set(fmt.Sprintf("%s list of %d, server+transfer ms", enc, n), ms(percentile(times, 50)))
	}
	for _, proto := range []bool{false, true} {
		c, enc := loadConfig(cfg, proto)
		cs, err := kubernetes.NewForConfig(c)
		if err != nil {
			b.Fatal(err)
		}
		cms := cs.CoreV1().ConfigMaps("floor-" + enc)
		name := func(i int) string { return "cm-" + strconv.Itoa(i) }
		payload := strings.Repeat("x", 1400)
		parallel(b, ctx, n, func(i int) error {
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name(i)}, Data: map[string]string{"payload": payload}}, metav1.CreateOptions{})
			if err == nil && cm.Name != name(i) {
				err = fmt.Errorf("floor server answered %q for %q", cm.Name, name(i))
			}
			return err
		}, f, enc+" create/s")
		parallel(b, ctx, n, func(i int) error {
			_, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name(i)}, Data: map[string]string{"payload": payload, "v": "2"}}, metav1.UpdateOptions{})
			return err
		}, f, enc+" update/s")
	}
	return f
}

// serveFloors runs in the child: over TLS (dir's certificate bundle) and
// HTTP/2 set up as devplane's server is, it serves each file of dir at
// /<name>, and stores the body of each POST (under a key of its own, if
// absent, as a create does) and PUT (under its path) in an etcd of its own
// run as devplane runs it, answering with the body. It prints its URL.
func serveFloors(dir string) {
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
	etcd, err := embedded.Start(context.Background(), embedded.Options{DataDir: filepath.Join(dir, "etcd"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fail(err)
	}
	kv := etcd.Client()
	var seq atomic.Int64
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				body, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
				if !ok {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				_, _ = w.Write(body)
				return
			}
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			status := http.StatusOK
			switch r.Method {
			case http.MethodPost:
				key := r.URL.Path + "/" + strconv.FormatInt(seq.Add(1), 10)
				resp, err := kv.Txn(r.Context()).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).Then(clientv3.OpPut(key, string(body))).Commit()
				if err != nil || !resp.Succeeded {
					http.Error(w, fmt.Sprintf("store %s: %v", key, err), http.StatusConflict)
					return
				}
				status = http.StatusCreated
			case http.MethodPut:
				if _, err := kv.Put(r.Context(), r.URL.Path, string(body)); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
			default:
				http.Error(w, "not here", http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(status)
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
	fmt.Fprintln(os.Stderr, "floor server:", err)
	os.Exit(1)
}
