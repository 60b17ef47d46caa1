// devplane: a complete Kubernetes control plane in one process.
package main

import "github.com/devplane/devplane/cli"

func main() { cli.Run() }
