package cli_test

import (
	"os"

	"golang.org/x/sys/unix"
)

// evictFromPageCache drops a just-linked binary's pages from the page
// cache, so the tests and benchmarks start it as users start an installed
// one: read from disk. A file written a moment ago sits in the cache as
// large folios, and every page a process touches then maps a whole folio:
// idle RSS would count tens of MB of the binary that a read from disk
// never maps.
func evictFromPageCache(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = f.Sync()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
