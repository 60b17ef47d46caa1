package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/devplane/devplane/apiserver/version"
	"github.com/devplane/devplane/cli/dashboard"
)

// statusReport is `devplane status -o json`.
type statusReport struct {
	Name   string          `json:"name"`
	URL    string          `json:"url,omitempty"`
	Ready  bool            `json:"ready"`
	Live   bool            `json:"live"`
	Checks []dashboard.Row `json:"checks,omitempty"`
}

func statusCommand() *cli.Command {
	var inst instanceFlags
	var output string
	return &cli.Command{
		Name:  "status",
		Usage: "show a running instance's health checks; exit 0 when ready, 1 when not, 2 when nothing runs",
		Flags: inst.flags(
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Destination: &output, Usage: "text or json"},
		),
		Action: func(c *cli.Context) error {
			if output != "text" && output != "json" {
				return exitf(1, "error: --output %q: use text or json", output)
			}
			dir, err := inst.dir()
			if err != nil {
				return err
			}
			st, running, err := readState(dir)
			if err != nil {
				return exitf(2, "error: %v", err)
			}
			if !running {
				if output == "json" {
					_ = json.NewEncoder(c.App.Writer).Encode(statusReport{Name: inst.name})
				}
				return exitf(2, "devplane %q is not running (data dir %s)", inst.name, dir)
			}
			report, err := probe(c.Context, dir, st)
			if err != nil {
				return exitf(2, "devplane %q (pid %d) does not answer at %s: %v", inst.name, st.PID, st.URL, err)
			}
			if output == "json" {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				_ = enc.Encode(report)
			} else {
				styled := false
				if f, ok := c.App.Writer.(*os.File); ok {
					styled = dashboard.DetectMode(f, false) == dashboard.Live
				}
				fmt.Fprint(c.App.Writer, dashboard.Render(dashboard.Snapshot{Rows: report.Checks}, styled))
				state := "ready"
				if !report.Ready {
					state = "NOT ready"
				}
				fmt.Fprintf(c.App.Writer, "devplane %q is %s at %s\n", inst.name, state, st.URL)
			}
			if !report.Ready {
				return exitf(1, "")
			}
			return nil
		},
	}
}

// probe reads /livez?verbose and /readyz?verbose, trusting the instance's CA.
func probe(ctx context.Context, dataDir string, st instanceState) (statusReport, error) {
	report := statusReport{Name: st.Name, URL: st.URL}
	pool := x509.NewCertPool()
	if ca, err := os.ReadFile(filepath.Join(st.certDir(dataDir), "ca.crt")); err == nil {
		pool.AppendCertsFromPEM(ca)
	}
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	defer client.CloseIdleConnections()
	get := func(path string) (bool, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.URL+path, nil)
		if err != nil {
			return false, "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK, string(body), err
	}
	live, liveBody, err := get("/livez?verbose")
	if err != nil {
		return report, err
	}
	ready, readyBody, err := get("/readyz?verbose")
	if err != nil {
		return report, err
	}
	report.Live, report.Ready = live, ready
	report.Checks = append(dashboard.ParseVerbose(liveBody, "livez"), dashboard.ParseVerbose(readyBody, "readyz")...)
	return report, nil
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print devplane's version and the Kubernetes API version it speaks",
		Action: func(c *cli.Context) error {
			v := version.Get()
			fmt.Fprintf(c.App.Writer, "devplane %s\ngit commit: %s\ngo: %s %s\nkubernetes API: %s\n",
				version.Devplane, version.Commit(), runtime.Version(), v.Platform, v.GitVersion)
			return nil
		},
	}
}
