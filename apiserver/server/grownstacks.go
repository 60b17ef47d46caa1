package server

import (
	"net/http"
	"sync"

	"github.com/devplane/devplane/apiserver/request"
)

// HTTP/2 runs every request on a new goroutine, whose stack starts small
// (the runtime's average over all goroutines, mostly idle ones). The
// filter chain, the REST handler and managed fields are deep: a request
// grew its stack three or four times, each growth copying the stack and
// walking every frame, which was a tenth of the server's CPU under a
// create load. grownStacks hands a request to one of a few goroutines
// that keep the stacks earlier requests grew; when all are busy the
// request runs where it arrived, as before. It sits just inside request
// info: long-running requests (watches, streams) keep their own goroutine.
type grownStacks struct {
	next  http.Handler
	work  chan *stackJob
	stop  chan struct{}
	jobs  sync.Pool
	start sync.Once
}

// grownStackWorkers is how many requests at once get a grown stack: more
// than a client's usual 16 workers on two cores, few enough that their
// stacks (tens of KB each) are nothing to keep.
const grownStackWorkers = 32

type stackJob struct {
	w        http.ResponseWriter
	r        *http.Request
	panicked any
	done     chan struct{}
}

func withGrownStacks(next http.Handler) *grownStacks {
	g := &grownStacks{next: next, work: make(chan *stackJob), stop: make(chan struct{})}
	g.jobs.New = func() any { return &stackJob{done: make(chan struct{}, 1)} }
	return g
}

func (g *grownStacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if info, _ := request.RequestInfoFrom(r.Context()); request.IsLongRunning(info) {
		g.next.ServeHTTP(w, r) // would keep a worker for minutes
		return
	}
	g.start.Do(func() {
		for range grownStackWorkers {
			go g.worker()
		}
	})
	job := g.jobs.Get().(*stackJob)
	job.w, job.r = w, r
	select {
	case g.work <- job: // an idle worker took it
	default:
		g.jobs.Put(job)
		g.next.ServeHTTP(w, r)
		return
	}
	<-job.done
	p := job.panicked
	*job = stackJob{done: job.done}
	g.jobs.Put(job)
	if p != nil {
		// Re-raised where net/http expects it (http.ErrAbortHandler
		// aborts the stream; anything else is logged and reset).
		panic(p)
	}
}

func (g *grownStacks) worker() {
	for {
		select {
		case job := <-g.work:
			g.serve(job)
		case <-g.stop:
			return
		}
	}
}

// Stop ends the idle workers; requests after it run where they arrive.
func (g *grownStacks) Stop() { close(g.stop) }

func (g *grownStacks) serve(job *stackJob) {
	defer func() {
		job.panicked = recover()
		job.done <- struct{}{}
	}()
	g.next.ServeHTTP(job.w, job.r)
}
