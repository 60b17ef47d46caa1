package cli

import (
	"io"
	"time"

	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sigs.k8s.io/yaml"

	"github.com/urfave/cli/v2"

	"github.com/devplane/devplane/apiserver/version"
	"github.com/devplane/devplane/cli/dashboard"
)

// statusReport is what `devplane status` learns from an instance.
type statusReport struct {
	Name   string
	URL    string
	Ready  bool
	Live   bool
	Checks []dashboard.Row
}

// statusDocument is `devplane status -o json|yaml`: kubectl-style
// lower-camel-case keys and named states, documented in the README.
type statusDocument struct {
	Name    string          `json:"name"`
	Running bool            `json:"running"`
	URL     string          `json:"url,omitempty"`
	Ready   bool            `json:"ready"`
	Live    bool            `json:"live"`
	Checks  []checkDocument `json:"checks,omitempty"`
}

type checkDocument struct {
	Section string `json:"section"`
	Kind    string `json:"kind"` // step, hook or check
	Name    string `json:"name"`
	// State: checks are "ok", "failing" or "pending"; start-up steps and
	// post-start hooks are "pending", "running", "done" or "failed".
	State    string `json:"state"`
	Duration string `json:"duration,omitempty"` // e.g. "12ms"
	Message  string `json:"message,omitempty"`
}

func (r statusReport) document(running bool) statusDocument {
	doc := statusDocument{Name: r.Name, Running: running, URL: r.URL, Ready: r.Ready, Live: r.Live}
	for _, row := range r.Checks {
		c := checkDocument{Section: row.Section, Kind: row.Kind, Name: row.Name, State: stateName(row), Message: row.Message}
		if row.Duration > 0 {
			c.Duration = row.Duration.Round(time.Millisecond).String()
		}
		doc.Checks = append(doc.Checks, c)
	}
	return doc
}

func stateName(row dashboard.Row) string {
	check := row.Kind == dashboard.KindCheck
	switch row.State {
	case dashboard.Pending:
		return "pending"
	case dashboard.Running:
		if check {
			return "pending"
		}
		return "running"
	case dashboard.OK:
		if check {
			return "ok"
		}
		return "done"
	case dashboard.Failed:
		if check {
			return "failing"
		}
		return "failed"
	}
	return "unknown"
}

// printDocument writes v as indented JSON or as YAML.
func printDocument(w io.Writer, format string, v any) error {
	if format == "yaml" {
		out, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func checkOutput(output string) error {
	switch output {
	case "text", "json", "yaml":
		return nil
	}
	return exitf(1, "error: --output %q: use text, json or yaml", output)
}

func statusCommand() *cli.Command {
	var inst instanceFlags
	var output string
	return &cli.Command{
		Name:  "status",
		Usage: "show a running instance's health checks; exit 0 when ready, 1 when not, 2 when nothing runs",
		Flags: inst.flags(
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Destination: &output, Usage: "text, json or yaml"},
		),
		Action: func(c *cli.Context) error {
			if err := checkOutput(output); err != nil {
				return err
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
				if output != "text" {
					_ = printDocument(c.App.Writer, output, statusReport{Name: inst.name}.document(false))
				}
				return exitf(2, "devplane %q is not running (data dir %s)", inst.name, dir)
			}
			report, err := probe(c.Context, dir, st)
			if err != nil {
				return exitf(2, "devplane %q (pid %d) does not answer at %s: %v", inst.name, st.PID, st.URL, err)
			}
			if output != "text" {
				_ = printDocument(c.App.Writer, output, report.document(true))
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

// versionDocument is `devplane version -o json|yaml`.
type versionDocument struct {
	Version       string `json:"version"`
	GitCommit     string `json:"gitCommit"`
	BuildDate     string `json:"buildDate"`
	GoVersion     string `json:"goVersion"`
	Platform      string `json:"platform"`
	KubernetesAPI string `json:"kubernetesAPI"`
}

func versionCommand() *cli.Command {
	var output string
	return &cli.Command{
		Name:  "version",
		Usage: "print devplane's version and the Kubernetes API version it speaks",
		Flags: []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Destination: &output, Usage: "text, json or yaml"}},
		Action: func(c *cli.Context) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			v := version.Get()
			if output != "text" {
				return printDocument(c.App.Writer, output, versionDocument{Version: version.Devplane, GitCommit: version.Commit(),
					BuildDate: version.BuildDate(), GoVersion: runtime.Version(), Platform: v.Platform, KubernetesAPI: v.GitVersion})
			}
			fmt.Fprintf(c.App.Writer, "devplane %s\ngit commit: %s\ngo: %s %s\nkubernetes API: %s\n",
				version.Devplane, version.Commit(), runtime.Version(), v.Platform, v.GitVersion)
			return nil
		},
	}
}
