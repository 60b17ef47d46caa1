// Package cli is devplane's command line: `up`, `down`, `wait`, `status`,
// `kubeconfig`, `reset`, `fault`, `snapshot`, `version` and `completion`. Each command follows kube-apiserver's options
// pattern: flags fill Options, Complete() fills defaults, Validate() reports
// every problem at once, Run() does the work.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

// Flag categories, like kube-apiserver's named flag sets.
const (
	catGeneric    = "Generic"
	catEtcd       = "Etcd"
	catServing    = "Secure serving"
	catCerts      = "Certificates and authentication"
	catKubeconfig = "Kubeconfig"
	catLogging    = "Logging"
	catWorkloads  = "Workloads"
	catAudit      = "Auditing"
)

// NewApp builds the devplane command line.
func NewApp() *cli.App {
	return &cli.App{
		Name:  "devplane",
		Usage: "a complete Kubernetes control plane in one process, for laptops and CI",
		Description: "devplane starts an in-process etcd, makes its own certificates, serves the Kubernetes API\n" +
			"through kube-apiserver's delegation chain and writes a kubeconfig. Start with `devplane up`.",
		Commands: []*cli.Command{
			withDetach(upCommand()),
			downCommand(),
			waitCommand(),
			statusCommand(),
			kubeconfigCommand(),
			resetCommand(),
			faultCommand(),
			requestsCommand(),
			historyCommand(),
			snapshotCommand(),
			versionCommand(),
			completionCommand(),
		},
		EnableBashCompletion: true, // the completion scripts' protocol
		HideHelpCommand:      true,
		ExitErrHandler:       func(*cli.Context, error) {}, // Main decides the exit code
	}
}

// ExitError carries a process exit code with a one-line message.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

func exitf(code int, format string, args ...any) error {
	return &ExitError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Main runs the app with args and returns the process exit code. Errors are
// printed as plain lines, never as Go stack traces.
func Main(args []string, stderr io.Writer) int {
	err := NewApp().Run(args)
	if err == nil {
		return 0
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if exit.Msg != "" {
			fmt.Fprintln(stderr, exit.Msg)
		}
		return exit.Code
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	return 1
}

// Run is main's entry point.
func Run() { os.Exit(Main(os.Args, os.Stderr)) }
