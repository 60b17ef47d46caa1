package sandbox

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// idleness is what a statement does if it only waits.
type idleness struct {
	// wait is how long (when not forever).
	wait    time.Duration
	forever bool
	// last is set for `exec sleep N`: the program ends after it.
	last bool
}

// simpleParam matches "$NAME" and "${NAME}", the only expansions an idle
// statement may hold.
var simpleParam = regexp.MustCompile(`^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$`)

// literalArgs expands a simple command's words when that cannot run
// anything: literals, quotes, and plain variables whose values do not
// split or glob.
func literalArgs(call *syntax.CallExpr, lookup func(string) string) ([]string, bool) {
	var args []string
	for _, word := range call.Args {
		var b strings.Builder
		var parts func([]syntax.WordPart, bool) bool
		parts = func(ps []syntax.WordPart, quoted bool) bool {
			for _, part := range ps {
				switch part := part.(type) {
				case *syntax.Lit:
					if !quoted && strings.ContainsAny(part.Value, "*?[~\\") {
						return false
					}
					b.WriteString(part.Value)
				case *syntax.SglQuoted:
					if part.Dollar {
						return false
					}
					b.WriteString(part.Value)
				case *syntax.DblQuoted:
					if !parts(part.Parts, true) {
						return false
					}
				case *syntax.ParamExp:
					var printed bytes.Buffer
					if syntax.NewPrinter().Print(&printed, part) != nil || !simpleParam.Match(printed.Bytes()) {
						return false
					}
					value := lookup(part.Param.Value)
					if !quoted && strings.ContainsAny(value, " \t\n*?[") {
						return false
					}
					b.WriteString(value)
				default:
					return false
				}
			}
			return true
		}
		if !parts(word.Parts, false) {
			return nil, false
		}
		args = append(args, b.String())
	}
	return args, len(args) > 0
}

// idleStatement reports whether running stmt would only wait: `sleep N`,
// `sleep infinity`, `exec sleep N`, `tail -f /dev/null`, or a loop that does
// nothing but sleep forever (`while true; do sleep 1; done`). Such a
// statement needs no goroutine: a timer (or nothing) stands for it.
// isFunc tells whether a name is a shell function that would shadow ours.
func idleStatement(stmt *syntax.Stmt, lookup func(string) string, isFunc func(string) bool) (idleness, bool) {
	if stmt.Negated || stmt.Background || stmt.Coprocess || len(stmt.Redirs) > 0 {
		return idleness{}, false
	}
	switch cmd := stmt.Cmd.(type) {
	case *syntax.CallExpr:
		args, ok := literalArgs(cmd, lookup)
		if !ok {
			return idleness{}, false
		}
		last := false
		if args[0] == "exec" {
			args, last = args[1:], true
		}
		if len(args) > 1 && path.Base(args[0]) == "busybox" {
			args = args[1:]
		}
		if len(args) == 0 || isFunc(args[0]) || !hasProgram(args[0]) {
			return idleness{}, false
		}
		switch path.Base(args[0]) {
		case "sleep":
			var total time.Duration
			forever := false
			for _, arg := range args[1:] {
				d, inf, ok := parseDuration(arg)
				if !ok {
					return idleness{}, false
				}
				total += d
				forever = forever || inf
			}
			return idleness{wait: total, forever: forever, last: last}, len(args) > 1
		case "tail":
			if len(args) == 3 && (args[1] == "-f" || args[1] == "-F") && args[2] == "/dev/null" {
				return idleness{forever: true}, true
			}
		}
	case *syntax.WhileClause:
		// Forever when the condition always holds and the body only waits
		// (or the condition is the sleep and the body does nothing).
		condIdle := len(cmd.Cond) == 1 && isConstant(cmd.Cond[0], !cmd.Until)
		condSleeps := !cmd.Until && len(cmd.Cond) == 1 && isSleep(cmd.Cond[0], lookup, isFunc)
		if !condIdle && !condSleeps {
			return idleness{}, false
		}
		for _, body := range cmd.Do {
			if !isConstant(body, true) && !isSleep(body, lookup, isFunc) {
				return idleness{}, false
			}
		}
		return idleness{forever: true}, true
	}
	return idleness{}, false
}

// isSleep tells a finite `sleep N` statement.
func isSleep(stmt *syntax.Stmt, lookup func(string) string, isFunc func(string) bool) bool {
	idle, ok := idleStatement(stmt, lookup, isFunc)
	return ok && !idle.last && (idle.wait > 0 || idle.forever)
}

// isConstant tells `true`/`:` (want true) or `false` (want false).
func isConstant(stmt *syntax.Stmt, want bool) bool {
	call, ok := stmt.Cmd.(*syntax.CallExpr)
	if !ok || stmt.Negated || stmt.Background || len(stmt.Redirs) > 0 || len(call.Args) != 1 || len(call.Assigns) > 0 {
		return false
	}
	word := call.Args[0].Lit()
	if want {
		return word == "true" || word == ":"
	}
	return word == "false"
}

// lookupIn reads a variable of a shell's state.
func lookupIn(vars map[string]expand.Variable) func(string) string {
	return func(name string) string { return vars[name].String() }
}

// steppableLoop returns a top-level while/until loop whose body sleeps at
// its own top level and that never breaks, continues or returns: the
// container can run it a step at a time.
func steppableLoop(stmt *syntax.Stmt) *syntax.WhileClause {
	w, ok := stmt.Cmd.(*syntax.WhileClause)
	if !ok || stmt.Negated || stmt.Background || stmt.Coprocess || len(stmt.Redirs) > 0 {
		return nil
	}
	sleeps := slices.ContainsFunc(w.Do, func(s *syntax.Stmt) bool {
		call, ok := s.Cmd.(*syntax.CallExpr)
		return ok && len(call.Args) > 0 && path.Base(call.Args[0].Lit()) == "sleep"
	})
	jumps := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			switch call.Args[0].Lit() {
			case "break", "continue", "return":
				jumps = true
			}
		}
		return !jumps
	})
	if !sleeps || jumps {
		return nil
	}
	return w
}

// loopCondition is a loop's condition as a statement that tells the
// process whether the loop goes on: `if COND; then mark 1; else mark 0; fi`
// (the other way round for until), which no `set -e` ends.
func loopCondition(w *syntax.WhileClause) *syntax.Stmt {
	mark := func(goOn bool) []*syntax.Stmt {
		value := "0"
		if goOn {
			value = "1"
		}
		return []*syntax.Stmt{{Cmd: &syntax.CallExpr{Args: []*syntax.Word{
			{Parts: []syntax.WordPart{&syntax.Lit{Value: loopCondCommand}}},
			{Parts: []syntax.WordPart{&syntax.Lit{Value: value}}},
		}}}}
	}
	return &syntax.Stmt{Cmd: &syntax.IfClause{
		Cond: w.Cond,
		Then: mark(!w.Until),
		Else: &syntax.IfClause{Then: mark(w.Until)},
	}}
}

// startsBackground tells whether a statement starts jobs (cmd &) that may
// outlive it.
func startsBackground(stmt *syntax.Stmt) bool {
	found := false
	syntax.Walk(stmt, func(n syntax.Node) bool {
		if s, ok := n.(*syntax.Stmt); ok && (s.Background || s.Coprocess) {
			found = true
		}
		return !found
	})
	return found
}

// callsWait tells whether a statement may wait for background jobs.
func callsWait(stmt *syntax.Stmt) bool {
	found := false
	syntax.Walk(stmt, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 && call.Args[0].Lit() == "wait" {
			found = true
		}
		return !found
	})
	return found
}
