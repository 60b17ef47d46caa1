package server

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"
)

// HTTP/2's server writes a connection's frames through a 4 KB buffer, so a
// busy connection (a thousand watches, a big list) reaches the socket in
// 4 KB writes, and TLS turns a 16 KB DATA frame plus its 9-byte header into
// two records: each a write system call, which was a sixth of the server's
// CPU under watch fan-out. batchConn sits between HTTP/2 and TLS and
// collects what HTTP/2 writes while the previous batch is being written;
// heldConn sits under TLS and sends a batch's records in one write. An idle
// connection's write goes out at once, so nothing waits for company.

const (
	// maxBatch bounds what HTTP/2 may write ahead of the socket; beyond it
	// its writes wait, as they would on a full socket buffer.
	maxBatch = 64 << 10
	// closeFlush bounds how long Close waits for written bytes to leave.
	closeFlush = 2 * time.Second
)

// batchBuffers are shared by all connections: one is taken when a
// connection starts writing and given back when it goes idle. Room above
// maxBatch takes the write that crosses it (HTTP/2 writes at most a frame,
// 16 KB unless the client allows more) and TLS's record overhead.
var batchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, maxBatch+maxBatch/2); return &b }}

func takeBuffer() []byte { return (*batchBuffers.Get().(*[]byte))[:0] }

func giveBuffer(b []byte) {
	if cap(b) == maxBatch+maxBatch/2 {
		batchBuffers.Put(&b)
	}
}

// heldConn is the TCP connection under TLS. While held, its writes are
// gathered and sent together on release.
type heldConn struct {
	net.Conn
	mu      sync.Mutex
	holding bool
	buf     []byte
}

func (c *heldConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holding && len(c.buf)+len(p) <= cap(c.buf) {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

func (c *heldConn) hold() {
	c.mu.Lock()
	c.holding = true
	c.buf = takeBuffer()
	c.mu.Unlock()
}

func (c *heldConn) release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holding = false
	err := c.flushLocked()
	giveBuffer(c.buf)
	c.buf = nil
	return err
}

func (c *heldConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// batchConn is the TLS connection as HTTP/2 writes to it: a write is
// queued and returns, and one goroutine per connection writes what has
// queued since its last write as one TLS write. A write error is returned
// by the writes after it (HTTP/2 then closes the connection).
type batchConn struct {
	*tls.Conn
	under *heldConn

	mu      sync.Mutex
	changed *sync.Cond // queued bytes, written bytes, closing
	queued  []byte     // from batchBuffers while not idle
	spare   []byte
	err     error
	closing bool
	done    chan struct{} // the writer has exited
}

var errBatchConnClosed = errors.New("connection closed")

// newBatchConn wraps a server-side TLS connection whose underlying
// connection is a heldConn; for any other it returns the connection as is.
func newBatchConn(c *tls.Conn) net.Conn {
	under, ok := c.NetConn().(*heldConn)
	if !ok {
		return c
	}
	b := &batchConn{Conn: c, under: under, done: make(chan struct{})}
	b.changed = sync.NewCond(&b.mu)
	go b.writeLoop()
	return b
}

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.err == nil && !b.closing && len(b.queued) >= maxBatch {
		b.changed.Wait()
	}
	if b.err != nil {
		return 0, b.err
	}
	if b.closing {
		return 0, errBatchConnClosed
	}
	wake := len(b.queued) == 0
	if b.queued == nil {
		b.queued = takeBuffer()
	}
	b.queued = append(b.queued, p...)
	if wake {
		b.changed.Broadcast()
	}
	return len(p), nil
}

func (b *batchConn) writeLoop() {
	defer close(b.done)
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		for len(b.queued) == 0 && !b.closing {
			b.idle()
			b.changed.Wait()
		}
		if len(b.queued) == 0 || b.err != nil {
			b.idle()
			return
		}
		batch := b.queued
		b.queued = b.spare
		b.mu.Unlock()
		b.under.hold()
		_, err := b.Conn.Write(batch)
		if rerr := b.under.release(); err == nil {
			err = rerr
		}
		b.mu.Lock()
		b.spare = batch[:0]
		if err != nil {
			b.err, b.queued = err, nil
		}
		b.changed.Broadcast()
	}
}

// idle gives the buffers back while there is nothing to write.
func (b *batchConn) idle() {
	if b.queued != nil {
		giveBuffer(b.queued)
		b.queued = nil
	}
	if b.spare != nil {
		giveBuffer(b.spare)
		b.spare = nil
	}
}

// Close lets what was written leave (bounded by closeFlush, for a peer
// that stopped reading), then closes the connection.
func (b *batchConn) Close() error {
	b.mu.Lock()
	b.closing = true
	b.changed.Broadcast()
	b.mu.Unlock()
	select {
	case <-b.done:
	case <-time.After(closeFlush):
	}
	return b.Conn.Close()
}
