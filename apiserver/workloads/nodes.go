package workloads

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcertificatesv1 "k8s.io/client-go/kubernetes/typed/certificates/v1"
	typedcoordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/devplane/devplane/apiserver/version"
)

// The kubelet's cadences: a Lease renewed every 10s that lasts 40s, and
// the node's status reported at least every 5 minutes.
const (
	NodeLeaseNamespace      = "kube-node-lease"
	nodeLeaseDuration       = 40
	nodeLeaseRenewInterval  = 10 * time.Second
	nodeStatusReportPeriod  = 5 * time.Minute
	kubeletPort             = 10250
	simulatedContainerProto = "devplane"
)

// simNode is one simulated node: its name, addresses, pod CIDR and the
// client that acts as its kubelet.
type simNode struct {
	name     string
	index    int // 1-based
	hostIP   net.IP
	podCIDR  *net.IPNet
	client   nodeClient
	ips      *ipPool
	ports    hostPorts // held by the pods this node's kubelet admitted
	recorder record.EventRecorder

	mu    sync.Mutex
	uid   string // the Node's UID, for the Lease's owner reference
	node  *corev1.Node
	lease *coordinationv1.Lease // as last written
}

// nodeClient is what a simulated kubelet calls: three typed clients over
// one HTTP client, not the ~50 of a Clientset (17 MB for 1,000 nodes).
type nodeClient struct {
	core         typedcorev1.CoreV1Interface
	coordination typedcoordinationv1.CoordinationV1Interface
	certificates typedcertificatesv1.CertificatesV1Interface
}

func newNodeClient(cfg *rest.Config) (nodeClient, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nodeClient{}, err
	}
	core, err := typedcorev1.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nodeClient{}, err
	}
	coordination, err := typedcoordinationv1.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nodeClient{}, err
	}
	certificates, err := typedcertificatesv1.NewForConfigAndClient(cfg, hc)
	return nodeClient{core: core, coordination: coordination, certificates: certificates}, err
}

func (c nodeClient) CoreV1() typedcorev1.CoreV1Interface { return c.core }
func (c nodeClient) CoordinationV1() typedcoordinationv1.CoordinationV1Interface {
	return c.coordination
}
func (c nodeClient) CertificatesV1() typedcertificatesv1.CertificatesV1Interface {
	return c.certificates
}

// NodeName is the name of the i-th (1-based) simulated node.
func NodeName(i int) string { return "node-" + strconv.Itoa(i) }

// nodeCIDRs splits the cluster CIDR into one block of the mask size per
// node, as kube-controller-manager's node IPAM does. Its errors name the
// flags to change.
func nodeCIDRs(nodes int, maxPods int64, cluster *net.IPNet, maskSize int) ([]*net.IPNet, error) {
	if nodes < 1 {
		return nil, fmt.Errorf("need at least one node")
	}
	if cluster == nil || cluster.IP.To4() == nil {
		return nil, fmt.Errorf("--cluster-cidr %v: simulated nodes need an IPv4 pod network such as %s", cluster, DefaultClusterCIDR)
	}
	clusterOnes, _ := cluster.Mask.Size()
	if maskSize < clusterOnes || maskSize > 32 {
		return nil, fmt.Errorf("--node-cidr-mask-size %d does not fit in --cluster-cidr %s: use %d-30", maskSize, cluster, clusterOnes)
	}
	hostBits := 32 - maskSize
	// A node's block holds its pods, the network and broadcast addresses
	// and the gateway.
	if addresses := uint64(1) << hostBits; addresses < uint64(maxPods)+3 {
		largest := 32 - bits.Len64(uint64(maxPods)+2)
		return nil, fmt.Errorf("--node-cidr-mask-size %d leaves %d addresses for each node's %d pods (--node-capacity): use a mask size of at most %d",
			maskSize, max(int64(addresses)-3, 0), maxPods, largest)
	}
	if blocks := uint64(1) << (maskSize - clusterOnes); uint64(nodes) > blocks {
		need := maskSize - bits.Len64(uint64(nodes)-1)
		return nil, fmt.Errorf("--cluster-cidr %s holds %d blocks of /%d, fewer than --nodes %d: use a /%d or larger --cluster-cidr, or a larger --node-cidr-mask-size",
			cluster, blocks, maskSize, nodes, need)
	}
	base := binary.BigEndian.Uint32(cluster.IP.To4())
	out := make([]*net.IPNet, nodes)
	for i := range out {
		ip := make(net.IP, 4)
		binary.BigEndian.PutUint32(ip, base+uint32(i)<<hostBits)
		out[i] = &net.IPNet{IP: ip, Mask: net.CIDRMask(maskSize, 32)}
	}
	return out, nil
}

// hostIPOf is the i-th node's InternalIP, on a network of its own as a
// container runtime's nodes (kind) are.
func hostIPOf(i int) net.IP { return net.IPv4(172, 18, byte(i/250), byte(2+i%250)).To4() }

// zoneOf spreads nodes over three zones when there are several.
func zoneOf(i int) string { return "zone-" + string(rune('a'+(i-1)%3)) }

// desiredNode is the Node a kubelet registers: kube's well-known labels,
// the pod CIDR, addresses, capacity and node info.
func (m *Machinery) desiredNode(n *simNode) *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname:           n.name,
		corev1.LabelOSStable:           "linux",
		corev1.LabelArchStable:         runtime.GOARCH,
		"beta.kubernetes.io/os":        "linux",
		"beta.kubernetes.io/arch":      runtime.GOARCH,
		corev1.LabelInstanceTypeStable: "devplane-simulated",
	}
	if m.opts.Nodes > 1 {
		labels[corev1.LabelTopologyZone] = zoneOf(n.index)
		labels[corev1.LabelTopologyRegion] = "devplane"
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        n.name,
			Labels:      labels,
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
		},
		Spec: corev1.NodeSpec{PodCIDR: n.podCIDR.String(), PodCIDRs: []string{n.podCIDR.String()}},
	}
}

func (m *Machinery) nodeStatus(n *simNode, now metav1.Time, old *corev1.NodeStatus) corev1.NodeStatus {
	capacity := m.capacity()
	sum := sha256.Sum256([]byte(m.opts.ClusterName + "/" + n.name))
	id := fmt.Sprintf("%x", sum[:16])
	st := corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: n.hostIP.String()},
			{Type: corev1.NodeHostName, Address: n.name},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: kubeletPort}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:               id,
			SystemUUID:              fmt.Sprintf("%s-%s-%s-%s-%s", id[0:8], id[8:12], id[12:16], id[16:20], id[20:32]),
			BootID:                  m.bootID,
			KernelVersion:           kernelVersion(),
			OSImage:                 "devplane simulated node",
			ContainerRuntimeVersion: simulatedContainerProto + "://" + version.Devplane,
			KubeletVersion:          kubeletVersion(),
			OperatingSystem:         "linux",
			Architecture:            runtime.GOARCH,
		},
	}
	type cond struct {
		t              corev1.NodeConditionType
		status         corev1.ConditionStatus
		reason, messag string
	}
	for _, c := range []cond{
		{corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
		{corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"},
	} {
		transition := now
		if old != nil {
			for _, o := range old.Conditions {
				if o.Type == c.t && o.Status == c.status {
					transition = o.LastTransitionTime
				}
			}
		}
		st.Conditions = append(st.Conditions, corev1.NodeCondition{Type: c.t, Status: c.status, Reason: c.reason, Message: c.messag,
			LastHeartbeatTime: now, LastTransitionTime: transition})
	}
	return st
}

// capacity is what each node offers: kube's kubelet defaults under the
// --node-capacity overrides.
func (m *Machinery) capacity() corev1.ResourceList {
	out := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("16Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		"hugepages-1Gi":                 resource.MustParse("0"),
		"hugepages-2Mi":                 resource.MustParse("0"),
	}
	for k, v := range m.opts.NodeCapacity {
		out[k] = v
	}
	return out
}

func kubeletVersion() string { return fmt.Sprintf("v%s.%s.0-devplane", version.Major, version.Minor) }

// registerNode creates the node, or takes over the one a previous run
// registered (its status refreshed), as a restarted kubelet does.
func (m *Machinery) registerNode(ctx context.Context, n *simNode) error {
	want := m.desiredNode(n)
	now := metav1.Now()
	nodes := n.client.CoreV1().Nodes()
	node, err := nodes.Get(ctx, n.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		want.Status = m.nodeStatus(n, now, nil)
		if node, err = nodes.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("registering node %s: %w", n.name, err)
		}
		if len(node.Status.Conditions) == 0 { // the create dropped the status
			node.Status = m.nodeStatus(n, now, nil)
			if node, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
	case err != nil:
		return err
	default:
		node = node.DeepCopy()
		for k, v := range want.Labels {
			node.Labels = setDefault(node.Labels, k, v)
		}
		node.Spec.PodCIDR, node.Spec.PodCIDRs = want.Spec.PodCIDR, want.Spec.PodCIDRs
		if node, err = nodes.Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			return err
		}
		node.Status = m.nodeStatus(n, now, &node.Status)
		if node, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.uid, n.node = string(node.UID), node
	n.mu.Unlock()
	return nil
}

func setDefault(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// reportStatus posts the node's status again (new heartbeat times).
func (m *Machinery) reportStatus(ctx context.Context, n *simNode) error {
	node, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return m.registerNode(ctx, n) // deleted by someone: register again, as a kubelet does
	}
	if err != nil {
		return err
	}
	node = node.DeepCopy()
	node.Status = m.nodeStatus(n, metav1.Now(), &node.Status)
	_, err = n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

// renewLease creates or renews the node's Lease in kube-node-lease, owned
// by the Node so it goes with it. As the kubelet's lease controller, it
// updates the Lease its last write returned, and reads it again only when
// that fails (someone else wrote it, or deleted it).
func (m *Machinery) renewLease(ctx context.Context, n *simNode) error {
	leases := n.client.CoordinationV1().Leases(NodeLeaseNamespace)
	now := metav1.NewMicroTime(time.Now())
	n.mu.Lock()
	last := n.lease
	n.mu.Unlock()
	if last != nil {
		// A shallow copy: only renewTime changes, and last is never written
		// to. Put directly, as the typed Update would with no options, less
		// its reflection over the empty UpdateOptions (a thousand nodes
		// renew a hundred Leases a second).
		lease := *last
		lease.Spec.RenewTime = &now
		updated := &coordinationv1.Lease{}
		err := n.client.CoordinationV1().RESTClient().Put().Namespace(NodeLeaseNamespace).Resource("leases").Name(lease.Name).
			Body(&lease).Do(ctx).Into(updated)
		if err == nil {
			n.setLease(updated)
			return nil
		}
		n.setLease(nil)
	}
	lease, err := leases.Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		n.mu.Lock()
		uid := n.uid
		n.mu.Unlock()
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: NodeLeaseNamespace,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.name, UID: types.UID(uid)}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(n.name), LeaseDurationSeconds: ptr.To[int32](nodeLeaseDuration), RenewTime: &now},
		}
		created, err := leases.Create(ctx, lease, metav1.CreateOptions{})
		n.setLease(created)
		return err
	}
	if err != nil {
		return err
	}
	lease = lease.DeepCopy()
	lease.Spec.HolderIdentity = ptr.To(n.name)
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](nodeLeaseDuration)
	lease.Spec.RenewTime = &now
	updated, err := leases.Update(ctx, lease, metav1.UpdateOptions{})
	n.setLease(updated)
	return err
}

// setLease keeps the Lease last written (nil: read it again next time).
func (n *simNode) setLease(l *coordinationv1.Lease) {
	if l != nil && l.Name == "" {
		l = nil // a failed write's empty object
	}
	n.mu.Lock()
	n.lease = l
	n.mu.Unlock()
}

// heartbeats keeps every node alive until ctx ends, from one goroutine
// however many nodes there are: each node's Lease is renewed every 10s and
// its status posted every 5 minutes, the nodes' turns spread evenly over
// the interval (1,000 renewals at once would hold the API up every 10s).
// The renewals due in one tick run side by side, so a slow API delays a
// tick rather than the nodes after it.
func (m *Machinery) heartbeats(ctx context.Context, nodes []*simNode) {
	tick := max(nodeLeaseRenewInterval/time.Duration(len(nodes)), heartbeatTick)
	perTick := min(int((time.Duration(len(nodes))*tick+nodeLeaseRenewInterval-1)/nodeLeaseRenewInterval), len(nodes))
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	lastStatus := make([]time.Time, len(nodes))
	started := time.Now()
	for i := range lastStatus {
		lastStatus[i] = started // registerNode has just posted it
	}
	// The same workers every round: a goroutine per renewal grew a new
	// stack for each (the client's request path is deep).
	type beat struct {
		node       *simNode
		postStatus bool
		round      *sync.WaitGroup
	}
	beats := make(chan beat)
	var workers sync.WaitGroup
	defer workers.Wait()
	defer close(beats)
	for range perTick {
		workers.Go(func() {
			for b := range beats {
				m.heartbeat(ctx, b.node, b.postStatus)
				b.round.Done()
			}
		})
	}
	next := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		var round sync.WaitGroup
		for range perTick {
			i := next
			next = (next + 1) % len(nodes)
			now := time.Now()
			postStatus := now.Sub(lastStatus[i]) >= nodeStatusReportPeriod
			if postStatus {
				lastStatus[i] = now
			}
			round.Add(1)
			beats <- beat{node: nodes[i], postStatus: postStatus, round: &round}
		}
		round.Wait()
	}
}

// heartbeat renews n's Lease and, when due, posts its status.
func (m *Machinery) heartbeat(ctx context.Context, n *simNode, postStatus bool) {
	if err := m.renewLease(ctx, n); err != nil && ctx.Err() == nil {
		m.logger.Warn("renewing node lease", "node", n.name, "err", err)
	}
	if !postStatus {
		return
	}
	if err := m.reportStatus(ctx, n); err != nil && ctx.Err() == nil {
		m.logger.Warn("reporting node status", "node", n.name, "err", err)
	}
}

// heartbeatTick is the shortest wait between two rounds of renewals: with
// many nodes, each round renews several at once, and etcd commits them
// together (one fsync for a round rather than one per Lease).
const heartbeatTick = time.Second

// ipPool hands out the pod IPs of one node's pod CIDR: .0 is the network,
// .1 the node's bridge, the last the broadcast address.
type ipPool struct {
	mu    sync.Mutex
	base  uint32
	size  uint32
	used  map[uint32]string // offset → pod key
	byKey map[string]uint32
	next  uint32
}

func newIPPool(cidr *net.IPNet) *ipPool {
	ones, bits := cidr.Mask.Size()
	return &ipPool{base: binary.BigEndian.Uint32(cidr.IP.To4()), size: 1 << (bits - ones), used: map[uint32]string{}, byKey: map[string]uint32{}, next: 2}
}

// allocate gives key an address (the same one again if it has one).
func (p *ipPool) allocate(key string) (net.IP, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if off, ok := p.byKey[key]; ok {
		return p.ip(off), nil
	}
	for range p.size {
		off := p.next
		p.next++
		if p.next >= p.size-1 {
			p.next = 2
		}
		if off < 2 || off >= p.size-1 {
			continue
		}
		if _, taken := p.used[off]; !taken {
			p.used[off], p.byKey[key] = key, off
			return p.ip(off), nil
		}
	}
	return nil, fmt.Errorf("no pod IP left on this node")
}

// reserve records an address a pod already has (after a restart).
func (p *ipPool) reserve(ip net.IP, key string) {
	ip4 := ip.To4()
	if ip4 == nil {
		return
	}
	off := binary.BigEndian.Uint32(ip4) - p.base
	if off >= p.size {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.byKey[key]; ok {
		return
	}
	p.used[off], p.byKey[key] = key, off
}

func (p *ipPool) release(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if off, ok := p.byKey[key]; ok {
		delete(p.byKey, key)
		if p.used[off] == key {
			delete(p.used, off)
		}
	}
}

func (p *ipPool) ip(off uint32) net.IP {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, p.base+off)
	return ip
}

// kernelVersion is this machine's, as a node reports its own.
func kernelVersion() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
