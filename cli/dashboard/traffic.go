package dashboard

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Traffic is the API traffic of the last window (a minute), for the panel
// the dashboard keeps once the control plane is ready.
type Traffic struct {
	Window      time.Duration
	PerSecond   float64
	Requests    int
	Errors      int
	P99         time.Duration // short requests only
	OpenWatches int64
	Top         []Caller // busiest first
}

// Caller is one caller's share of the window.
type Caller struct {
	Who      string
	Requests int
	Errors   int
}

// plainTrafficEvery is how often Plain mode prints the traffic line: a log
// gets one a minute, not one a second.
const plainTrafficEvery = time.Minute

// ShowTraffic shows the traffic get returns below what the dashboard
// printed once ready: in Live mode as a panel redrawn in place, in Plain
// mode as one line a minute (get is called only then). Before Ready it
// does nothing.
func (d *Dashboard) ShowTraffic(get func() Traffic) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.ready {
		return
	}
	if d.mode == Plain {
		if now := d.now(); d.lastTraffic.IsZero() || now.Sub(d.lastTraffic) >= plainTrafficEvery {
			d.lastTraffic = now
			io.WriteString(d.out, renderTrafficLine(get()))
		}
		return
	}
	w, _ := d.size()
	panel := renderTraffic(get(), d.styles, w)
	io.WriteString(d.out, eraseLines(d.panelLines)+panel)
	d.panelLines, d.panel = strings.Count(panel, "\n"), panel
}

// writeAbovePanel writes s where the Live panel is, then the panel again
// under it (the caller holds d.mu).
func (d *Dashboard) writeAbovePanel(s string) {
	if d.panelLines == 0 {
		io.WriteString(d.out, s)
		return
	}
	io.WriteString(d.out, eraseLines(d.panelLines)+s+d.panel)
}

// renderTraffic is the Live panel: a line of figures and one of callers,
// each cut to width (0: unknown).
func renderTraffic(t Traffic, st styles, width int) string {
	lines := []string{
		st.section("API, last "+formatWindow(t.Window)) + "  " +
			st.label("requests ") + st.value(strconv.FormatFloat(t.PerSecond, 'f', 1, 64)+"/s") + "  " +
			st.label("errors ") + errorCount(t.Errors, st) + "  " +
			st.label("p99 ") + st.value(orDash(formatDuration(t.P99))) + "  " +
			st.label("watches ") + st.value(strconv.FormatInt(t.OpenWatches, 10)),
		st.label("top callers ") + callers(t.Top, st),
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(cutToWidth(l, width) + "\n")
	}
	return b.String()
}

// renderTrafficLine is the panel as one plain line.
func renderTrafficLine(t Traffic) string {
	return fmt.Sprintf("api last %s: %.1f requests/s, %d errors, p99 %s, %d watches open; top callers: %s\n",
		formatWindow(t.Window), t.PerSecond, t.Errors, orDash(formatDuration(t.P99)), t.OpenWatches, callers(t.Top, plainStyles()))
}

func callers(top []Caller, st styles) string {
	if len(top) == 0 {
		return "none"
	}
	parts := make([]string, len(top))
	for i, c := range top {
		parts[i] = st.value(c.Who) + " " + strconv.Itoa(c.Requests)
		if c.Errors > 0 {
			parts[i] += " (" + errorCount(c.Errors, st) + " failed)"
		}
	}
	return strings.Join(parts, ", ")
}

func errorCount(n int, st styles) string {
	s := strconv.Itoa(n)
	if n > 0 {
		return st.state[Failed](s)
	}
	return st.value(s)
}

func formatWindow(d time.Duration) string {
	if d == time.Minute {
		return "minute"
	}
	return formatDuration(d)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cutToWidth cuts a styled line to fit width columns (0: unknown), as the
// live table's lines are.
func cutToWidth(s string, width int) string {
	if width <= 0 {
		return s
	}
	return ansi.Truncate(s, width-1, "…")
}
