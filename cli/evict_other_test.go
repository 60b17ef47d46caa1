//go:build !linux

package cli_test

// evictFromPageCache: only Linux's page cache is tuned for here.
func evictFromPageCache(string) {}
