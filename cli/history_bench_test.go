package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// BenchmarkHistoryRetentionCost measures what object history costs the
// served binary (etcd with fsync, clients in this process): two instances
// side by side, one keeping a minute of history (the compactor then runs
// every minute, kube's retention as near as possible) and one the default
// hour. Each idles for a minute (the write rate of an idle devplane with one
// node), then takes 100 updates a second of 100 ConfigMaps of 1 KiB for
// DEVPLANE_BENCH_HISTORY_MINUTES (5 by default); then the etcd database
// (file and in use), the revisions etcd keeps and the resident memory are
// printed for each.
//
//	go test -run '^$' -bench HistoryRetentionCost -benchtime 1x -timeout 30m ./cli/
func BenchmarkHistoryRetentionCost(b *testing.B) {
	minutes := 5
	if n, err := strconv.Atoi(os.Getenv("DEVPLANE_BENCH_HISTORY_MINUTES")); err == nil && n > 0 && n <= 60 {
		minutes = n
	}
	const short, long = "1m", "1h"
	for range b.N {
		dirs := []string{filepath.Join(b.TempDir(), "data"), filepath.Join(b.TempDir(), "data")}
		// Both serve at once, and take the same load at the same time.
		startReady(b, dirs[0], func(shortPID int) {
			startReady(b, dirs[1], func(longPID int) {
				var results [2]string
				var errs [2]error
				var load sync.WaitGroup
				for i, pid := range []int{shortPID, longPID} {
					load.Go(func() { results[i], errs[i] = historyLoad(dirs[i], pid, time.Duration(minutes)*time.Minute) })
				}
				load.Wait()
				for i, retention := range []string{short, long} {
					if errs[i] != nil {
						b.Fatalf("--history-retention %s: %v", retention, errs[i])
					}
					fmt.Printf("--history-retention %s: %s\n", retention, results[i])
				}
			}, "--history-retention", long)
		}, "--history-retention", short)
	}
}

// historyLoad idles a minute, writes for d and returns the figures.
func historyLoad(dir string, pid int, d time.Duration) (string, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return "", err
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), d+5*time.Minute)
	defer cancel()
	var metricErr error
	metric := func(name string) float64 {
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			metricErr = err
			return 0
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		metricErr = fmt.Errorf("no %s in /metrics", name)
		return 0
	}
	idleFrom := metric("etcd_debugging_mvcc_current_revision")
	time.Sleep(time.Minute)
	idlePerMinute := metric("etcd_debugging_mvcc_current_revision") - idleFrom

	const objects, perSecond = 100, 100
	value := strings.Repeat("v", 1024)
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hist-" + strconv.Itoa(i)}, Data: map[string]string{"v": value}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return "", err
		}
	}
	// Four writers take the ticks, so one slow answer does not lower the rate.
	var mu sync.Mutex
	writes := 0
	var writeErr error
	tick := time.NewTicker(time.Second / perSecond)
	defer tick.Stop()
	end := time.Now().Add(d)
	var writers sync.WaitGroup
	for range 4 {
		writers.Go(func() {
			for now := range tick.C {
				if now.After(end) {
					return
				}
				mu.Lock()
				n := writes
				writes++
				mu.Unlock()
				patch := fmt.Appendf(nil, `{"data":{"n":"%d"}}`, n)
				if _, err := cs.CoreV1().ConfigMaps("default").Patch(ctx, "hist-"+strconv.Itoa(n%objects), "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
					mu.Lock()
					writeErr = err
					mu.Unlock()
					return
				}
			}
		})
	}
	writers.Wait()
	if writeErr != nil {
		return "", writeErr
	}
	time.Sleep(5 * time.Second)
	st, err := os.Stat(filepath.Join(dir, "etcd", "member", "snap", "db"))
	if err != nil {
		return "", err
	}
	kept := metric("etcd_debugging_mvcc_current_revision") - metric("etcd_debugging_mvcc_compact_revision")
	rss := rssMB(pid)
	figures := fmt.Sprintf("idle %.0f writes/min; %d writes of 1 KiB in %s; revisions kept %.0f; db file %.1f MB, in use %.1f MB; RSS %.0f MB (anon %.0f, file %.0f)",
		idlePerMinute, writes, d, kept, float64(st.Size())/1e6, metric("etcd_mvcc_db_total_size_in_use_in_bytes")/1e6,
		rss.total, rss.anon, rss.file)
	return figures, metricErr
}
