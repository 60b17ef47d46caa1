//go:build windows

package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// stopRequestFile, in the data dir, is how `devplane down` asks a detached
// devplane to stop on Windows, where a process without a console gets no
// Ctrl-C or Ctrl-Break.
const stopRequestFile = "stop-requested"

// detachAttrs starts the background `devplane up` in a process group of its
// own, without a console: closing the terminal does not stop it.
func detachAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS, HideWindow: true}
}

// processAlive reports whether pid is a running process.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	const stillActive = 259
	return code == stillActive
}

// requestStop asks the devplane of dataDir to shut down gracefully by
// leaving a stop request in its data dir.
func requestStop(dataDir string, _ *os.Process) error {
	return os.WriteFile(filepath.Join(dataDir, stopRequestFile), nil, 0o600)
}

// watchStopRequests calls stop once a stop request appears in dataDir.
func watchStopRequests(ctx context.Context, dataDir string, stop func()) {
	path := filepath.Join(dataDir, stopRequestFile)
	_ = os.Remove(path) // left over from an earlier run
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
			if _, err := os.Stat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
				_ = os.Remove(path)
				stop()
				return
			}
		}
	}()
}
