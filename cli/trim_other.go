//go:build !linux

package cli

// releaseFilePages is a no-op where mappings are not tuned.
func releaseFilePages(bool) {}

// fileRSS is unknown here.
func fileRSS() uint64 { return 0 }
