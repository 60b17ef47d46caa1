package dashboard

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Mode selects how the dashboard writes.
type Mode int

const (
	// Live colours the output and redraws the table in place with ANSI
	// cursor movement; for terminals.
	Live Mode = iota
	// Plain writes no escape codes and never redraws: one line per change.
	Plain
)

func (m Mode) String() string {
	if m == Live {
		return "live"
	}
	return "plain"
}

// DetectMode picks Plain when out is not a terminal, when NO_COLOR is set to
// a non-empty value, or when logs are JSON (escape codes would corrupt them);
// otherwise Live.
func DetectMode(out *os.File, jsonLogs bool) Mode {
	if jsonLogs || os.Getenv("NO_COLOR") != "" || out == nil || !term.IsTerminal(int(out.Fd())) {
		return Plain
	}
	return Live
}

// defaultRedrawInterval caps live redraws at 30 per second.
const defaultRedrawInterval = time.Second / 30

// Dashboard writes snapshots, the ready summary and progress events to one
// writer. It is safe for concurrent use.
type Dashboard struct {
	mu     sync.Mutex
	out    io.Writer
	mode   Mode
	styles styles

	latest Snapshot
	states map[rowKey]State // state of every row as of the latest snapshot

	drawnLines     int  // lines of the table currently on screen (Live)
	dirty          bool // latest snapshot not yet drawn (Live)
	lastDraw       time.Time
	redrawInterval time.Duration
	redrawPending  bool // a throttled redraw is scheduled
	redrawGen      int  // identifies the scheduled redraw; bumped to cancel it
	ready          bool

	// The traffic panel, once ready: its lines on screen (Live) and when
	// Plain mode last printed it.
	panelLines  int
	panel       string
	lastTraffic time.Time

	now func() time.Time // replaceable in tests
	// size reports the terminal's columns and rows (0, 0 when unknown).
	size func() (width, height int)
}

type rowKey struct{ section, kind, name string }

// New returns a dashboard writing to out in the given mode.
func New(out io.Writer, mode Mode) *Dashboard {
	st := plainStyles()
	if mode == Live {
		st = ansiStyles(out)
	}
	return &Dashboard{
		out:            out,
		mode:           mode,
		styles:         st,
		states:         map[rowKey]State{},
		redrawInterval: defaultRedrawInterval,
		now:            time.Now,
		size:           terminalSize(out),
	}
}

// terminalSize measures out when it is a terminal.
func terminalSize(out io.Writer) func() (int, int) {
	f, ok := out.(*os.File)
	if !ok {
		return func() (int, int) { return 0, 0 }
	}
	return func() (int, int) {
		w, h, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0, 0
		}
		return w, h
	}
}

// Update shows a new snapshot. Live mode redraws the table in place, at most
// 30 times a second; a throttled snapshot is drawn shortly after, or at once
// by Flush or Ready. Plain mode, and every mode after Ready, prints one line
// per row whose state changed since the previous snapshot.
func (d *Dashboard) Update(s Snapshot) {
	d.mu.Lock()
	defer d.mu.Unlock()

	// Copy: the caller may reuse its slice while a redraw is pending.
	s = Snapshot{Rows: append([]Row(nil), s.Rows...)}
	changed := d.recordStates(s)
	d.latest = s

	if d.mode == Plain || d.ready {
		d.writeLines(changed, s)
		return
	}
	d.dirty = true
	if wait := d.lastDraw.Add(d.redrawInterval).Sub(d.now()); wait > 0 {
		d.scheduleRedraw(wait)
		return
	}
	d.drawTable()
}

// Flush draws the latest snapshot now if a throttled redraw is pending.
func (d *Dashboard) Flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flushLocked()
}

func (d *Dashboard) flushLocked() {
	d.cancelRedraw() // it would only repeat this draw
	if d.dirty && !d.ready {
		d.drawTable()
	}
}

// Ready draws the final table and prints the summary, once. From then on the
// table is not redrawn; later Updates print changed rows as lines.
func (d *Dashboard) Ready(sum Summary) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ready {
		return
	}
	d.flushLocked()
	d.ready = true
	io.WriteString(d.out, renderSummary(sum, d.styles))
}

// Event prints one progress line, such as a shutdown step. Before Ready in
// Live mode the line goes above the table, which is redrawn beneath it.
func (d *Dashboard) Event(msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	line := msg + "\n"
	if d.mode == Live {
		line = d.styles.label("›") + " " + d.styles.value(msg) + "\n"
	}
	if d.mode == Live && !d.ready && d.drawnLines > 0 {
		io.WriteString(d.out, eraseLines(d.drawnLines)+line)
		d.drawnLines = 0
		d.drawTable()
		return
	}
	d.writeAbovePanel(line)
}

// recordStates remembers each row's state and returns the rows that are new
// or whose state differs from the previous snapshot.
func (d *Dashboard) recordStates(s Snapshot) []Row {
	var changed []Row
	for _, r := range s.Rows {
		k := rowKey{r.Section, r.Kind, r.Name}
		if prev, seen := d.states[k]; !seen || prev != r.State {
			changed = append(changed, r)
		}
		d.states[k] = r.State
	}
	return changed
}

func (d *Dashboard) writeLines(rows []Row, s Snapshot) {
	if len(rows) == 0 {
		return
	}
	// Widths come from the whole snapshot so lines of one update align.
	c := measure(s.Rows, d.styles)
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(renderLine(r, c, d.styles))
	}
	d.writeAbovePanel(b.String())
}

// drawTable replaces the table on screen with the latest snapshot.
func (d *Dashboard) drawTable() {
	w, h := d.size()
	table := renderLiveTable(d.latest, d.styles, w, h)
	io.WriteString(d.out, eraseLines(d.drawnLines)+table)
	d.drawnLines = strings.Count(table, "\n")
	d.dirty = false
	d.lastDraw = d.now()
}

func (d *Dashboard) scheduleRedraw(wait time.Duration) {
	if d.redrawPending {
		return // it will draw the latest snapshot anyway
	}
	d.redrawPending = true
	gen := d.redrawGen
	time.AfterFunc(wait, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if !d.redrawPending || gen != d.redrawGen {
			return // cancelled by Flush or Ready meanwhile
		}
		d.redrawPending = false
		if d.dirty && !d.ready {
			d.drawTable()
		}
	})
}

func (d *Dashboard) cancelRedraw() {
	if d.redrawPending {
		d.redrawPending = false
		d.redrawGen++
	}
}

// eraseLines moves the cursor to the start of the line n lines up and clears
// from there to the end of the screen.
func eraseLines(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("\x1b[%dF\x1b[J", n)
}
