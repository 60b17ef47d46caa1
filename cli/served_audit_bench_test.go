package cli_test

// BenchmarkServedAuditCost measures what recording requests costs on the
// served binary (`devplane up`, etcd with fsync, clients in this process):
// ConfigMap creates (JSON, 16 workers) against
//
//   - baseline: a binary without request recording, named by
//     DEVPLANE_BASELINE_BIN (e.g. built from the commit before it); skipped
//     when unset,
//   - ring: this binary as it runs by default (the recent-request ring),
//   - audit-log: this binary writing every request at RequestResponse
//     level to an audit log file (kube's default blocking mode).
//
// The modes alternate, round after round, so a machine whose load drifts
// weighs on each alike; the medians of each mode are compared. Besides
// creates/s (wall time, sensitive to other load) it reports the server's
// CPU time per create (from /proc, less so).
//
//	DEVPLANE_BASELINE_BIN=/tmp/devplane-main go test -run '^$' -bench ServedAuditCost -benchtime 1x ./cli/

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// auditCostRounds is how many times each mode runs (3 unless
// DEVPLANE_BENCH_ROUNDS says otherwise).
func auditCostRounds() int {
	if n, err := strconv.Atoi(os.Getenv("DEVPLANE_BENCH_ROUNDS")); err == nil && n > 0 && n <= 20 {
		return n
	}
	return 3
}

func BenchmarkServedAuditCost(b *testing.B) {
	policy := filepath.Join(b.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	type mode struct {
		name string
		bin  string
		args func(dir string) []string
	}
	modes := []mode{
		{"ring", devplaneBin, func(string) []string { return nil }},
		{"audit-log", devplaneBin, func(dir string) []string {
			return []string{"--audit-policy-file", policy, "--audit-log-path", filepath.Join(dir, "audit.log")}
		}},
	}
	if base := os.Getenv("DEVPLANE_BASELINE_BIN"); base != "" {
		modes = append([]mode{{"baseline", base, func(string) []string { return nil }}}, modes...)
	} else {
		fmt.Println("DEVPLANE_BASELINE_BIN not set: the ring's cost needs a binary without it to compare with")
	}
	n := loadObjects()
	for range b.N {
		rates := map[string][]float64{}
		cpu := map[string][]float64{}
		for round := 0; round < auditCostRounds(); round++ {
			// Each round starts with the next mode: none always runs first.
			for k := range modes {
				m := modes[(round+k)%len(modes)]
				dir := filepath.Join(b.TempDir(), "data")
				args := append([]string{"--nodes=0"}, m.args(dir)...)
				startReadyBin(b, m.bin, dir, func(pid int) {
					rate, cpuPer := createLoad(b, dir, pid, n)
					rates[m.name] = append(rates[m.name], rate)
					cpu[m.name] = append(cpu[m.name], cpuPer)
				}, args...)
			}
		}
		ref := modes[0].name
		fmt.Printf("\nConfigMap creates (%d per run, 16 workers, JSON), medians of %d alternating runs:\n", n, auditCostRounds())
		fmt.Printf("%-10s  %10s  %8s  %18s  %8s  %s\n", "mode", "creates/s", "vs "+ref, "server CPU/create", "vs "+ref, "runs: creates/s; µs")
		for _, m := range modes {
			r, c := median(rates[m.name]), median(cpu[m.name])
			fmt.Printf("%-10s  %10.0f  %+7.1f%%  %15.0f µs  %+7.1f%%  %s; %s\n", m.name, r,
				100*(r/median(rates[ref])-1), c, 100*(c/median(cpu[ref])-1), joinFloats(rates[m.name]), joinFloats(cpu[m.name]))
			b.ReportMetric(r, m.name+"-creates/s")
			b.ReportMetric(c, m.name+"-cpu-µs/create")
		}
	}
}

// startReadyBin is startReady with another devplane binary.
func startReadyBin(b *testing.B, bin, dir string, then func(pid int), extraArgs ...string) {
	b.Helper()
	saved := devplaneBin
	devplaneBin = bin
	defer func() { devplaneBin = saved }()
	startReady(b, dir, then, extraArgs...)
}

// createLoad creates n ConfigMaps of about 1.4 KB on 16 workers and returns
// creates per second and the server's CPU time per create in µs.
func createLoad(b *testing.B, dir string, pid, n int) (perSecond, cpuMicros float64) {
	b.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		b.Fatal(err)
	}
	c, _ := loadConfig(cfg, false)
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	ns := "audit-cost"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	payload := strings.Repeat("x", 1400)
	f := &loadFigures{}
	cpuBefore := cpuSeconds(b, pid)
	start := time.Now()
	parallel(b, ctx, n, func(i int) error {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i)}, Data: map[string]string{"payload": payload},
		}, metav1.CreateOptions{})
		return err
	}, f, "creates/s")
	elapsed := time.Since(start)
	cpuUsed := cpuSeconds(b, pid) - cpuBefore
	return float64(n) / elapsed.Seconds(), cpuUsed / float64(n) * 1e6
}

// cpuSeconds is a process's user + system CPU time so far, from
// /proc/<pid>/stat (in clock ticks of 1/100 s, as Linux reports them).
func cpuSeconds(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Skip("no /proc: CPU time is not measured here")
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func joinFloats(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strings.Join(parts, " ")
}
