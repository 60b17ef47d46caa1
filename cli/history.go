package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/devplane/devplane/apiserver/history"
	"github.com/devplane/devplane/cli/historyview"
)

// historyCommand shows an object's stored versions, who wrote each and
// what changed, from the instance's /debug/devplane/history endpoint with
// the admin kubeconfig (only cluster admins may read it).
func historyCommand() *cli.Command {
	var inst instanceFlags
	var kubeconfig, namespace, field, output string
	var showManaged bool
	var limit int
	return &cli.Command{
		Name:      "history",
		Usage:     "show every stored version of an object: when, who, verb, field manager, and what changed",
		ArgsUsage: "RESOURCE[.GROUP] NAME",
		Description: "Versions come from etcd's history, kept for up's --history-retention (1h by default).\n" +
			"RESOURCE is as kubectl takes it: plural, singular or short name (deploy, deployments.apps).\n\n" +
			"   devplane history deployments web --field spec.replicas   # who changed replicas, and when",
		Flags: inst.flags(
			&cli.StringFlag{Name: "kubeconfig", Destination: &kubeconfig, Usage: "an admin kubeconfig (default: the instance's)"},
			&cli.StringFlag{Name: "namespace", Aliases: []string{"n"}, Destination: &namespace, Usage: "the object's namespace (default: the kubeconfig context's, else default)"},
			&cli.StringFlag{Name: "field", Destination: &field, Usage: "only the versions that changed this field, old → new: spec.replicas, spec.template.spec.containers[0].image"},
			&cli.BoolFlag{Name: "show-managed-fields", Destination: &showManaged, Usage: "keep metadata.managedFields in the YAML and diffs"},
			&cli.IntFlag{Name: "limit", Value: history.DefaultLimit, Destination: &limit, Usage: "read at most this many versions (the newest)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Destination: &output, Usage: "text, json or yaml (the versions with their objects)"},
		),
		Action: func(c *cli.Context) error {
			if args, moved := flagsFirst(c.Command.Flags, c.Args().Slice()); moved {
				// kubectl's order (history deploy web -n ns): parse again
				// with every flag first, as urfave/cli stops at an argument.
				again := []string{c.Command.Name}
				for _, name := range c.LocalFlagNames() {
					again = append(again, "--"+name+"="+fmt.Sprint(c.Value(name)))
				}
				return c.Command.Run(c, append(again, args...)...)
			}
			if c.NArg() != 2 {
				return exitf(1, "error: name the object: devplane history RESOURCE[.GROUP] NAME [-n NAMESPACE]")
			}
			if err := checkOutput(output); err != nil {
				return err
			}
			var f historyview.Field
			if field != "" {
				var err error
				if f, err = historyview.ParseField(field); err != nil {
					return exitf(1, "error: --%v", err)
				}
			}
			path, err := instanceKubeconfig(&inst, kubeconfig)
			if err != nil {
				return err
			}
			loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
				&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, &clientcmd.ConfigOverrides{})
			cfg, err := loader.ClientConfig()
			if err != nil {
				return exitf(1, "error: %v", err)
			}
			cfg.Timeout = 30 * time.Second
			gvr, namespaced, err := resolveResource(cfg, c.Args().Get(0))
			if err != nil {
				return exitf(1, "error: %v", err)
			}
			if !namespaced {
				namespace = ""
			} else if namespace == "" {
				if namespace, _, err = loader.Namespace(); err != nil || namespace == "" {
					namespace = "default"
				}
			}
			h, err := readHistory(c, cfg, gvr.GroupResource(), namespace, c.Args().Get(1), limit)
			if err != nil {
				return err
			}
			if output != "text" {
				return printDocument(c.App.Writer, output, h)
			}
			if field != "" {
				return printFieldChanges(c.App.Writer, h, f)
			}
			return printVersions(c.App.Writer, h, showManaged)
		},
	}
}

// flagsFirst moves the flags among args (with their values) before the
// other arguments, and reports whether there were any.
func flagsFirst(flags []cli.Flag, args []string) ([]string, bool) {
	var flagArgs, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		flagArgs = append(flagArgs, a)
		if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && takesValue(flags, name) && i+1 < len(args) {
			i++
			flagArgs = append(flagArgs, args[i])
		}
	}
	return append(flagArgs, rest...), len(flagArgs) > 0
}

// takesValue reports whether the flag called name is followed by a value.
func takesValue(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}

// resolveResource finds what arg (plural, singular or short name, with or
// without .group or .version.group) names, as kubectl does, through the
// server's discovery.
func resolveResource(cfg *rest.Config, arg string) (gvr schema.GroupVersionResource, namespaced bool, err error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return gvr, false, err
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	full, gr := schema.ParseResourceArg(strings.ToLower(arg))
	if full != nil {
		gvr, err = mapper.ResourceFor(*full)
	}
	if full == nil || err != nil {
		if gvr, err = mapper.ResourceFor(gr.WithVersion("")); err != nil {
			if meta.IsNoMatchError(err) {
				return gvr, false, fmt.Errorf("the server doesn't have a resource type %q", arg)
			}
			return gvr, false, err
		}
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return gvr, false, err
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return gvr, false, err
	}
	return gvr, mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func readHistory(c *cli.Context, cfg *rest.Config, gr schema.GroupResource, namespace, name string, limit int) (*history.History, error) {
	rc, err := adminRESTClient(cfg)
	if err != nil {
		return nil, exitf(1, "error: %v", err)
	}
	req := rc.Get().AbsPath(history.Path).Param("resource", gr.Resource).Param("name", name).
		Param("limit", fmt.Sprint(limit))
	if gr.Group != "" {
		req.Param("group", gr.Group)
	}
	if namespace != "" {
		req.Param("namespace", namespace)
	}
	raw, err := req.DoRaw(c.Context)
	if err != nil {
		return nil, exitf(1, "error: %v", err)
	}
	var h history.History
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, exitf(1, "error: decoding the history: %v", err)
	}
	return &h, nil
}

// objectName is how the header names the object: deployments.apps default/web.
func objectName(h *history.History) string {
	what := schema.GroupResource{Group: h.Group, Resource: h.Resource}.String() + " "
	if h.Namespace != "" {
		what += h.Namespace + "/"
	}
	return what + h.Name
}

// summary says how many versions there are and what is missing before
// the oldest.
func summary(h *history.History) string {
	plural := "s"
	if len(h.Versions) == 1 {
		plural = ""
	}
	s := fmt.Sprintf("%s: %d version%s, kept for %s", objectName(h), len(h.Versions), plural, h.Retention)
	switch {
	case h.Truncated:
		s += " (older versions left out by --limit)"
	case h.Compacted:
		s += " (older versions compacted away)"
	}
	return s
}

// printVersions prints each version's writer, then its diff from the one
// before (a creation as all added lines).
func printVersions(w io.Writer, h *history.History, showManaged bool) error {
	fmt.Fprintln(w, summary(h))
	prev, prevRV := "", "nothing"
	for i, v := range h.Versions {
		cur, err := historyview.YAML(v, showManaged)
		if err != nil {
			return exitf(1, "error: %v", err)
		}
		fmt.Fprintf(w, "\n=== resourceVersion %s  %s\n", v.ResourceVersion, writerLine(v))
		switch {
		case v.Deleted: // the header says so; the version before is its last state
		case i == 0 && !v.Created:
			fmt.Fprint(w, indent(cur)) // the oldest kept: nothing to diff it with
		default:
			if v.Created {
				prev, prevRV = "", "nothing"
			}
			if d := historyview.Diff(prev, cur, prevRV, v.ResourceVersion); d != "" {
				fmt.Fprint(w, d)
			} else {
				fmt.Fprintln(w, "(no change in what is shown)")
			}
		}
		prev, prevRV = cur, v.ResourceVersion
	}
	return nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// writerLine is a version's time, user, verb and field manager.
func writerLine(v history.Version) string {
	parts := []string{orDash(formatTime(v.Time)), "user=" + orDash(v.User), "verb=" + orDash(verbOf(v)),
		"manager=" + orDash(v.FieldManager)}
	if v.Deleted {
		parts = append(parts, "(deleted)")
	}
	if !v.Recorded {
		parts = append(parts, "(not recorded: time and manager from managedFields)")
	}
	return strings.Join(parts, "  ")
}

func verbOf(v history.Version) string {
	if v.Subresource != "" {
		return v.Verb + "/" + v.Subresource
	}
	return v.Verb
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printFieldChanges prints the versions that changed f, as a table.
func printFieldChanges(w io.Writer, h *history.History, f historyview.Field) error {
	changes, err := historyview.Changes(h.Versions, f)
	if err != nil {
		return exitf(1, "error: %v", err)
	}
	fmt.Fprintln(w, summary(h))
	if len(changes) == 0 {
		fmt.Fprintf(w, "%s did not change in these versions\n", f)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "RESOURCEVERSION\tTIME\tUSER\tVERB\tFIELD MANAGER\t%s\n", strings.ToUpper(f.String()))
	for _, c := range changes {
		v := h.Versions[c.Version]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s → %s\n", v.ResourceVersion, orDash(formatTime(v.Time)), orDash(v.User),
			orDash(verbOf(v)), orDash(v.FieldManager), c.Old, c.New)
	}
	return tw.Flush()
}
