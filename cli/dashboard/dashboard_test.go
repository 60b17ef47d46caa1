package dashboard

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
)

func sampleSnapshot() Snapshot {
	return Snapshot{Rows: []Row{
		{Section: "core", Kind: KindHook, Name: "poststarthook/bootstrap-namespaces", State: Running, Duration: 12 * time.Millisecond},
		{Section: "certificates", Kind: KindStep, Name: "certificates", State: OK, Duration: 3 * time.Millisecond},
		{Section: "etcd", Kind: KindStep, Name: "etcd", State: OK, Duration: 1200 * time.Millisecond},
		{Section: "aggregator", Kind: KindCheck, Name: "ping", State: OK},
		{Section: "extensions", Kind: KindHook, Name: "poststarthook/crd-informer-synced", State: Pending},
		{Section: "core", Kind: KindCheck, Name: "etcd", State: Failed, Duration: 2 * time.Second, Message: "connection refused"},
	}}
}

var ansiColour = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func lineCount(s string) int { return strings.Count(s, "\n") }

func TestRenderPlainListsEveryRowWithoutEscapes(t *testing.T) {
	out := Render(sampleSnapshot(), false)
	if strings.Contains(out, "\x1b") {
		t.Fatalf("plain render contains escape codes:\n%q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, r := range sampleSnapshot().Rows {
		found := false
		for _, l := range lines {
			if strings.Contains(l, " "+r.Name+" ") && strings.Contains(l, " "+r.State.String()) && strings.Contains(l, r.Kind) {
				found = true
			}
		}
		if !found {
			t.Errorf("no line with %s %q %s in:\n%s", r.Kind, r.Name, r.State, out)
		}
	}
	if !strings.Contains(out, "connection refused") {
		t.Errorf("failure message missing:\n%s", out)
	}
	// Five section titles plus six rows.
	if got := len(lines); got != 11 {
		t.Errorf("got %d lines, want 11:\n%s", got, out)
	}
}

func TestRenderGroupsSectionsInStartupOrder(t *testing.T) {
	out := Render(sampleSnapshot(), false)
	last := -1
	for _, section := range sectionOrder {
		i := strings.Index(out, section+"\n")
		if i < 0 {
			t.Fatalf("section title %q missing:\n%s", section, out)
		}
		if i < last {
			t.Errorf("section %q out of order:\n%s", section, out)
		}
		last = i
	}
	// Both core rows sit under the core title, in input order.
	core := out[strings.Index(out, "core\n"):strings.Index(out, "extensions\n")]
	if lineCount(core) != 3 || strings.Index(core, "bootstrap-namespaces") > strings.Index(core, "connection refused") {
		t.Errorf("core section wrong:\n%s", core)
	}
}

func TestRenderAlignsColumns(t *testing.T) {
	out := Render(sampleSnapshot(), false)
	// Every state word starts in the same column.
	col := -1
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "  ") {
			continue
		}
		i := regexp.MustCompile(`\b(pending|running|ok|failed)\b`).FindStringIndex(l)
		if i == nil {
			t.Fatalf("row without state: %q", l)
		}
		if col >= 0 && i[0] != col {
			t.Errorf("state column %d, want %d in %q", i[0], col, l)
		}
		col = i[0]
	}
	// Durations are right-aligned: "1.2s" and "12ms" end in the same column.
	var ends []int
	for _, l := range strings.Split(out, "\n") {
		for _, d := range []string{"1.2s", "12ms", "3ms"} {
			if i := strings.Index(l, " "+d); i >= 0 {
				ends = append(ends, i+1+len(d))
			}
		}
	}
	if len(ends) != 3 || ends[0] != ends[1] || ends[1] != ends[2] {
		t.Errorf("duration ends %v, want three equal columns:\n%s", ends, out)
	}
}

func TestRenderStyledHasColours(t *testing.T) {
	out := Render(sampleSnapshot(), true)
	if !ansiColour.MatchString(out) {
		t.Fatalf("styled render has no ANSI codes:\n%q", out)
	}
	for _, want := range []string{"✓", "◌", "·", "✗"} {
		if !strings.Contains(out, want) {
			t.Errorf("styled render lacks glyph %s", want)
		}
	}
	// Red for the failed row, green for ok.
	if !regexp.MustCompile(`\x1b\[(1;)?31m✗ failed`).MatchString(out) || !strings.Contains(out, "\x1b[32m✓ ok") {
		t.Errorf("expected red (31) and green (32) codes in %q", out)
	}
	if got, want := ansiColour.ReplaceAllString(out, ""), Render(sampleSnapshot(), false); lineCount(got) != lineCount(want) {
		t.Errorf("styled and plain renders differ in line count")
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                       "",
		500 * time.Microsecond:  "<1ms",
		12 * time.Millisecond:   "12ms",
		1234 * time.Millisecond: "1.2s",
		125 * time.Second:       "2m05s",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestLiveUpdateRedrawsInPlace(t *testing.T) {
	var buf bytes.Buffer
	d := New(&buf, Live)
	snap := sampleSnapshot()
	d.Update(snap)
	first := buf.String()
	if strings.Contains(first, "\x1b[") && regexp.MustCompile(`\x1b\[\d+[AF]`).MatchString(first) {
		t.Fatalf("first draw should not move the cursor: %q", first)
	}
	if !ansiColour.MatchString(first) {
		t.Fatalf("live output has no colours: %q", first)
	}
	tableLines := lineCount(first)

	snap.Rows[0].State = OK
	d.Update(snap)
	d.Flush()
	second := strings.TrimPrefix(buf.String(), first)
	wantUp := fmt.Sprintf("\x1b[%dF", tableLines)
	if !strings.HasPrefix(second, wantUp) {
		t.Fatalf("second draw should start by moving up %d lines, got %q", tableLines, second)
	}
	plainSecond := ansiColour.ReplaceAllString(second, "")
	if !regexp.MustCompile(`bootstrap-namespaces\s+✓ ok`).MatchString(plainSecond) {
		t.Errorf("redraw does not show the new state: %q", plainSecond)
	}
}

func TestLiveUpdateThrottlesButFlushDrawsLatest(t *testing.T) {
	var buf bytes.Buffer
	d := New(&buf, Live)
	d.redrawInterval = time.Hour // the trailing timer must not fire during the test
	snap := sampleSnapshot()
	d.Update(snap)
	drawn := buf.Len()

	snap.Rows[0].State = Failed
	d.Update(snap)
	snap.Rows[0].State = OK
	d.Update(snap)
	if buf.Len() != drawn {
		t.Fatalf("updates within the interval redrew immediately: %q", buf.String()[drawn:])
	}
	d.Flush()
	redraw := ansiColour.ReplaceAllString(buf.String()[drawn:], "")
	if !regexp.MustCompile(`bootstrap-namespaces\s+✓ ok`).MatchString(redraw) {
		t.Errorf("flush did not draw the latest state: %q", redraw)
	}
	after := buf.Len()
	d.Flush()
	if buf.Len() != after {
		t.Errorf("second flush redrew with nothing new")
	}
}

func TestLiveTrailingRedrawHappensWithoutFlush(t *testing.T) {
	var buf syncBuffer
	d := New(&buf, Live)
	d.redrawInterval = 10 * time.Millisecond
	snap := sampleSnapshot()
	d.Update(snap)
	snap.Rows[0].State = OK
	d.Update(snap)
	deadline := time.Now().Add(5 * time.Second)
	for !regexp.MustCompile(`bootstrap-namespaces\s+✓ ok`).MatchString(ansiColour.ReplaceAllString(buf.String(), "")) {
		if time.Now().After(deadline) {
			t.Fatalf("throttled snapshot was never drawn: %q", buf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestReadyDrawsFinalStateThenOnlyChangedLines(t *testing.T) {
	var buf bytes.Buffer
	d := New(&buf, Live)
	d.redrawInterval = time.Hour
	snap := sampleSnapshot()
	d.Update(snap)
	for i := range snap.Rows {
		snap.Rows[i].State = OK
		snap.Rows[i].Message = ""
	}
	d.Update(snap) // throttled: Ready must still draw it
	d.Ready(Summary{ReadyIn: 212 * time.Millisecond, URL: "https://127.0.0.1:6443", Kubeconfig: "/k", Context: "devplane-default", Merged: true})
	out := ansiColour.ReplaceAllString(buf.String(), "")
	summaryAt := strings.Index(out, "devplane ready in 212ms")
	if summaryAt < 0 {
		t.Fatalf("no summary: %q", out)
	}
	if strings.Contains(out[strings.LastIndex(out[:summaryAt], "\x1b[J"):summaryAt], "failed") {
		t.Errorf("final table before the summary still shows a failure: %q", out)
	}

	before := buf.Len()
	d.Update(snap)
	if buf.Len() != before {
		t.Errorf("unchanged snapshot after Ready wrote %q", buf.String()[before:])
	}
	snap.Rows[5].State = Failed
	d.Update(snap)
	added := buf.String()[before:]
	if strings.Contains(added, "\x1b[J") || regexp.MustCompile(`\x1b\[\d+[AF]`).MatchString(added) {
		t.Errorf("table redrawn after Ready: %q", added)
	}
	if lineCount(added) != 1 || !strings.Contains(ansiColour.ReplaceAllString(added, ""), "failed") {
		t.Errorf("want one line with the failing check, got %q", added)
	}
}

func TestPlainUpdatePrintsOnlyChanges(t *testing.T) {
	var buf bytes.Buffer
	d := New(&buf, Plain)
	snap := sampleSnapshot()
	d.Update(snap)
	if got := lineCount(buf.String()); got != len(snap.Rows) {
		t.Fatalf("first update printed %d lines, want %d:\n%s", got, len(snap.Rows), buf.String())
	}
	before := buf.Len()
	d.Update(snap)
	if buf.Len() != before {
		t.Fatalf("same snapshot printed %q", buf.String()[before:])
	}
	snap.Rows[0].State = OK
	snap.Rows[0].Duration = 40 * time.Millisecond
	snap.Rows[2].Duration = 5 * time.Second // duration alone is not a change
	d.Update(snap)
	added := buf.String()[before:]
	if lineCount(added) != 1 {
		t.Fatalf("one changed row printed %d lines: %q", lineCount(added), added)
	}
	if !regexp.MustCompile(`^core\s+hook\s+poststarthook/bootstrap-namespaces\s+ok\s+40ms\n$`).MatchString(added) {
		t.Errorf("unexpected line %q", added)
	}
	if strings.Contains(buf.String(), "\x1b") {
		t.Errorf("plain output contains escape codes: %q", buf.String())
	}
}

func TestPlainEventAndSummary(t *testing.T) {
	var buf bytes.Buffer
	d := New(&buf, Plain)
	d.Ready(Summary{ReadyIn: 212 * time.Millisecond, URL: "https://127.0.0.1:6443", Kubeconfig: "/home/u/.local/share/devplane/default/kubeconfig", Context: "devplane-default"})
	d.Ready(Summary{URL: "second"})
	d.Event("etcd stopped")
	out := buf.String()
	want := "✓ devplane ready in 212ms\n" +
		"server      https://127.0.0.1:6443\n" +
		"kubeconfig  /home/u/.local/share/devplane/default/kubeconfig\n" +
		"context     devplane-default\n" +
		"try         export KUBECONFIG=/home/u/.local/share/devplane/default/kubeconfig\n" +
		"            kubectl get ns\n" +
		"etcd stopped\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestReadySummaryMergedSuggestsContext(t *testing.T) {
	var buf bytes.Buffer
	d := New(&buf, Live)
	d.Ready(Summary{ReadyIn: 1500 * time.Millisecond, URL: "https://127.0.0.1:6443", Kubeconfig: "/tmp/my dir/kubeconfig", Context: "devplane-default", Merged: true})
	out := ansiColour.ReplaceAllString(buf.String(), "")
	for _, want := range []string{"ready in 1.5s", "https://127.0.0.1:6443", "/tmp/my dir/kubeconfig", "devplane-default", "kubectl --context devplane-default get ns"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "KUBECONFIG") {
		t.Errorf("merged summary should not suggest KUBECONFIG:\n%s", out)
	}
}

func TestSummaryQuotesUnsafePaths(t *testing.T) {
	out := renderSummary(Summary{Kubeconfig: "/tmp/it's here/kc", Context: "c"}, plainStyles())
	if !strings.Contains(out, `export KUBECONFIG='/tmp/it'\''s here/kc'`) {
		t.Errorf("path not shell-quoted:\n%s", out)
	}
}

func TestLiveEventGoesAboveTable(t *testing.T) {
	var buf bytes.Buffer
	d := New(&buf, Live)
	d.Update(sampleSnapshot())
	tableLines := lineCount(buf.String())
	d.Event("shutting down: readyz now failing")
	added := buf.String()[len(Render(sampleSnapshot(), true)):]
	if !strings.HasPrefix(added, fmt.Sprintf("\x1b[%dF\x1b[J", tableLines)) {
		t.Fatalf("event did not erase the table first: %q", added)
	}
	plain := ansiColour.ReplaceAllString(added, "")
	ev := strings.Index(plain, "shutting down: readyz now failing")
	if ev < 0 || ev > strings.Index(plain, "certificates") {
		t.Errorf("event should come before the redrawn table: %q", plain)
	}
}

func TestDetectMode(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()

	t.Setenv("NO_COLOR", "")
	if got := DetectMode(w, false); got != Plain {
		t.Errorf("pipe: got %v, want plain", got)
	}
	if got := DetectMode(nil, false); got != Plain {
		t.Errorf("nil file: got %v, want plain", got)
	}

	tty := openPseudoTerminal(t)
	defer tty.Close()
	if got := DetectMode(tty, false); got != Live {
		t.Errorf("terminal: got %v, want live", got)
	}
	if got := DetectMode(tty, true); got != Plain {
		t.Errorf("terminal with JSON logs: got %v, want plain", got)
	}
	t.Setenv("NO_COLOR", "1")
	if got := DetectMode(tty, false); got != Plain {
		t.Errorf("terminal with NO_COLOR: got %v, want plain", got)
	}
}

func TestParseVerbose(t *testing.T) {
	body := "[+]ping ok\n" +
		"[+]log ok\n" +
		"[-]etcd failed: reason withheld\n" +
		"[+]etcd-readiness ok\n" +
		"[+]informer-sync excluded: ok\n" +
		"[+]poststarthook/start-apiserver-admission-initializer ok\n" +
		"[-]poststarthook/bootstrap-namespaces failed: not finished\n" +
		"[-]poststarthook/rbac/bootstrap-roles failed: cannot create clusterrole\n" +
		"[+]shutdown ok\n" +
		"readyz check failed\n"
	got := ParseVerbose(body, "core")
	want := []Row{
		{Section: "core", Kind: KindCheck, Name: "ping", State: OK},
		{Section: "core", Kind: KindCheck, Name: "log", State: OK},
		{Section: "core", Kind: KindCheck, Name: "etcd", State: Failed, Message: "reason withheld"},
		{Section: "core", Kind: KindCheck, Name: "etcd-readiness", State: OK},
		{Section: "core", Kind: KindCheck, Name: "informer-sync", State: OK, Message: "excluded"},
		{Section: "core", Kind: KindHook, Name: "poststarthook/start-apiserver-admission-initializer", State: OK},
		{Section: "core", Kind: KindHook, Name: "poststarthook/bootstrap-namespaces", State: Running},
		{Section: "core", Kind: KindHook, Name: "poststarthook/rbac/bootstrap-roles", State: Failed, Message: "cannot create clusterrole"},
		{Section: "core", Kind: KindCheck, Name: "shutdown", State: OK},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseVerboseToleratesCRLFAndPassedBody(t *testing.T) {
	got := ParseVerbose("[+]ping ok\r\n[+]poststarthook/x ok\r\nlivez check passed\r\n", "etcd")
	if len(got) != 2 || got[0].Name != "ping" || got[1].Kind != KindHook || got[1].State != OK || got[0].Section != "etcd" {
		t.Errorf("unexpected rows %+v", got)
	}
	if rows := ParseVerbose("ok", "core"); len(rows) != 0 {
		t.Errorf("non-verbose body gave rows %+v", rows)
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{Pending: "pending", Running: "running", OK: "ok", Failed: "failed"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(s), s.String(), want)
		}
	}
}

func TestConcurrentUpdates(t *testing.T) {
	for _, mode := range []Mode{Live, Plain} {
		t.Run(mode.String(), func(t *testing.T) {
			var buf syncBuffer
			d := New(&buf, mode)
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; i < 50; i++ {
						snap := sampleSnapshot()
						snap.Rows[0].State = State((g + i) % 4)
						d.Update(snap)
						if i == 25 {
							d.Event(fmt.Sprintf("goroutine %d halfway", g))
						}
					}
				}(g)
			}
			wg.Wait()
			final := sampleSnapshot()
			final.Rows[0].State = OK
			d.Update(final)
			d.Ready(Summary{URL: "https://127.0.0.1:6443", Kubeconfig: "/k", Context: "c"})
			out := ansiColour.ReplaceAllString(buf.String(), "")
			if strings.Count(out, "devplane ready in") != 1 {
				t.Errorf("summary printed %d times", strings.Count(out, "devplane ready in"))
			}
			if !strings.Contains(out, "goroutine 7 halfway") {
				t.Errorf("event lost")
			}
			if mode == Live {
				// The last table drawn before the summary shows the final state.
				tail := out[strings.LastIndex(out, "certificates\n"):strings.Index(out, "devplane ready in")]
				if !regexp.MustCompile(`bootstrap-namespaces\s+✓ ok`).MatchString(tail) {
					t.Errorf("final state not drawn before Ready: %q", tail)
				}
			}
		})
	}
}

// syncBuffer lets a test read output while a scheduled redraw may write it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestLiveTableFitsTheTerminal(t *testing.T) {
	var rows []Row
	for i := 0; i < 12; i++ {
		rows = append(rows, Row{Section: "core", Kind: "hook", Name: fmt.Sprintf("poststarthook/hook-%d", i), State: OK})
	}
	rows = append(rows, Row{Section: "aggregator", Kind: "check", Name: "autoregister-completion", State: Failed,
		Message: "missing APIService: " + strings.Repeat("v1.example.io ", 40)})
	st := plainStyles()
	table := renderLiveTable(Snapshot{Rows: rows}, st, 60, 12)
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if len(lines) > 12-liveSummaryRoom+2 {
		t.Errorf("%d lines for a 12-row terminal:\n%s", len(lines), table)
	}
	for _, l := range lines {
		if w := lipgloss.Width(l); w >= 60 {
			t.Errorf("line of width %d in a 60-column terminal: %q", w, l)
		}
	}
	if !strings.Contains(table, "core") || !strings.Contains(table, "(12)") {
		t.Errorf("the all-ok section is not folded into a count:\n%s", table)
	}
	if !strings.Contains(table, "autoregister-completion") {
		t.Errorf("the failing row is not shown:\n%s", table)
	}
	if full := renderLiveTable(Snapshot{Rows: rows}, st, 0, 0); strings.Count(full, "\n") != 15 {
		t.Errorf("with an unknown size the table is not drawn in full:\n%s", full)
	}
}
