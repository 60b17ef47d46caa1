//go:build linux

package cli

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseStartupPages drops this process's mappings of its own binary's
// read-only pages (code and read-only data). Start-up runs the init code of
// every linked package once; the kernel maps the binary in whole page-cache
// folios around each page touched, so most of a large binary ends up
// counted in RSS although idle serving uses a small part of it. The pages
// stay in the page cache (they are clean and shared): what runs again
// faults back in at the cost of a minor fault. Written pages (data) are
// never touched.
func releaseStartupPages() {
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
		if len(fields) < 6 || fields[5] != exe || (fields[1] != "r-xp" && fields[1] != "r--p") {
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
