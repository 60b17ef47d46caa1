package server

import (
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/devplane/devplane/certs"
)

// countingConn records the writes that reach it.
type countingConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

// While held, writes under TLS are gathered and leave as one on release;
// otherwise each goes straight through.
func TestHeldConnGathersWrites(t *testing.T) {
	under := &countingConn{}
	c := &heldConn{Conn: under}
	_, _ = c.Write([]byte("a"))
	c.hold()
	for _, s := range []string{"b", "cd", "efg"} {
		_, _ = c.Write([]byte(s))
	}
	if len(under.writes) != 1 {
		t.Fatalf("%d writes reached the connection while held, want only the one before", len(under.writes))
	}
	if err := c.release(); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("h"))
	var got []string
	for _, w := range under.writes {
		got = append(got, string(w))
	}
	if want := []string{"a", "bcdefg", "h"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("writes = %q, want %q", got, want)
	}
}

// tlsPair is a real TLS connection over loopback TCP: the server's side as
// Run builds it (a heldConn under TLS, a batchConn over it), the client's
// plain.
func tlsPair(t *testing.T) (server net.Conn, client *tls.Conn) {
	t.Helper()
	bundle, err := certs.Ensure(certs.Options{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	serving, err := bundle.Serving.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := keepAliveListener{ln}.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{serving}})
		if tc.Handshake() != nil {
			accepted <- nil
			return
		}
		accepted <- newBatchConn(tc)
	}()
	client, err = tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: bundle.CAPool()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server = <-accepted
	if server == nil {
		t.Fatal("server side of the handshake failed")
	}
	if _, ok := server.(*batchConn); !ok {
		t.Fatalf("server connection is a %T, want a batchConn", server)
	}
	return server, client
}

// Everything written arrives, in order, whatever the batching; Close lets
// what was written leave before the connection ends.
func TestBatchConnDeliversInOrderAndFlushesOnClose(t *testing.T) {
	server, client := tlsPair(t)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(client)
		got <- b
	}()
	var want bytes.Buffer
	for i := range 5000 {
		chunk := bytes.Repeat([]byte{byte(i)}, 1+i%4000)
		want.Write(chunk)
		if _, err := server.Write(chunk); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := server.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, want.Bytes()) {
			t.Fatalf("read %d bytes, want the %d written, in order", len(b), want.Len())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("client never saw the end of the stream")
	}
	if _, err := server.Write([]byte("x")); err == nil {
		t.Fatal("write after Close succeeded")
	}
}

// A write that fails on the socket fails the writes after it.
func TestBatchConnReportsWriteErrors(t *testing.T) {
	server, _ := tlsPair(t)
	// Close the TCP connection under TLS: the next batch's write fails.
	_ = server.(*batchConn).under.Conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := server.Write([]byte("after")); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("writes kept succeeding on a closed connection")
		}
		time.Sleep(time.Millisecond)
	}
	_ = server.Close()
}
