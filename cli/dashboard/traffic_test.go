package dashboard

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func sampleTraffic() Traffic {
	return Traffic{Window: time.Minute, PerSecond: 12.35, Requests: 741, Errors: 3, P99: 42 * time.Millisecond, OpenWatches: 38,
		Top: []Caller{{Who: "kube-scheduler", Requests: 400}, {Who: "sa:default/app", Requests: 120, Errors: 3}, {Who: "devplane-admin (kubectl)", Requests: 9}}}
}

func TestRenderTrafficOnFixedInput(t *testing.T) {
	got := renderTraffic(sampleTraffic(), plainStyles(), 0)
	want := "API, last minute  requests 12.3/s  errors 3  p99 42ms  watches 38\n" +
		"top callers kube-scheduler 400, sa:default/app 120 (3 failed), devplane-admin (kubectl) 9\n"
	if got != want {
		t.Errorf("panel:\n%s\nwant:\n%s", got, want)
	}
	if got, want := renderTrafficLine(Traffic{Window: time.Minute}),
		"api last minute: 0.0 requests/s, 0 errors, p99 -, 0 watches open; top callers: none\n"; got != want {
		t.Errorf("idle line %q, want %q", got, want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(renderTraffic(sampleTraffic(), plainStyles(), 40), "\n"), "\n") {
		if n := len([]rune(line)); n > 39 {
			t.Errorf("line of %d columns on a 40-column terminal: %q", n, line)
		}
	}
}

func TestTrafficPanelStaysBelowLinesAndPlainWhenPiped(t *testing.T) {
	var buf bytes.Buffer
	d := New(&buf, Live)
	d.ShowTraffic(sampleTraffic)
	if buf.Len() != 0 {
		t.Fatalf("panel before Ready: %q", buf.String())
	}
	d.Ready(Summary{URL: "https://127.0.0.1:6443", Kubeconfig: "/k", Context: "devplane-default"})
	d.ShowTraffic(sampleTraffic)
	before := buf.Len()
	d.ShowTraffic(sampleTraffic)
	redraw := buf.String()[before:]
	if !strings.HasPrefix(redraw, "\x1b[2F\x1b[J") || !strings.Contains(ansiColour.ReplaceAllString(redraw, ""), "watches 38") {
		t.Errorf("panel not redrawn in place: %q", redraw)
	}
	before = buf.Len()
	d.Event("stopping")
	added := ansiColour.ReplaceAllString(buf.String()[before:], "")
	if !strings.HasPrefix(added, "\x1b[2F\x1b[J") || strings.Index(added, "stopping") > strings.Index(added, "API, last minute") {
		t.Errorf("event not written above the panel: %q", added)
	}

	var plain bytes.Buffer
	p := New(&plain, Plain)
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	p.Ready(Summary{URL: "https://127.0.0.1:6443", Kubeconfig: "/k", Context: "devplane-default"})
	start := plain.Len()
	for i := 0; i < 61; i++ { // a minute of one-second ticks
		p.ShowTraffic(sampleTraffic)
		now = now.Add(time.Second)
	}
	out := plain.String()[start:]
	if strings.Contains(out, "\x1b") {
		t.Errorf("plain traffic has escape codes: %q", out)
	}
	if n := strings.Count(out, "api last minute: 12.3 requests/s, 3 errors, p99 42ms, 38 watches open"); n != 2 {
		t.Errorf("plain mode printed the traffic line %d times in a minute of ticks, want 2 (at 0s and 60s):\n%s", n, out)
	}
}
