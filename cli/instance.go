package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/urfave/cli/v2"
)

// Files an instance keeps in its data dir.
const (
	stateFileName      = "devplane.json"
	kubeconfigFileName = "kubeconfig"
	logFileName        = "devplane.log"
)

// defaultDataDir is $XDG_DATA_HOME/devplane/<name>, i.e.
// ~/.local/share/devplane/<name> when XDG_DATA_HOME is unset.
func defaultDataDir(name string) (string, error) {
	base, err := dataHome(runtime.GOOS, os.Getenv, os.UserHomeDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "devplane", name), nil
}

// dataHome is where applications keep their data on goos: $XDG_DATA_HOME
// when set, else %LOCALAPPDATA% on Windows, ~/Library/Application Support
// on macOS and ~/.local/share elsewhere.
func dataHome(goos string, getenv func(string) string, home func() (string, error)) (string, error) {
	if base := getenv("XDG_DATA_HOME"); base != "" {
		return base, nil
	}
	if goos == "windows" {
		if base := getenv("LOCALAPPDATA"); base != "" {
			return base, nil
		}
	}
	dir, err := home()
	if err != nil {
		return "", fmt.Errorf("cannot find a home directory for the data dir (set --data-dir): %w", err)
	}
	switch goos {
	case "windows":
		return filepath.Join(dir, "AppData", "Local"), nil
	case "darwin":
		return filepath.Join(dir, "Library", "Application Support"), nil
	}
	return filepath.Join(dir, ".local", "share"), nil
}

// instanceState is what a running `devplane up` writes so that `status`,
// `reset` and `kubeconfig` can find it.
type instanceState struct {
	Name       string `json:"name"`
	PID        int    `json:"pid"`
	URL        string `json:"url"`
	Kubeconfig string `json:"kubeconfig"`
	Context    string `json:"context"`
	DataDir    string `json:"dataDir"`
	// CertDir is set when --cert-dir moved the certificates out of the data dir.
	CertDir string `json:"certDir,omitempty"`
}

// certDir is where the instance's certificates are.
func (st instanceState) certDir(dataDir string) string {
	if st.CertDir != "" {
		return st.CertDir
	}
	return filepath.Join(dataDir, "pki")
}

func writeState(dataDir string, st instanceState) error {
	body, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dataDir, stateFileName+".tmp")
	if err := os.WriteFile(tmp, body, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dataDir, stateFileName))
}

func removeState(dataDir string) { _ = os.Remove(filepath.Join(dataDir, stateFileName)) }

// readState returns the state of a running instance, or ok=false when the
// data dir has none or its process is gone.
func readState(dataDir string) (st instanceState, ok bool, err error) {
	body, err := os.ReadFile(filepath.Join(dataDir, stateFileName))
	if errors.Is(err, os.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, false, fmt.Errorf("%s: %w", filepath.Join(dataDir, stateFileName), err)
	}
	return st, processAlive(st.PID), nil
}

// resolveDataDir is --data-dir if given, else the default for --name.
func resolveDataDir(name, dataDir string) (string, error) {
	if dataDir != "" {
		return filepath.Abs(dataDir)
	}
	return defaultDataDir(name)
}

// instanceFlags are --name and --data-dir: the instance a command acts on.
type instanceFlags struct{ name, dataDir string }

// flags are --name, --data-dir and then the command's own.
func (f *instanceFlags) flags(more ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "name", Value: "default", Destination: &f.name, Usage: "instance name"},
		&cli.StringFlag{Name: "data-dir", Destination: &f.dataDir, Usage: "instance data dir (default: from --name)"},
	}, more...)
}

// dir is the instance's data dir; failing to resolve it is exit 1.
func (f *instanceFlags) dir() (string, error) {
	dir, err := resolveDataDir(f.name, f.dataDir)
	if err != nil {
		return "", exitf(1, "error: %v", err)
	}
	return dir, nil
}
