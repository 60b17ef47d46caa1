//go:build linux

package cli

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseFilePages drops this process's mappings of clean file pages:
// its own binary's read-only pages (code and read-only data) and every
// shared read-only file mapping (etcd's database, which bbolt maps whole
// and populates at open). Start-up runs the init code of every linked
// package once, and the kernel maps the binary in whole page-cache folios
// around each page touched, so most of a large binary ends up counted in
// RSS although idle serving uses a small part of it; a burst of work (a
// few hundred CRDs) does the same to code and database pages. The pages
// stay in the page cache (they are clean): what is used again faults back
// in at the cost of a minor fault. Written pages (data) are never touched,
// nor private mappings of other files (a library's relocated pages).
// code false leaves the binary's pages alone. After a burst they go too:
// a 10,000-pod rollout ran ~30 MB of the scheduler's and controllers' code
// that idle serving does not, and what runs again comes back for a minor
// fault a page (~10 ms for all of it).
func releaseFilePages(code bool) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		own := code && fields[5] == exe && (fields[1] == "r-xp" || fields[1] == "r--p")
		sharedReadOnly := fields[1] == "r--s" && strings.HasPrefix(fields[5], "/")
		if !own && !sharedReadOnly {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		// Mapped from here on in small pages, not the 2 MB huge pages the
		// kernel maps a large page-cache folio with: a code path run again
		// brings back a few pages, not 2 MB around them.
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_NOHUGEPAGE)
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}

// fileRSS is how much of the process's resident memory is file pages, in
// bytes (0 when unknown).
func fileRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
