package cli_test

// A simulated cluster at scale on the served binary (fsync on, clients in
// this process), beside kube-apiserver + etcd + kube-controller-manager +
// kube-scheduler + kwok when ../shared/peer has built kwok:
//
//	go test -run '^$' -bench SimulatedCluster -benchtime 1x -timeout 90m ./cli/
//
// DEVPLANE_BENCH_NODES (250), DEVPLANE_BENCH_REPLICAS (10,000 per
// Deployment) and DEVPLANE_BENCH_DEPLOYMENTS (1) size it; DEVPLANE_BENCH_IDLE
// is how long the idle nodes are measured (60s; 0 skips it).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// BenchmarkSimulatedCluster starts `devplane up --nodes N` and reports:
// the time from start until every node is Ready; its CPU and RSS over a
// minute idle; the time from creating the Deployments until every replica
// is Available, the CPU seconds the server spent on it and its RSS then
// and 10 s later; how long `kubectl get pods -A` takes with them all.
// Targets (N=250, 10,000 replicas, 2 cores): Available ≤ 15 s, RSS 10 s
// later ≤ 400 MB; 1,000 idle nodes ≤ 5% of a core and ≤ 250 MB.
func BenchmarkSimulatedCluster(b *testing.B) {
	nodes := envInt("DEVPLANE_BENCH_NODES", 250, 5000)
	replicas := envInt("DEVPLANE_BENCH_REPLICAS", 10000, 100000)
	deployments := envInt("DEVPLANE_BENCH_DEPLOYMENTS", 1, 100)
	idle := time.Duration(envInt("DEVPLANE_BENCH_IDLE", 60, 600)) * time.Second
	if os.Getenv("DEVPLANE_BENCH_IDLE") == "0" {
		idle = 0
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		b.Skip("kubectl not on PATH")
	}
	total := replicas * deployments
	args := []string{"--nodes", strconv.Itoa(nodes)}
	if nodes > 256 { // more /24s than the default 10.244.0.0/16 holds
		args = append(args, "--cluster-cidr", "100.64.0.0/10")
	}
	for range b.N {
		f := &loadFigures{server: "devplane"}
		dir := filepath.Join(b.TempDir(), "data")
		start := time.Now()
		startReady(b, dir, func(pid int) {
			cs := benchClient(b, dir)
			waitNodesReadyWithin(b, cs, nodes, 5*time.Minute)
			f.set(fmt.Sprintf("%d nodes Ready, s from start", nodes), time.Since(start).Seconds())
			if idle > 0 {
				time.Sleep(5 * time.Second) // registration's writes settle
				cpu := cpuSeconds(b, pid)
				time.Sleep(idle)
				f.set(fmt.Sprintf("idle %d nodes, %% of a core", nodes), 100*(cpuSeconds(b, pid)-cpu)/idle.Seconds())
				f.set(fmt.Sprintf("idle %d nodes, RSS MB", nodes), rssMB(pid).total)
			}
			cpu := cpuSeconds(b, pid)
			created := time.Now()
			for d := range deployments {
				if _, err := cs.AppsV1().Deployments("default").Create(context.Background(), deployment(fmt.Sprintf("big-%d", d), int32(replicas)), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			waitAvailable(b, cs, total, 15*time.Minute)
			f.set(fmt.Sprintf("%d replicas Available, s after the create", total), time.Since(created).Seconds())
			f.set("server CPU s, create to Available", cpuSeconds(b, pid)-cpu)
			f.set("RSS MB when Available", rssMB(pid).total)
			time.Sleep(10 * time.Second)
			f.set("RSS MB 10 s later", rssMB(pid).total)
			getStart := time.Now()
			out, err := exec.Command("kubectl", "--kubeconfig", filepath.Join(dir, "kubeconfig"), "get", "pods", "-A", "--no-headers").Output()
			if err != nil {
				b.Fatalf("kubectl get pods -A: %v", err)
			}
			if n := bytes.Count(out, []byte("\n")); n != total {
				b.Fatalf("kubectl get pods -A listed %d pods, want %d", n, total)
			}
			f.set("kubectl get pods -A, s", time.Since(getStart).Seconds())
		}, args...)
		results := []*loadFigures{f}
		if kwok := kwokScale(b, nodes, total, deployments); kwok != nil {
			results = append(results, kwok)
		}
		printFigures(results)
		for name, v := range f.values {
			b.ReportMetric(v, strings.NewReplacer(" ", "-", ",", "").Replace(name))
		}
	}
}

// envInt is the environment variable name as a number in 1..limit, or def.
func envInt(name string, def, limit int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 && n <= limit {
		return n
	}
	return def
}

func waitNodesReadyWithin(b *testing.B, cs kubernetes.Interface, n int, limit time.Duration) {
	b.Helper()
	deadline := time.Now().Add(limit)
	for {
		if readyNodes(cs) == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d nodes not Ready within %s", n, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readyNodes counts the nodes whose Ready condition is True.
func readyNodes(cs kubernetes.Interface) int {
	nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return 0
	}
	ready := 0
	for _, node := range nodes.Items {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready
}

// waitAvailable waits until the Deployments in default have n replicas
// Available and up to date.
func waitAvailable(b *testing.B, cs kubernetes.Interface, n int, limit time.Duration) {
	b.Helper()
	deadline := time.Now().Add(limit)
	for {
		list, err := cs.AppsV1().Deployments("default").List(context.Background(), metav1.ListOptions{})
		available, updated := 0, 0
		if err == nil {
			for _, d := range list.Items {
				available += int(d.Status.AvailableReplicas)
				updated += int(d.Status.UpdatedReplicas)
			}
		}
		if available == n && updated == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d replicas Available after %s", available, n, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var (
	kwokNodesLine    = regexp.MustCompile(`^(\d+) nodes Ready at (\d+) ms from start; RSS (\d+) MB`)
	kwokReplicasLine = regexp.MustCompile(`^(\d+) replicas Available (\d+) ms after the create; RSS (\d+) MB`)
)

// kwokScale runs ../shared/peer/kwok-scale.sh with the same sizes and
// returns its figures, or nil (saying why) when kwok is not built. It
// runs one Deployment of all the replicas: the script creates one.
func kwokScale(b *testing.B, nodes, replicas, deployments int) *loadFigures {
	b.Helper()
	script := peerScript("kwok-scale.sh")
	if script == "" {
		fmt.Println("no kwok-scale.sh: it comes with ../shared/peer (DEVPLANE_PEER_SCRIPTS names another directory)")
		return nil
	}
	if !fileExists(filepath.Join(peerDir(), "bin", "kwok")) {
		fmt.Println("kwok not built: build the reference with ../shared/peer/build.sh kwok to measure it beside devplane")
		return nil
	}
	if deployments != 1 {
		fmt.Println("kwok-scale.sh creates one Deployment: run it with DEVPLANE_BENCH_DEPLOYMENTS=1 for the reference")
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), "N="+strconv.Itoa(nodes), "R="+strconv.Itoa(replicas), "PEER_DIR="+peerDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Printf("kwok-scale.sh failed (%v):\n%s\n", err, out)
		return nil
	}
	f := &loadFigures{server: "kube+kwok"}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := kwokNodesLine.FindStringSubmatch(sc.Text()); m != nil {
			f.set(fmt.Sprintf("%s nodes Ready, s from start", m[1]), msToS(m[2]))
		}
		if m := kwokReplicasLine.FindStringSubmatch(sc.Text()); m != nil {
			f.set(fmt.Sprintf("%s replicas Available, s after the create", m[1]), msToS(m[2]))
			v, _ := strconv.ParseFloat(m[3], 64)
			f.set("RSS MB when Available", v)
		}
	}
	return f
}

func msToS(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v / 1000
}

// peerScript is one of ../shared/peer's scripts: in DEVPLANE_PEER_SCRIPTS
// when set, else beside the repository, else in the peer directory (""
// when in none).
func peerScript(name string) string {
	dirs := []string{filepath.Join("..", "..", "shared", "peer"), peerDir()}
	if d := os.Getenv("DEVPLANE_PEER_SCRIPTS"); d != "" {
		dirs = []string{d}
	}
	for _, d := range dirs {
		if s, err := filepath.Abs(filepath.Join(d, name)); err == nil && fileExists(s) {
			return s
		}
	}
	return ""
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
