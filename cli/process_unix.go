//go:build !windows

package cli

import (
	"context"
	"os"
	"syscall"
)

// detachAttrs puts the background `devplane up` in a session of its own:
// the terminal's Ctrl-C and hang-up do not reach it.
func detachAttrs() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// processAlive reports whether pid is a running process (signal 0).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// requestStop asks the devplane of dataDir (process p) to shut down
// gracefully: SIGTERM, as for Ctrl-C.
func requestStop(_ string, p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// watchStopRequests is only needed where there are no signals to send.
func watchStopRequests(context.Context, string, func()) {}
