package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/devplane/devplane/apiserver/faults"
)

// faultCommand manages the faults a running instance injects into its
// requests, through its /debug/devplane/faults endpoint with the admin
// kubeconfig (only cluster admins may use it).
func faultCommand() *cli.Command {
	var inst instanceFlags
	var kubeconfig string
	client := func(c *cli.Context) (rest.Interface, error) { return adminClient(&inst, kubeconfig, 30*time.Second) }
	target := func(more ...cli.Flag) []cli.Flag {
		return inst.flags(append([]cli.Flag{&cli.StringFlag{Name: "kubeconfig", Destination: &kubeconfig,
			Usage: "an admin kubeconfig (default: the instance's)"}}, more...)...)
	}
	return &cli.Command{
		Name:  "fault",
		Usage: "inject failures into a running instance's API requests (409, 429, 500, 503, 504, delays, watches ended)",
		Subcommands: []*cli.Command{
			faultAddCommand(target, client),
			{
				Name:  "list",
				Usage: "list the faults in force, with their matches and hits",
				Flags: target(&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Usage: "text, json or yaml"}),
				Action: func(c *cli.Context) error {
					rc, err := client(c)
					if err != nil {
						return err
					}
					raw, err := rc.Get().AbsPath(faults.Path).DoRaw(c.Context)
					if err != nil {
						return exitf(1, "error: listing faults: %v", err)
					}
					var listed []faults.Listed
					if err := json.Unmarshal(raw, &listed); err != nil {
						return exitf(1, "error: %v", err)
					}
					if out := c.String("output"); out != "text" {
						return printDocument(c.App.Writer, out, listed)
					}
					tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "NAME\tACTION\tMATCHES\tHITS")
					for _, l := range listed {
						fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", l.Name, describeAction(&l.Fault), l.Matches, l.Hits)
					}
					return tw.Flush()
				},
			},
			{
				Name:      "rm",
				Usage:     "remove faults by name",
				ArgsUsage: "NAME...",
				Flags:     target(),
				Action: func(c *cli.Context) error {
					if c.NArg() == 0 {
						return exitf(1, "error: name the faults to remove")
					}
					rc, err := client(c)
					if err != nil {
						return err
					}
					for _, name := range c.Args().Slice() {
						if err := rc.Delete().AbsPath(faults.Path, name).Do(c.Context).Error(); err != nil {
							return exitf(1, "error: removing %s: %v", name, err)
						}
						fmt.Fprintf(c.App.Writer, "removed %s\n", name)
					}
					return nil
				},
			},
		},
	}
}

func faultAddCommand(target func(...cli.Flag) []cli.Flag, client func(*cli.Context) (rest.Interface, error)) *cli.Command {
	var f faults.Fault
	var verbs, resources, namespaces, names, users, agents, managers cli.StringSlice
	var watchAfter int
	var watchGone, webhookTimeout bool
	var webhooks cli.StringSlice
	return &cli.Command{
		Name:      "add",
		Usage:     "add a fault (each unset match flag matches anything)",
		ArgsUsage: "NAME",
		Flags: target(
			&cli.StringSliceFlag{Name: "verb", Destination: &verbs, Usage: "match this verb (repeatable)"},
			&cli.StringSliceFlag{Name: "resource", Destination: &resources, Usage: "match this resource: pods, deployments.apps, deployments.apps/status (repeatable)"},
			&cli.StringSliceFlag{Name: "namespace", Destination: &namespaces, Usage: "match this namespace (repeatable)"},
			&cli.StringSliceFlag{Name: "object", Destination: &names, Usage: "match this object name (repeatable)"},
			&cli.StringSliceFlag{Name: "user", Destination: &users, Usage: "match this user (repeatable)"},
			&cli.StringSliceFlag{Name: "user-agent", Destination: &agents, Usage: "match user agents starting with this (repeatable)"},
			&cli.StringSliceFlag{Name: "field-manager", Destination: &managers, Usage: "match this fieldManager (repeatable)"},
			&cli.IntFlag{Name: "error", Destination: &f.Error, Usage: "answer with kube's error for 409, 429, 500, 503 or 504"},
			&cli.DurationFlag{Name: "retry-after", Destination: &f.RetryAfter, Usage: "Retry-After of a 429 (1s when unset) or of a 503"},
			&cli.DurationFlag{Name: "delay", Destination: &f.Delay, Usage: "hold matched requests this long"},
			&cli.IntFlag{Name: "end-watch-after", Value: -1, DefaultText: "off", Destination: &watchAfter, Usage: "end matched watches after this many events"},
			&cli.BoolFlag{Name: "gone", Destination: &watchGone, Usage: "end matched watches with 410 Gone (after --end-watch-after events, else at once)"},
			&cli.BoolFlag{Name: "webhook-timeout", Destination: &webhookTimeout, Usage: "the admission webhooks called for matched requests time out (their failurePolicy decides)"},
			&cli.StringSliceFlag{Name: "webhook", Destination: &webhooks, Usage: "with --webhook-timeout: only this webhook, by its name in its configuration (repeatable)"},
			&cli.IntFlag{Name: "times", Destination: &f.Times, Usage: "inject only this many times"},
			&cli.IntFlag{Name: "every", Destination: &f.Every, Usage: "inject on every Nth match only"},
			&cli.Float64Flag{Name: "probability", Destination: &f.Probability, Usage: "inject with this probability (0 to 1)"},
			&cli.Uint64Flag{Name: "seed", Destination: &f.Seed, Usage: "seed of --probability's draws"},
			&cli.DurationFlag{Name: "for", Destination: &f.For, Usage: "expire after this long"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitf(1, "error: name the fault: devplane fault add NAME [flags]")
			}
			f.Name = c.Args().First()
			f.Verbs, f.Resources, f.Namespaces, f.Names = verbs.Value(), resources.Value(), namespaces.Value(), names.Value()
			f.Users, f.UserAgents, f.FieldManagers = users.Value(), agents.Value(), managers.Value()
			if watchAfter >= 0 || watchGone {
				f.Watch = &faults.WatchEnd{AfterEvents: max(watchAfter, 0), Gone: watchGone}
			}
			if webhookTimeout {
				f.WebhookTimeout = &faults.WebhookTimeout{Webhooks: webhooks.Value()}
			} else if len(webhooks.Value()) > 0 {
				return exitf(1, "error: --webhook names the webhooks --webhook-timeout times out: add --webhook-timeout")
			}
			if err := f.Validate(); err != nil {
				return exitf(1, "error: %v", err)
			}
			rc, err := client(c)
			if err != nil {
				return err
			}
			body, _ := json.Marshal(f)
			if err := rc.Post().AbsPath(faults.Path).Body(body).Do(c.Context).Error(); err != nil {
				return exitf(1, "error: adding %s: %v", f.Name, err)
			}
			fmt.Fprintf(c.App.Writer, "added %s: %s\n", f.Name, describeAction(&f))
			return nil
		},
	}
}

// adminClient talks to the instance's API with its admin kubeconfig (or
// the one given), each request bounded by timeout (0: none, for streams).
func adminClient(inst *instanceFlags, kubeconfig string, timeout time.Duration) (rest.Interface, error) {
	path, err := instanceKubeconfig(inst, kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, exitf(1, "error: %v", err)
	}
	cfg.Timeout = timeout
	rc, err := adminRESTClient(cfg)
	if err != nil {
		return nil, exitf(1, "error: %v", err)
	}
	return rc, nil
}

// instanceKubeconfig is kubeconfig, or when empty the admin kubeconfig
// of the running instance inst names.
func instanceKubeconfig(inst *instanceFlags, kubeconfig string) (string, error) {
	if kubeconfig != "" {
		return kubeconfig, nil
	}
	dir, err := inst.dir()
	if err != nil {
		return "", err
	}
	kubeconfig = filepath.Join(dir, kubeconfigFileName)
	if st, ok, _ := readState(dir); ok && st.Kubeconfig != "" {
		kubeconfig = st.Kubeconfig
	}
	if _, err := os.Stat(kubeconfig); err != nil {
		return "", exitf(2, "error: no kubeconfig for instance %q at %s: is it up?", inst.name, kubeconfig)
	}
	return kubeconfig, nil
}

// adminRESTClient reaches the non-resource paths of the API cfg names
// (devplane's /debug/devplane endpoints).
func adminRESTClient(cfg *rest.Config) (rest.Interface, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return cs.CoreV1().RESTClient(), nil
}

// describeAction says in a few words what f does.
func describeAction(f *faults.Fault) string {
	var parts []string
	if f.Delay > 0 {
		parts = append(parts, "delay "+f.Delay.String())
	}
	if f.Error != 0 {
		parts = append(parts, fmt.Sprintf("error %d", f.Error))
	}
	if w := f.Watch; w != nil {
		end := fmt.Sprintf("end watch after %d events", w.AfterEvents)
		if w.Gone {
			end += " with 410 Gone"
		}
		parts = append(parts, end)
	}
	if wt := f.WebhookTimeout; wt != nil {
		which := "every webhook"
		if len(wt.Webhooks) > 0 {
			which = strings.Join(wt.Webhooks, ", ")
		}
		parts = append(parts, "time out "+which)
	}
	return strings.Join(parts, ", ")
}
