//go:build !linux

package cli

// releaseStartupPages is a no-op where mappings are not tuned.
func releaseStartupPages() {}
