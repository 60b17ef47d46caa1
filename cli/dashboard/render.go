// Package dashboard shows the progress of a devplane control plane: one row
// per start-up step, post-start hook and readyz check, grouped by section. It
// renders either a colourised table redrawn in place (a terminal) or plain
// lines, one per change (CI logs, pipes, NO_COLOR, JSON logs).
//
// It deliberately imports neither etcd nor k8s.io, so that callers translate
// their state into Rows and this package stays cheap to build and test.
package dashboard

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// State is where a step, hook or check stands.
type State int

const (
	Pending State = iota
	Running
	OK
	Failed
)

func (s State) String() string {
	switch s {
	case Pending:
		return "pending"
	case Running:
		return "running"
	case OK:
		return "ok"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// glyph is the one-cell symbol shown before the state word in styled output.
func (s State) glyph() string {
	switch s {
	case Running:
		return "◌"
	case OK:
		return "✓"
	case Failed:
		return "✗"
	}
	return "·"
}

// Row kinds.
const (
	KindStep  = "step"
	KindHook  = "hook"
	KindCheck = "check"
)

// Row is one line of the dashboard.
type Row struct {
	Section  string        // "certificates", "etcd", "aggregator", "core", "extensions"
	Kind     string        // KindStep, KindHook or KindCheck
	Name     string        // e.g. "poststarthook/bootstrap-namespaces", "etcd"
	State    State         //
	Duration time.Duration // how long it took (or has been running)
	Message  string        // short reason when failed (kept out of HTTP bodies, shown here)
}

// Snapshot is the complete state at one moment.
type Snapshot struct {
	Rows []Row
}

// sectionOrder is the start-up order; sections not listed follow in order of
// first appearance.
var sectionOrder = []string{"certificates", "etcd", "aggregator", "core", "extensions"}

// styles paints each part of the output. Plain output uses identity functions
// rather than an ASCII colour profile so that it provably carries no escape
// codes.
type styles struct {
	section  func(string) string
	state    map[State]func(string) string
	kind     func(string) string
	duration func(string) string
	message  func(string) string
	label    func(string) string
	value    func(string) string
	glyphs   bool // whether states get their glyph
}

func plainStyles() styles {
	same := func(s string) string { return s }
	return styles{
		section: same, kind: same, duration: same, message: same, label: same, value: same,
		state: map[State]func(string) string{Pending: same, Running: same, OK: same, Failed: same},
	}
}

// ansiStyles binds lipgloss styles to out with a forced 16-colour profile, so
// colours survive writers that are not terminals (buffers in tests) and the
// basic palette reads well on dark and light backgrounds alike.
func ansiStyles(out io.Writer) styles {
	r := lipgloss.NewRenderer(out, termenv.WithProfile(termenv.ANSI))
	r.SetColorProfile(termenv.ANSI)
	paint := func(st lipgloss.Style) func(string) string {
		return func(s string) string { return st.Render(s) }
	}
	fg := func(c string) lipgloss.Style { return r.NewStyle().Foreground(lipgloss.Color(c)) }
	return styles{
		section: paint(r.NewStyle().Bold(true)),
		state: map[State]func(string) string{
			Pending: paint(fg("8")),
			Running: paint(fg("3")),
			OK:      paint(fg("2")),
			Failed:  paint(fg("1").Bold(true)),
		},
		kind:     paint(r.NewStyle().Faint(true)),
		duration: paint(r.NewStyle().Faint(true)),
		message:  paint(fg("1")),
		label:    paint(r.NewStyle().Faint(true)),
		value:    paint(fg("6")),
		glyphs:   true,
	}
}

// Render returns the table once (for `devplane status`), styled with ANSI
// colours or plain.
func Render(s Snapshot, styled bool) string {
	st := plainStyles()
	if styled {
		st = ansiStyles(io.Discard)
	}
	return renderTable(s, st)
}

// columns holds the widths that keep every row of a snapshot aligned.
type columns struct {
	section, kind, name, state, duration int
}

func measure(rows []Row, st styles) columns {
	c := columns{section: len("certificates"), state: len("running")}
	if st.glyphs {
		c.state += 2
	}
	for _, r := range rows {
		c.section = max(c.section, lipgloss.Width(r.Section))
		c.kind = max(c.kind, lipgloss.Width(r.Kind))
		c.name = max(c.name, lipgloss.Width(r.Name))
		c.duration = max(c.duration, len(formatDuration(r.Duration)))
	}
	return c
}

// padRight pads styled text to width using the visible width of raw.
func padRight(styled, raw string, width int) string {
	return styled + strings.Repeat(" ", max(0, width-lipgloss.Width(raw)))
}

func padLeft(styled, raw string, width int) string {
	return strings.Repeat(" ", max(0, width-lipgloss.Width(raw))) + styled
}

// rowCells formats everything after the section: kind, name, state, duration
// and message. Trailing blanks are trimmed so lines do not end in padding.
func rowCells(r Row, c columns, st styles) string {
	word := r.State.String()
	if st.glyphs {
		word = r.State.glyph() + " " + word
	}
	paintState := st.state[r.State]
	if paintState == nil {
		paintState = st.state[Pending]
	}
	dur := formatDuration(r.Duration)
	var b strings.Builder
	b.WriteString(padRight(st.kind(r.Kind), r.Kind, c.kind))
	b.WriteString("  ")
	b.WriteString(padRight(r.Name, r.Name, c.name))
	b.WriteString("  ")
	b.WriteString(padRight(paintState(word), word, c.state))
	if c.duration > 0 {
		b.WriteString("  ")
		if dur == "" {
			b.WriteString(strings.Repeat(" ", c.duration))
		} else {
			b.WriteString(padLeft(st.duration(dur), dur, c.duration))
		}
	}
	if r.Message != "" {
		b.WriteString("  ")
		b.WriteString(st.message(r.Message))
	}
	return strings.TrimRight(b.String(), " ")
}

// renderTable draws the rows grouped under bold section titles, every line
// ending in a newline (the live redraw counts them).
func renderTable(s Snapshot, st styles) string {
	c := measure(s.Rows, st)
	var b strings.Builder
	for _, section := range orderedSections(s.Rows) {
		b.WriteString(st.section(section))
		b.WriteByte('\n')
		for _, r := range s.Rows {
			if r.Section != section {
				continue
			}
			b.WriteString("  ")
			b.WriteString(rowCells(r, c, st))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// renderLine is the single-line form of a row used for change logs, e.g.
// "core          hook   poststarthook/bootstrap-namespaces  ok  12ms".
func renderLine(r Row, c columns, st styles) string {
	return padRight(st.section(r.Section), r.Section, c.section) + "  " + rowCells(r, c, st) + "\n"
}

func orderedSections(rows []Row) []string {
	present := map[string]bool{}
	for _, r := range rows {
		present[r.Section] = true
	}
	var out []string
	for _, s := range sectionOrder {
		if present[s] {
			out = append(out, s)
			delete(present, s)
		}
	}
	for _, r := range rows {
		if present[r.Section] {
			out = append(out, r.Section)
			delete(present, r.Section)
		}
	}
	return out
}

// formatDuration gives short human durations: "", "<1ms", "12ms", "1.2s",
// "2m05s". Zero means "not measured" and prints nothing.
func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// renderLiveTable is renderTable made to fit a terminal of width × height
// (0: unknown): a redraw moves the cursor up by the lines it drew, so a line
// that wraps or a table taller than the screen would leave stale rows.
// Sections whose rows are all ok fold into one line when space is short,
// and every line is cut to the width.
func renderLiveTable(s Snapshot, st styles, width, height int) string {
	table := renderTable(s, st)
	if height > 0 && strings.Count(table, "\n") > height-liveSummaryRoom {
		table = renderFolded(s, st)
	}
	if width <= 0 {
		return table
	}
	lines := strings.SplitAfter(table, "\n")
	for i, l := range lines {
		if lipgloss.Width(strings.TrimSuffix(l, "\n")) >= width {
			lines[i] = ansi.Truncate(strings.TrimSuffix(l, "\n"), width-1, "…") + "\n"
		}
	}
	return strings.Join(lines, "")
}

// liveSummaryRoom keeps screen lines free for the ready summary below.
const liveSummaryRoom = 8

// renderFolded shows a section whose rows are all ok as one line with a
// count, and every row of the others.
func renderFolded(s Snapshot, st styles) string {
	c := measure(s.Rows, st)
	var b strings.Builder
	for _, section := range orderedSections(s.Rows) {
		var rows []Row
		allOK := true
		for _, r := range s.Rows {
			if r.Section == section {
				rows = append(rows, r)
				allOK = allOK && r.State == OK
			}
		}
		if allOK {
			word := OK.String()
			if st.glyphs {
				word = OK.glyph() + " " + word
			}
			fmt.Fprintf(&b, "%s  %s\n", padRight(st.section(section), section, c.section), st.state[OK](fmt.Sprintf("%s (%d)", word, len(rows))))
			continue
		}
		b.WriteString(st.section(section))
		b.WriteByte('\n')
		for _, r := range rows {
			b.WriteString("  ")
			b.WriteString(rowCells(r, c, st))
			b.WriteByte('\n')
		}
	}
	return b.String()
}
