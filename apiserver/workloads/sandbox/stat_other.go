//go:build !unix

package sandbox

// sysStat: the interpreter reads no stat of its own on other platforms.
func sysStat() any { return nil }
