package dashboard

import (
	"strings"
	"time"
)

// Summary is what a user needs once the control plane is ready.
type Summary struct {
	ReadyIn    time.Duration
	URL        string
	Kubeconfig string // path
	Context    string // e.g. devplane-default
	// Merged reports that the context was merged into the user's kubeconfig,
	// so `kubectl --context` works without pointing KUBECONFIG anywhere.
	Merged bool
}

func renderSummary(sum Summary, st styles) string {
	ok := "✓"
	if p := st.state[OK]; p != nil {
		ok = p(ok)
	}
	readyIn := formatDuration(sum.ReadyIn)
	if readyIn == "" {
		readyIn = "0ms"
	}
	var b strings.Builder
	b.WriteString(ok + " " + st.section("devplane ready in "+readyIn) + "\n")
	field := func(label, value string) {
		b.WriteString(st.label(padRight(label, label, len("kubeconfig"))) + "  " + value + "\n")
	}
	field("server", st.value(sum.URL))
	field("kubeconfig", sum.Kubeconfig)
	field("context", sum.Context)
	if sum.Merged {
		field("try", "kubectl --context "+shellQuote(sum.Context)+" get ns")
	} else {
		field("try", "export KUBECONFIG="+shellQuote(sum.Kubeconfig))
		field("", "kubectl get ns")
	}
	return b.String()
}

// shellQuote makes s safe to paste into a POSIX shell, leaving ordinary
// paths and names untouched.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
