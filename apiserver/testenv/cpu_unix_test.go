//go:build unix

package testenv_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used (user and system), so
// benchmarks report what work costs even when other processes load the
// machine and wall times stretch.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
