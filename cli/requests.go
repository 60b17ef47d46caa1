package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/request"
)

// requestsCommand shows a running instance's recent requests, from the
// ring every devplane keeps (its /debug/devplane/requests endpoint, with
// the admin kubeconfig: only cluster admins may read it).
func requestsCommand() *cli.Command {
	var inst instanceFlags
	var kubeconfig, output, sortBy string
	var follow, top bool
	var filter requestFilter
	return &cli.Command{
		Name:  "requests",
		Usage: "show a running instance's recent API requests (who, what, result, latency, size); -f follows them",
		Description: "Every devplane keeps its recent requests in memory (see --recent-requests on up).\n" +
			"WHO is a service account as sa:<namespace>/<name>, kube's components and devplane's\n" +
			"controllers by their user agent, anyone else by user name.",
		Flags: inst.flags(
			&cli.StringFlag{Name: "kubeconfig", Destination: &kubeconfig, Usage: "an admin kubeconfig (default: the instance's)"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Destination: &follow, Usage: "keep printing requests as they end"},
			&cli.StringFlag{Name: "user", Destination: &filter.user, Usage: "only this caller: a user name, or WHO as shown (system:kube-scheduler picks the scheduler)"},
			&cli.StringFlag{Name: "verb", Destination: &filter.verb, Usage: "only this verb (get, list, watch, create, update, patch, delete...)"},
			&cli.StringFlag{Name: "resource", Destination: &filter.resource, Usage: "only this resource: pods, deployments.apps, pods/binding"},
			&cli.StringFlag{Name: "namespace", Aliases: []string{"n"}, Destination: &filter.namespace, Usage: "only this namespace"},
			&cli.BoolFlag{Name: "failed", Destination: &filter.failed, Usage: "only requests answered with a code of 400 or more"},
			&cli.BoolFlag{Name: "watch", Destination: &filter.watch, Usage: "only watches (listed once they end)"},
			&cli.BoolFlag{Name: "top", Destination: &top, Usage: "rank callers instead: requests, errors, latency, bytes, and repeated LISTs of one resource"},
			&cli.StringFlag{Name: "sort", Value: "requests", Destination: &sortBy, Usage: "with --top: requests, errors, latency or bytes"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "table", Destination: &output, Usage: "table, or json (audit.k8s.io/v1 Events, one a line)"},
		),
		Action: func(c *cli.Context) error {
			if output != "table" && output != "json" {
				return exitf(1, "error: --output %q: use table or json", output)
			}
			if top && follow {
				return exitf(1, "error: --top ranks what the instance holds: it does not follow")
			}
			if !slices.Contains([]string{"requests", "errors", "latency", "bytes"}, sortBy) {
				return exitf(1, "error: --sort %q: use requests, errors, latency or bytes", sortBy)
			}
			var timeout time.Duration
			if !follow {
				timeout = 30 * time.Second
			}
			rc, err := adminClient(&inst, kubeconfig, timeout)
			if err != nil {
				return err
			}
			w := c.App.Writer
			// What is held is aligned as a whole; what follows, row by row.
			var held bytes.Buffer
			tw := tabwriter.NewWriter(&held, 0, 4, 2, ' ', 0)
			row := func(cells []string) error {
				if follow {
					_, err := fmt.Fprintln(w, formatRow(cells))
					return err
				}
				_, err := fmt.Fprintln(tw, strings.Join(cells, "\t"))
				return err
			}
			show := func(ev *auditv1.Event, header *bool) error {
				if !filter.matches(ev) {
					return nil
				}
				if output == "json" {
					ev.Kind, ev.APIVersion = "Event", auditv1.SchemeGroupVersion.String() // list items come without
					return json.NewEncoder(w).Encode(ev)
				}
				if !*header {
					*header = true
					if err := row(requestsColumns); err != nil {
						return err
					}
				}
				return row(requestCells(ev))
			}
			if !follow {
				raw, err := rc.Get().AbsPath(audit.RecentPath).DoRaw(c.Context)
				if err != nil {
					return exitf(1, "error: reading recent requests: %v", err)
				}
				var list auditv1.EventList
				if err := json.Unmarshal(raw, &list); err != nil {
					return exitf(1, "error: %v", err)
				}
				if top {
					var kept []auditv1.Event
					for _, ev := range list.Items {
						if filter.matches(&ev) {
							kept = append(kept, ev)
						}
					}
					if output == "json" {
						return printDocument(w, "json", rankCallers(kept, sortBy))
					}
					_, err := io.WriteString(w, topTable(rankCallers(kept, sortBy)))
					return err
				}
				header := false
				for i := range list.Items {
					if err := show(&list.Items[i], &header); err != nil {
						return err
					}
				}
				if !header && output == "table" {
					fmt.Fprintln(c.App.ErrWriter, "No requests match.")
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				for _, line := range strings.SplitAfter(held.String(), "\n") {
					if line != "" {
						fmt.Fprintln(w, strings.TrimRight(line, " \n"))
					}
				}
				return nil
			}
			stream, err := rc.Get().AbsPath(audit.RecentPath).Param("watch", "true").Stream(c.Context)
			if err != nil {
				return exitf(1, "error: following recent requests: %v", err)
			}
			defer stream.Close()
			dec := json.NewDecoder(stream)
			header := false
			for {
				var ev auditv1.Event
				if err := dec.Decode(&ev); err != nil {
					if c.Context.Err() != nil || err == io.EOF {
						return nil
					}
					return exitf(1, "error: following recent requests: %v", err)
				}
				if err := show(&ev, &header); err != nil {
					return err
				}
			}
		},
	}
}

// requestFilter is the command's filters; empty ones match anything.
type requestFilter struct {
	user, verb, resource, namespace string
	failed, watch                   bool
}

func (f *requestFilter) matches(ev *auditv1.Event) bool {
	if f.user != "" && !audit.MatchesUser(f.user, ev.User.Username, ev.UserAgent) {
		return false
	}
	if f.verb != "" && ev.Verb != f.verb {
		return false
	}
	if f.watch && ev.Verb != "watch" {
		return false
	}
	if f.failed && code(ev) < 400 {
		return false
	}
	ref := ev.ObjectRef
	if f.namespace != "" && (ref == nil || ref.Namespace != f.namespace) {
		return false
	}
	if f.resource != "" {
		if ref == nil {
			return false
		}
		q := qualifiedResource(ref)
		plain := ref.Resource
		if ref.Subresource != "" {
			plain += "/" + ref.Subresource
		}
		if f.resource != q && f.resource != plain {
			return false
		}
	}
	return true
}

func code(ev *auditv1.Event) int {
	if ev.ResponseStatus == nil {
		return 0
	}
	return int(ev.ResponseStatus.Code)
}

// qualifiedResource is kube's resource.group[/subresource].
func qualifiedResource(ref *auditv1.ObjectReference) string {
	return request.QualifiedResource(ref.Resource, ref.APIGroup, ref.Subresource)
}

func who(ev *auditv1.Event) string { return audit.Who(ev.User.Username, ev.UserAgent) }

func latency(ev *auditv1.Event) time.Duration {
	d, _ := time.ParseDuration(ev.Annotations[audit.AnnotationLatency])
	return d
}

func size(ev *auditv1.Event) int64 {
	n, _ := strconv.ParseInt(ev.Annotations[audit.AnnotationBytes], 10, 64)
	return n
}

// requestsFormat lays out rows as they are followed (a table of what is
// held is aligned by a tabwriter instead).
const requestsFormat = "%-12s  %-28s  %-7s  %-30s  %-36s  %4s  %8s  %8s  %s"

var requestsColumns = []string{"TIME", "WHO", "VERB", "RESOURCE", "OBJECT", "CODE", "LATENCY", "SIZE", "NOTE"}

func formatRow(cells []string) string {
	args := make([]any, len(cells))
	for i, c := range cells {
		args[i] = c
	}
	return strings.TrimRight(fmt.Sprintf(requestsFormat, args...), " ")
}

// requestCells is one request as table cells; a non-resource request
// shows its path as the resource.
func requestCells(ev *auditv1.Event) []string {
	resource, object := ev.RequestURI, ""
	if i := strings.IndexByte(resource, '?'); i >= 0 {
		resource = resource[:i]
	}
	if ref := ev.ObjectRef; ref != nil {
		resource = qualifiedResource(ref)
		object = ref.Name
		if ref.Namespace != "" {
			object = ref.Namespace + "/" + ref.Name
			if ref.Name == "" {
				object = ref.Namespace + "/"
			}
		}
	}
	note := ""
	if f := ev.Annotations[audit.AnnotationFault]; f != "" {
		note = "fault " + f
	}
	if ev.ImpersonatedUser != nil {
		note = strings.TrimSpace("as " + ev.ImpersonatedUser.Username + " " + note)
	}
	end := ev.RequestReceivedTimestamp.Add(latency(ev))
	if !ev.StageTimestamp.IsZero() {
		end = ev.StageTimestamp.Time
	}
	return []string{end.Local().Format("15:04:05.000"), who(ev), ev.Verb, resource, object,
		strconv.Itoa(code(ev)), formatLatency(latency(ev)), formatBytes(size(ev)), note}
}

func formatLatency(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	default:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
}

func formatBytes(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + "KiB"
	default:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + "MiB"
	}
}

// relistThreshold is how many LISTs of one resource (in one namespace) by
// one caller are worth a note: an informer re-listing, or a poll.
const relistThreshold = 5

// callerStats is one caller's share of the requests held.
type callerStats struct {
	Who      string        `json:"who"`
	Requests int           `json:"requests"`
	Errors   int           `json:"errors"`
	P99      time.Duration `json:"p99"` // of short requests (watches left out)
	Mean     time.Duration `json:"mean"`
	Bytes    int64         `json:"bytes"`
	Relists  []string      `json:"relists,omitempty"` // "pods in default: 12 lists"
}

// rankCallers sums up events by caller, ranked by the given measure.
func rankCallers(events []auditv1.Event, by string) []callerStats {
	type acc struct {
		s         callerStats
		latencies []time.Duration
		lists     map[string]int
	}
	byWho := map[string]*acc{}
	for i := range events {
		ev := &events[i]
		name := who(ev)
		a := byWho[name]
		if a == nil {
			a = &acc{s: callerStats{Who: name}, lists: map[string]int{}}
			byWho[name] = a
		}
		a.s.Requests++
		if code(ev) >= 400 {
			a.s.Errors++
		}
		a.s.Bytes += size(ev)
		if ev.Verb != "watch" {
			a.latencies = append(a.latencies, latency(ev))
		}
		if ev.Verb == "list" && ev.ObjectRef != nil {
			key := qualifiedResource(ev.ObjectRef)
			if ns := ev.ObjectRef.Namespace; ns != "" {
				key += " in " + ns
			}
			a.lists[key]++
		}
	}
	out := make([]callerStats, 0, len(byWho))
	for _, a := range byWho {
		if n := len(a.latencies); n > 0 {
			slices.Sort(a.latencies)
			a.s.P99 = a.latencies[(n*99-1)/100]
			var sum time.Duration
			for _, l := range a.latencies {
				sum += l
			}
			a.s.Mean = sum / time.Duration(n)
		}
		for key, n := range a.lists {
			if n >= relistThreshold {
				a.s.Relists = append(a.s.Relists, fmt.Sprintf("%s: %d lists", key, n))
			}
		}
		sort.Strings(a.s.Relists)
		out = append(out, a.s)
	}
	measure := func(s callerStats) int64 {
		switch by {
		case "errors":
			return int64(s.Errors)
		case "latency":
			return int64(s.P99)
		case "bytes":
			return s.Bytes
		}
		return int64(s.Requests)
	}
	sort.Slice(out, func(i, j int) bool {
		mi, mj := measure(out[i]), measure(out[j])
		if mi != mj {
			return mi > mj
		}
		return out[i].Who < out[j].Who
	})
	return out
}

// topTable renders ranked callers: names as wide as the widest,
// numbers right-aligned.
func topTable(callers []callerStats) string {
	width := len("WHO")
	for _, c := range callers {
		width = max(width, utf8.RuneCountInString(c.Who))
	}
	line := func(who string, cells ...string) string {
		l := who + strings.Repeat(" ", width-utf8.RuneCountInString(who))
		l += fmt.Sprintf("  %8s  %6s  %8s  %8s  %9s  %s", cells[0], cells[1], cells[2], cells[3], cells[4], cells[5])
		return strings.TrimRight(l, " ") + "\n"
	}
	var b strings.Builder
	b.WriteString(line("WHO", "REQUESTS", "ERRORS", "P99", "MEAN", "BYTES", "REPEATED LISTS"))
	for _, c := range callers {
		b.WriteString(line(c.Who, strconv.Itoa(c.Requests), strconv.Itoa(c.Errors), formatLatency(c.P99),
			formatLatency(c.Mean), formatBytes(c.Bytes), strings.Join(c.Relists, ", ")))
	}
	return b.String()
}
