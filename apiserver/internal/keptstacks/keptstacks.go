// Package keptstacks keeps a few goroutines for work that grows a deep
// stack. A new goroutine starts with a small stack, and each growth copies
// the stack and walks every frame; work handed to a kept goroutine runs on
// the stack an earlier piece of work grew.
package keptstacks

import "sync"

// Pool is a fixed number of kept goroutines, started on first use.
type Pool struct {
	n        int
	work     chan func()
	stop     chan struct{}
	start    sync.Once
	stopOnce sync.Once
}

// New returns a pool of n goroutines.
func New(n int) *Pool {
	return &Pool{n: n, work: make(chan func()), stop: make(chan struct{})}
}

// TryGo runs f on an idle kept goroutine and reports true, or reports
// false when all are busy (or the pool is stopped): the caller then runs
// f where it likes.
func (p *Pool) TryGo(f func()) bool {
	p.start.Do(func() {
		for range p.n {
			go p.worker()
		}
	})
	select {
	case p.work <- f:
		return true
	default:
		return false
	}
}

func (p *Pool) worker() {
	for {
		select {
		case f := <-p.work:
			f()
		case <-p.stop:
			return
		}
	}
}

// Stop ends the goroutines as they go idle; once they have, TryGo reports
// false.
func (p *Pool) Stop() { p.stopOnce.Do(func() { close(p.stop) }) }
