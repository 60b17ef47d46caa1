//go:build !linux

package dashboard

import (
	"os"
	"testing"
)

// openPseudoTerminal: the live-dashboard tests drive a Linux pty.
func openPseudoTerminal(t *testing.T) *os.File {
	t.Helper()
	t.Skip("pseudo-terminal tests run on Linux")
	return nil
}
