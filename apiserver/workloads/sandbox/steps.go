package sandbox

// How a container's program runs: a statement at a time, so that a sleep
// at its top level (or at the top level of a top-level loop) can park on
// a timer with no goroutine, and a signal's trap can run between steps.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"mvdan.cc/sh/v3/syntax"
)

// noop is the statement that resets $? after a parked sleep.
var noop = &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: ":"}}}}}}

// loop interprets the program a statement at a time (stepping through
// top-level while/until loops that sleep) until it ends or only waits; it
// runs on its own goroutine, which ends when the container parks.
func (c *Container) loop() {
	for {
		c.mu.Lock()
		if c.killed || c.finished {
			c.running = false
			c.mu.Unlock()
			return
		}
		var stmt *syntax.Stmt
		kind := stepStatement
		switch {
		case c.trapPending != "":
			callback, _ := c.proc.trapFor(c.trapPending)
			c.trapPending = ""
			file, err := parse(strings.NewReader(callback), c.program.Name)
			if err != nil || len(file.Stmts) == 0 {
				c.mu.Unlock()
				continue
			}
			stmt, kind = &syntax.Stmt{Cmd: &syntax.Block{Stmts: file.Stmts}}, stepTrap
		case c.resetStatus:
			c.resetStatus = false
			stmt = noop
		default:
			stmt, kind = c.peek()
			if stmt == nil {
				c.mu.Unlock()
				c.exit()
				return
			}
			if idle, ok := c.idle(stmt); ok && kind == stepStatement {
				c.advance()
				c.park(idle)
				c.mu.Unlock()
				return
			}
			c.advance()
		}
		ctx, cancel := context.WithCancel(context.Background())
		c.stepCancel, c.current = cancel, stmt
		c.mu.Unlock()

		err := runSafely(ctx, c.runner, &syntax.File{Name: c.program.Name, Stmts: []*syntax.Stmt{stmt}})
		interrupted := ctx.Err() != nil

		c.mu.Lock()
		c.stepCancel, c.current = nil, nil
		if startsBackground(stmt) {
			// Its background jobs live on until the container ends.
			c.background = append(c.background, cancel)
		} else {
			cancel()
		}
		switch {
		case interrupted:
			// Killed (the loop ends above) or a trapped signal (its trap
			// runs next, and the program goes on after the statement).
		case c.runner.Exited():
			c.lastCode = exitCode(err)
			c.endProgram()
		case errors.Is(err, errInterpreterFailure):
			fmt.Fprintf(c.log.Writer(Stderr), "sh: %v\n", err)
			c.lastCode = exitCode(err)
			c.endProgram()
		case kind == stepCond:
			c.afterCond()
		case kind != stepTrap || err != nil:
			c.lastCode = exitCode(err)
		}
		c.mu.Unlock()
	}
}

// stepKind tells what a step runs.
type stepKind uint8

const (
	stepStatement stepKind = iota
	// stepCond is a stepped loop's condition.
	stepCond
	// stepTrap is a trap's command.
	stepTrap
)

// loopFrame is a top-level while/until loop that the container steps
// through, so that the sleeps in its body park as top-level ones do.
type loopFrame struct {
	body     []*syntax.Stmt
	cond     *syntax.Stmt
	inBody   bool
	bodyNext int
}

// peek returns the step to run next (nil at the end of the program),
// entering the top-level loops that can be stepped through. c.mu is held.
func (c *Container) peek() (*syntax.Stmt, stepKind) {
	for {
		if f := c.frame; f != nil {
			if f.inBody && f.bodyNext < len(f.body) {
				return f.body[f.bodyNext], stepStatement
			}
			f.inBody = false
			return f.cond, stepCond
		}
		if c.next >= len(c.program.Stmts) {
			return nil, stepStatement
		}
		stmt := c.program.Stmts[c.next]
		if _, idle := c.idle(stmt); !idle {
			if w := steppableLoop(stmt); w != nil {
				c.next++
				c.frame = &loopFrame{body: w.Do, cond: loopCondition(w)}
				continue
			}
		}
		return stmt, stepStatement
	}
}

// advance takes the step peek returned (a condition is taken by afterCond).
func (c *Container) advance() {
	switch f := c.frame; {
	case f == nil:
		c.next++
	case f.inBody:
		f.bodyNext++
	}
}

// afterCond enters the loop's body or leaves the loop, as its condition
// said.
func (c *Container) afterCond() {
	if c.proc.takeLoopCondition() {
		c.frame.inBody, c.frame.bodyNext = true, 0
		return
	}
	c.frame = nil
}

// endProgram skips whatever is left of the program.
func (c *Container) endProgram() {
	c.next, c.frame = len(c.program.Stmts), nil
}

// idle tells whether a statement only waits, with the shell's variables.
func (c *Container) idle(stmt *syntax.Stmt) (idleness, bool) {
	lookup := func(name string) string {
		if vr, ok := c.runner.Vars[name]; ok {
			return vr.String()
		}
		return c.env[name]
	}
	isFunc := func(name string) bool { return c.runner.Funcs[name] != nil }
	return idleStatement(stmt, lookup, isFunc)
}

// park stands for an idle statement (already taken) with a timer, or
// nothing for waiting forever, and lets the goroutine end. c.mu is held.
func (c *Container) park(idle idleness) {
	c.running = false
	if idle.forever || idle.last {
		c.endProgram()
	}
	if !idle.forever {
		p := &parking{}
		c.parked = p
		c.timer = c.pod.cfg.Clock.AfterFunc(idle.wait, func() { c.wake(p) })
	}
}

// parking is one parked sleep.
type parking struct {
	// over is set when its timer has fired.
	over atomic.Bool
}

// wake resumes the program after the parked sleep p. It runs as a timer's
// callback, where a fake clock holds its lock while our own code may hold
// c.mu and wait for the clock: it takes no lock itself.
func (c *Container) wake(p *parking) {
	p.over.Store(true)
	go func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.killed || c.finished || c.running || c.parked != p {
			return
		}
		c.timer, c.parked = nil, nil
		c.lastCode = 0
		c.resetStatus = true
		c.running = true
		go c.loop()
	}()
}
