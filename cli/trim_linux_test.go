package cli

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReleaseFilePagesDropsSharedReadOnlyMappings maps a file as bbolt
// maps etcd's database (shared, read-only), touches every page, and
// checks the release gives them back while the mapping still reads.
func TestReleaseFilePagesDropsSharedReadOnlyMappings(t *testing.T) {
	const size = 32 << 20
	path := filepath.Join(t.TempDir(), "db")
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i / 4096)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Munmap(m) }()
	var sum int
	for i := 0; i < size; i += 4096 {
		sum += int(m[i])
	}
	before := fileRSS()
	releaseFilePages(false)
	after := fileRSS()
	if before == 0 || after+size/2 > before {
		t.Fatalf("file RSS %d MB before the release, %d MB after: want %d MB less", before>>20, after>>20, size>>20)
	}
	var again int
	for i := 0; i < size; i += 4096 {
		again += int(m[i])
	}
	if again != sum {
		t.Fatalf("the mapping reads %d after the release, %d before", again, sum)
	}
}
