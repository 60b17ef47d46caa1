package server

import (
	"net/http"
	"sync"

	"github.com/devplane/devplane/apiserver/internal/keptstacks"
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
	next    http.Handler
	workers *keptstacks.Pool
	jobs    sync.Pool
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
	run      func() // g.serve(this job), made once per pooled job
}

func withGrownStacks(next http.Handler) *grownStacks {
	g := &grownStacks{next: next, workers: keptstacks.New(grownStackWorkers)}
	g.jobs.New = func() any {
		job := &stackJob{done: make(chan struct{}, 1)}
		job.run = func() { g.serve(job) }
		return job
	}
	return g
}

func (g *grownStacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if info, _ := request.RequestInfoFrom(r.Context()); request.IsLongRunning(info) {
		g.next.ServeHTTP(w, r) // would keep a worker for minutes
		return
	}
	job := g.jobs.Get().(*stackJob)
	job.w, job.r = w, r
	if !g.workers.TryGo(job.run) { // every worker busy
		job.w, job.r = nil, nil
		g.jobs.Put(job)
		g.next.ServeHTTP(w, r)
		return
	}
	<-job.done
	p := job.panicked
	job.w, job.r, job.panicked = nil, nil, nil
	g.jobs.Put(job)
	if p != nil {
		// Re-raised where net/http expects it (http.ErrAbortHandler
		// aborts the stream; anything else is logged and reset).
		panic(p)
	}
}

// Stop ends the idle workers; requests after it run where they arrive.
func (g *grownStacks) Stop() { g.workers.Stop() }

func (g *grownStacks) serve(job *stackJob) {
	defer func() {
		job.panicked = recover()
		job.done <- struct{}{}
	}()
	g.next.ServeHTTP(job.w, job.r)
}
