package sandbox_test

import (
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/devplane/devplane/apiserver/workloads/sandbox"
)

// A pod whose container prints a mounted configMap key and its own name,
// then fails, as the kubelet would run it.
func Example() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	podObj := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default"}}
	container := &v1.Container{
		Command: []string{"sh", "-c", "cat /etc/config/color; echo \"I am $(POD_NAME)\"; sleep 2; exit 3"},
		Env: []v1.EnvVar{{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{
			FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
	}
	env, err := sandbox.Environment(container, sandbox.EnvSources{Pod: podObj})
	if err != nil {
		panic(err)
	}
	command, args := sandbox.ExpandCommand(container, env)

	pod := sandbox.NewPod(sandbox.PodConfig{Hostname: "demo", Clock: clk})
	config := sandbox.ReadOnlyFiles(map[string][]byte{"color": []byte("blue\n")})
	c, err := pod.Start(sandbox.ContainerConfig{
		Argv: sandbox.Argv(nil, nil, command, args),
		Env:  env,
		FS:   pod.NewFS(sandbox.Mount{Path: "/etc/config", Tree: config, ReadOnly: true}),
	})
	if err != nil {
		panic(err)
	}
	for !c.Parked() { // the sleep parks on a timer
		time.Sleep(time.Millisecond)
	}
	clk.Step(2 * time.Second)
	<-c.Done()
	result, _ := c.Result()
	os.Stdout.Write(sandbox.Format(c.Log().Lines(), sandbox.LogOptions{TailLines: -1, Timestamps: true}))
	fmt.Println(result.ExitCode, result.Reason, result.FinishedAt.Sub(result.StartedAt))
	// Output:
	// 2026-01-01T00:00:00Z blue
	// 2026-01-01T00:00:00Z I am demo
	// 3 Error 2s
}
