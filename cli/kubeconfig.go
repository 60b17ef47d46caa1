package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/devplane/devplane/certs"
)

func writeKubeconfig(path string, cfg *clientcmdapi.Config) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// userKubeconfigPath is where kubectl looks by default: the first file of
// $KUBECONFIG, else ~/.kube/config.
func userKubeconfigPath() (string, error) {
	if env := os.Getenv("KUBECONFIG"); env != "" {
		for _, p := range filepath.SplitList(env) {
			if p != "" {
				return p, nil
			}
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".kube", "config"), nil
}

// mergeKubeconfig adds (or refreshes) the instance's cluster, user and
// context in the user's kubeconfig and makes it current, as kind does.
func mergeKubeconfig(ours *clientcmdapi.Config, contextName string) (string, error) {
	path, err := userKubeconfigPath()
	if err != nil {
		return "", err
	}
	existing, err := clientcmd.LoadFromFile(path)
	if errors.Is(err, os.ErrNotExist) {
		existing = clientcmdapi.NewConfig()
	} else if err != nil {
		return path, err
	}
	existing.Clusters[contextName] = ours.Clusters[contextName]
	existing.AuthInfos[contextName] = ours.AuthInfos[contextName]
	existing.Contexts[contextName] = ours.Contexts[contextName]
	existing.CurrentContext = contextName
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return path, err
	}
	return path, clientcmd.WriteToFile(*existing, path)
}

// unmergeKubeconfig removes the instance's entries from the user's
// kubeconfig; a missing file or entry is not an error.
func unmergeKubeconfig(contextName string) (bool, error) {
	path, err := userKubeconfigPath()
	if err != nil {
		return false, err
	}
	existing, err := clientcmd.LoadFromFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if _, ok := existing.Contexts[contextName]; !ok {
		return false, nil
	}
	delete(existing.Clusters, contextName)
	delete(existing.AuthInfos, contextName)
	delete(existing.Contexts, contextName)
	if existing.CurrentContext == contextName {
		existing.CurrentContext = ""
	}
	return true, clientcmd.WriteToFile(*existing, path)
}

func kubeconfigCommand() *cli.Command {
	var name, dataDir, user, certDir string
	var groups cli.StringSlice
	var pathOnly bool
	return &cli.Command{
		Name:  "kubeconfig",
		Usage: "print the admin kubeconfig of an instance (devplane kubeconfig > x works)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Value: "default", Destination: &name, Usage: "instance name"},
			&cli.StringFlag{Name: "data-dir", Destination: &dataDir, Usage: "instance data dir (default: from --name)"},
			&cli.BoolFlag{Name: "path", Destination: &pathOnly, Usage: "print the kubeconfig's path instead of its content"},
			&cli.StringFlag{Name: "user", Destination: &user, Usage: "issue a client certificate for this user instead of the admin"},
			&cli.StringSliceFlag{Name: "group", Destination: &groups, Usage: "group of --user (repeatable)"},
			&cli.StringFlag{Name: "cert-dir", Destination: &certDir, Usage: "with --user: the instance's --cert-dir (default: the running instance's, else <data-dir>/pki)"},
		},
		Action: func(c *cli.Context) error {
			dir, err := resolveDataDir(name, dataDir)
			if err != nil {
				return exitf(1, "error: %v", err)
			}
			path := filepath.Join(dir, kubeconfigFileName)
			st, ok, _ := readState(dir)
			if ok && st.Kubeconfig != "" {
				path = st.Kubeconfig
			}
			if _, err := os.Stat(path); err != nil {
				return exitf(2, "error: no kubeconfig for instance %q at %s: has `devplane up --name %s` run?", name, path, name)
			}
			if pathOnly {
				fmt.Fprintln(c.App.Writer, path)
				return nil
			}
			if user == "" {
				body, err := os.ReadFile(path)
				if err != nil {
					return exitf(1, "error: %v", err)
				}
				_, err = c.App.Writer.Write(body)
				return err
			}
			cfg, err := clientcmd.LoadFromFile(path)
			if err != nil {
				return exitf(1, "error: %v", err)
			}
			if certDir == "" {
				certDir = st.certDir(dir)
			}
			// Never make a new CA here: it would sign certificates nobody trusts.
			if _, err := os.Stat(filepath.Join(certDir, certs.CACertFile)); err != nil {
				return exitf(2, "error: no CA in %s: pass the instance's --cert-dir", certDir)
			}
			bundle, err := certs.Ensure(certs.Options{Dir: certDir})
			if err != nil {
				return exitf(1, "error: %v", err)
			}
			certPEM, keyPEM, err := bundle.IssueClient(user, groups.Value(), 365*24*time.Hour)
			if err != nil {
				return exitf(1, "error: %v", err)
			}
			for _, ai := range cfg.AuthInfos {
				ai.ClientCertificateData, ai.ClientKeyData = certPEM, keyPEM
				ai.ClientCertificate, ai.ClientKey, ai.Token = "", "", ""
			}
			body, err := clientcmd.Write(*cfg)
			if err != nil {
				return exitf(1, "error: %v", err)
			}
			_, err = c.App.Writer.Write(body)
			return err
		},
	}
}

func resetCommand() *cli.Command {
	var name, dataDir string
	return &cli.Command{
		Name:  "reset",
		Usage: "delete an instance's data dir (etcd data, certificates, kubeconfig) and its merged kubeconfig context",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Value: "default", Destination: &name, Usage: "instance name"},
			&cli.StringFlag{Name: "data-dir", Destination: &dataDir, Usage: "instance data dir (default: from --name)"},
		},
		Action: func(c *cli.Context) error {
			dir, err := resolveDataDir(name, dataDir)
			if err != nil {
				return exitf(1, "error: %v", err)
			}
			if st, running, _ := readState(dir); running {
				return exitf(1, "error: devplane %q is running (pid %d, %s): stop it first (Ctrl-C or kill %d), then reset", name, st.PID, st.URL, st.PID)
			}
			if strings.TrimSpace(dir) == "" || dir == "/" {
				return exitf(1, "error: refusing to delete %q", dir)
			}
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				fmt.Fprintf(c.App.Writer, "nothing to reset: %s does not exist\n", dir)
			} else if err := os.RemoveAll(dir); err != nil {
				return exitf(1, "error: %v", err)
			} else {
				fmt.Fprintf(c.App.Writer, "deleted %s\n", dir)
			}
			removed, err := unmergeKubeconfig("devplane-" + name)
			if err != nil {
				return exitf(1, "error: cleaning your kubeconfig: %v", err)
			}
			if removed {
				fmt.Fprintf(c.App.Writer, "removed context devplane-%s from your kubeconfig\n", name)
			}
			return nil
		},
	}
}
