package sandbox

import (
	"cmp"
	"path"
	"slices"
	"sync"

	"k8s.io/utils/clock"
)

// DefaultDiskLimit bounds what a pod's containers and emptyDirs may write.
const DefaultDiskLimit = 64 << 20

// Clock is the time that sleeps and log timestamps follow: clock.RealClock{}
// in production, a fake one in tests.
type Clock = clock.WithDelayedExecution

// PodConfig describes the parts of a pod's world that its containers share.
type PodConfig struct {
	// Hostname is what `hostname` prints and /etc/hostname holds.
	Hostname string
	// Hosts is /etc/hosts as the kubelet writes it (empty: localhost
	// entries and the hostname without an IP).
	Hosts []byte
	// DiskLimit bounds the bytes written by all the pod's containers and
	// emptyDirs (0: DefaultDiskLimit).
	DiskLimit int64
	// Clock drives sleeps and timestamps (nil: real time).
	Clock Clock
}

// Pod holds what a pod's containers share: its emptyDirs, its disk budget,
// its hostname and clock.
type Pod struct {
	cfg    PodConfig
	budget *Budget

	mu        sync.Mutex
	emptyDirs map[string]*Tree
	lastPID   int
}

// newPID numbers a process that is not a container's command (PID 1):
// exec sessions and the children of shells.
func (p *Pod) newPID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastPID = max(p.lastPID+1, 7)
	return p.lastPID
}

// NewPod returns a pod's sandbox world.
func NewPod(cfg PodConfig) *Pod {
	if cfg.DiskLimit <= 0 {
		cfg.DiskLimit = DefaultDiskLimit
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Hostname == "" {
		cfg.Hostname = "localhost"
	}
	if len(cfg.Hosts) == 0 {
		cfg.Hosts = []byte("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	}
	return &Pod{cfg: cfg, budget: NewBudget(cfg.DiskLimit), emptyDirs: map[string]*Tree{}}
}

// Budget is the pod's disk budget.
func (p *Pod) Budget() *Budget { return p.budget }

// Clock is the pod's clock.
func (p *Pod) Clock() Clock { return p.cfg.Clock }

// EmptyDir returns the pod's emptyDir volume of that name, made empty on
// first use and shared by every container that mounts it.
func (p *Pod) EmptyDir(name string) *Tree {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.emptyDirs[name]
	if t == nil {
		t = NewTree(p.budget, p.cfg.Clock)
		p.emptyDirs[name] = t
	}
	return t
}

// etcPasswd is the image's user database: root and nobody, as busybox has.
const etcPasswd = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n"

// NewFS returns a fresh root filesystem for one container (each run of a
// restarted container gets a new one) with the pod's volumes mounted.
func (p *Pod) NewFS(mounts ...Mount) *FS {
	root := NewTree(p.budget, p.cfg.Clock)
	f := &FS{root: root}
	for _, dir := range []string{"bin", "dev", "etc", "home", "proc", "root", "tmp", "usr/bin", "usr/local/bin", "var/log"} {
		_, _ = root.mkdirAll(dir)
	}
	for name, data := range map[string]string{
		"etc/hostname": p.cfg.Hostname + "\n",
		"etc/hosts":    string(p.cfg.Hosts),
		"etc/passwd":   etcPasswd,
		"etc/group":    "root:x:0:\nnobody:x:65534:\n",
	} {
		dir, _ := root.mkdirAll(path.Dir(name))
		dir.children[path.Base(name)] = &node{mode: 0o644, data: []byte(data), modTime: p.cfg.Clock.Now()}
	}
	f.addDevice("/dev/null", devNull)
	f.addDevice("/dev/zero", devZero)
	f.addDevice("/dev/random", devRandom)
	f.addDevice("/dev/urandom", devRandom)
	for _, m := range mounts {
		if m.Tree == nil {
			continue
		}
		m.Path = path.Clean("/" + m.Path)
		_, _ = root.mkdirAll(cleanRel(m.Path))
		if m.SubPath != "" && !m.ReadOnly && !m.Tree.readOnly {
			// The kubelet creates a missing subPath in the volume.
			m.Tree.mu.Lock()
			_, _ = m.Tree.mkdirAll(cleanRel(m.SubPath))
			m.Tree.mu.Unlock()
		}
		f.mounts = append(f.mounts, m)
	}
	slices.SortStableFunc(f.mounts, func(a, b Mount) int { return cmp.Compare(len(b.Path), len(a.Path)) })
	return f
}

// ReadOnlyRoot makes the filesystem's root read-only, its mounts as they
// are (a container's securityContext.readOnlyRootFilesystem).
func (f *FS) ReadOnlyRoot() *FS {
	f.root.mu.Lock()
	f.root.readOnly = true
	f.root.mu.Unlock()
	return f
}
