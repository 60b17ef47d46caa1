package dashboard

import "strings"

// ParseVerbose turns a /readyz?verbose, /livez?verbose or /healthz?verbose
// body into rows for section. Lines look like "[+]ping ok",
// "[+]informer-sync excluded: ok" or "[-]etcd failed: reason withheld"; the
// closing "readyz check passed" line and anything else unrecognised is
// skipped. Names starting "poststarthook/" become hooks, the rest checks.
// A hook reported "not finished" is shown as running rather than failed.
func ParseVerbose(body, section string) []Row {
	var rows []Row
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		var passed bool
		switch {
		case strings.HasPrefix(line, "[+]"):
			passed = true
		case strings.HasPrefix(line, "[-]"):
		default:
			continue
		}
		name, status, _ := strings.Cut(line[len("[+]"):], " ")
		if name == "" {
			continue
		}
		r := Row{Section: section, Kind: KindCheck, Name: name, State: OK}
		if strings.HasPrefix(name, "poststarthook/") {
			r.Kind = KindHook
		}
		status = strings.TrimSpace(status)
		if passed {
			if excluded, _, ok := strings.Cut(status, ": ok"); ok && excluded != "" {
				r.Message = excluded // e.g. "excluded"
			}
		} else {
			r.State = Failed
			r.Message = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(status, "failed"), ":"))
			if r.Kind == KindHook && r.Message == "not finished" {
				r.State = Running
				r.Message = ""
			}
		}
		rows = append(rows, r)
	}
	return rows
}
