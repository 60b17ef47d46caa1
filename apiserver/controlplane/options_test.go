package controlplane_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controlplane"
)

func TestOptionsCompleteFillsEveryDefault(t *testing.T) {
	var o controlplane.Options
	o.Complete()
	if o.Name != "default" {
		t.Errorf("Name %q, want default", o.Name)
	}
	if o.EventTTL != time.Hour {
		t.Errorf("EventTTL %v, want 1h", o.EventTTL)
	}
	if !o.BindAddress.Equal(net.IPv4(127, 0, 0, 1)) || !o.AdvertiseAddress.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("bind %v, advertise %v: want 127.0.0.1 for both", o.BindAddress, o.AdvertiseAddress)
	}
	if o.ServiceClusterIPRange == nil || o.ServiceClusterIPRange.String() != "10.0.0.0/24" {
		t.Errorf("ServiceClusterIPRange %v, want 10.0.0.0/24", o.ServiceClusterIPRange)
	}
	if o.AuthorizationMode != "RBAC" {
		t.Errorf("AuthorizationMode %q, want RBAC", o.AuthorizationMode)
	}
	if o.ServiceAccountIssuer != "https://kubernetes.default.svc" {
		t.Errorf("ServiceAccountIssuer %q, want kube's default", o.ServiceAccountIssuer)
	}
	if o.ClusterCIDR == nil || o.ClusterCIDR.String() != "10.244.0.0/16" || o.NodeCIDRMaskSize != 24 {
		t.Errorf("pod network %v, node blocks /%d: want 10.244.0.0/16 in /24s", o.ClusterCIDR, o.NodeCIDRMaskSize)
	}
	if o.Logger == nil {
		t.Error("no Logger")
	}

	// What is set stays; an advertise address follows the bind address,
	// but for an unspecified one.
	_, cidr, _ := net.ParseCIDR("10.96.0.0/16")
	set := controlplane.Options{Name: "x", EventTTL: time.Minute, BindAddress: net.IPv4(10, 1, 2, 3), ServiceClusterIPRange: cidr,
		AuthorizationMode: "AlwaysAllow", ServiceAccountIssuer: "https://issuer.example"}
	set.Complete()
	if set.Name != "x" || set.EventTTL != time.Minute || set.ServiceClusterIPRange != cidr || set.AuthorizationMode != "AlwaysAllow" ||
		set.ServiceAccountIssuer != "https://issuer.example" || !set.AdvertiseAddress.Equal(net.IPv4(10, 1, 2, 3)) {
		t.Errorf("Complete changed what was set: %+v", set)
	}
	all := controlplane.Options{BindAddress: net.IPv4zero}
	all.Complete()
	if !all.AdvertiseAddress.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("binding all addresses advertises %v, want 127.0.0.1", all.AdvertiseAddress)
	}
}

func TestOptionsValidateRefusesEachBadOption(t *testing.T) {
	dir := t.TempDir()
	notSchedulerConfig, badSchedulerConfig := filepath.Join(dir, "cm.yaml"), filepath.Join(dir, "bad.yaml")
	for path, body := range map[string]string{
		notSchedulerConfig: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		badSchedulerConfig: "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 150\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, tiny, _ := net.ParseCIDR("10.0.0.0/31")
	cidr := func(s string) *net.IPNet { _, n, _ := net.ParseCIDR(s); return n }
	cases := []struct {
		name   string
		change func(*controlplane.Options)
		want   string
	}{
		{"no data dir", func(o *controlplane.Options) { o.DataDir = "" }, "--data-dir: a data directory is required"},
		{"port out of range", func(o *controlplane.Options) { o.Port = 70000 }, "--port 70000 is out of range: use 0-65535"},
		{"service range too small", func(o *controlplane.Options) { o.ServiceClusterIPRange = tiny },
			`--service-cluster-ip-range "10.0.0.0/31" is too small: it needs room for at least two addresses`},
		{"unknown authorization mode", func(o *controlplane.Options) { o.AuthorizationMode = "ABAC" }, `--authorization-mode "ABAC": use RBAC or AlwaysAllow`},
		{"issuer not a URL", func(o *controlplane.Options) { o.ServiceAccountIssuer = "not a url:" },
			`--service-account-issuer "not a url:": use a URL such as https://kubernetes.default.svc`},
		{"negative event TTL", func(o *controlplane.Options) { o.EventTTL = -time.Second }, "--event-ttl -1s: use a positive duration such as 1h"},
		{"negative nodes", func(o *controlplane.Options) { o.Nodes = -1 }, "--nodes -1 is out of range: use 0-5000"},
		{"nodes beyond the pod network", func(o *controlplane.Options) { o.Nodes = 300 },
			"--cluster-cidr 10.244.0.0/16 holds 256 blocks of /24, fewer than --nodes 300: use a /15 or larger --cluster-cidr, or a larger --node-cidr-mask-size"},
		{"node blocks too small for the pods", func(o *controlplane.Options) { o.Nodes, o.NodeCIDRMaskSize = 1, 26 },
			"--node-cidr-mask-size 26 leaves 61 addresses for each node's 110 pods (--node-capacity): use a mask size of at most 25"},
		{"node blocks larger than the pod network", func(o *controlplane.Options) { o.Nodes, o.NodeCIDRMaskSize = 1, 12 },
			"--node-cidr-mask-size 12 does not fit in --cluster-cidr 10.244.0.0/16: use 16-30"},
		{"IPv6 pod network", func(o *controlplane.Options) { o.Nodes, o.ClusterCIDR = 1, cidr("fd00::/48") },
			"--cluster-cidr fd00::/48: simulated nodes need an IPv4 pod network such as 10.244.0.0/16"},
		{"pod network over the services'", func(o *controlplane.Options) { o.Nodes, o.ClusterCIDR = 1, cidr("10.0.0.0/8") },
			"--cluster-cidr 10.0.0.0/8 overlaps --service-cluster-ip-range 10.0.0.0/24"},
		{"scheduler config that is not one", func(o *controlplane.Options) { o.Nodes, o.SchedulerConfig = 1, notSchedulerConfig },
			"cm.yaml holds a ConfigMap: want a KubeSchedulerConfiguration"},
		{"scheduler config kube-scheduler refuses", func(o *controlplane.Options) { o.Nodes, o.SchedulerConfig = 1, badSchedulerConfig },
			"percentageOfNodesToScore: Invalid value: 150"},
	}
	valid := func() controlplane.Options {
		o := controlplane.Options{DataDir: t.TempDir()}
		o.Complete()
		return o
	}
	good := valid()
	if err := good.Validate(); err != nil {
		t.Fatalf("completed options with a data dir: %v", err)
	}
	all, atOnce := valid(), 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := valid()
			c.change(&o)
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("Validate() = %v, want one error with %q", err, c.want)
			}
		})
		needsNodes := strings.HasPrefix(c.want, "--node-cidr") || strings.HasPrefix(c.want, "--cluster-cidr") || strings.Contains(c.name, "scheduler config")
		if !needsNodes { // one case makes the nodes negative
			c.change(&all)
			atOnce++
		}
	}
	err := all.Validate()
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != atOnce {
		t.Errorf("every bad option at once: %v, want %d errors", err, atOnce)
	}
}
