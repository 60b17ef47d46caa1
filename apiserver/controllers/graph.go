package controllers

import (
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// objectNode is what the garbage collector knows of one object: who owns
// it and whether it is being deleted, and how.
type objectNode struct {
	gvr       schema.GroupVersionResource
	kind      string
	namespace string
	name      string
	uid       types.UID
	owners    []metav1.OwnerReference
	// deleting: deletionTimestamp is set.
	deleting bool
	// deletingDependents: foreground deletion, the owner waits for its
	// blocking dependents.
	deletingDependents bool
	// orphaning: the owner's dependents are to lose their reference to it.
	orphaning bool
}

func (n *objectNode) String() string {
	return fmt.Sprintf("%s %s/%s (%s)", n.gvr.GroupResource(), n.namespace, n.name, n.uid)
}

func (n *objectNode) groupKind() schema.GroupKind {
	return schema.GroupKind{Group: n.gvr.Group, Kind: n.kind}
}

func newObjectNode(gvr schema.GroupVersionResource, kind string, obj metav1.Object) *objectNode {
	n := &objectNode{
		gvr:       gvr,
		kind:      kind,
		namespace: obj.GetNamespace(),
		name:      obj.GetName(),
		uid:       obj.GetUID(),
		owners:    slices.Clone(obj.GetOwnerReferences()),
		deleting:  obj.GetDeletionTimestamp() != nil,
	}
	n.deletingDependents = n.deleting && slices.Contains(obj.GetFinalizers(), metav1.FinalizerDeleteDependents)
	n.orphaning = n.deleting && slices.Contains(obj.GetFinalizers(), metav1.FinalizerOrphanDependents)
	return n
}

// dependencyGraph indexes objects by UID and owners by the UIDs of their
// dependents. Owners may be absent from it (not seen yet, or gone): the
// dependents index is keyed by the UIDs the references name.
type dependencyGraph struct {
	mu         sync.RWMutex
	nodes      map[types.UID]*objectNode
	dependents map[types.UID]map[types.UID]struct{}
}

func newDependencyGraph() *dependencyGraph {
	return &dependencyGraph{nodes: map[types.UID]*objectNode{}, dependents: map[types.UID]map[types.UID]struct{}{}}
}

// upsert records n and returns the node it replaced (nil if new).
func (g *dependencyGraph) upsert(n *objectNode) *objectNode {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.nodes[n.uid]
	if old != nil {
		g.unlinkLocked(old)
	}
	g.nodes[n.uid] = n
	for _, ref := range n.owners {
		deps := g.dependents[ref.UID]
		if deps == nil {
			deps = map[types.UID]struct{}{}
			g.dependents[ref.UID] = deps
		}
		deps[n.uid] = struct{}{}
	}
	return old
}

// remove forgets the object with uid and returns it (nil if unknown).
func (g *dependencyGraph) remove(uid types.UID) *objectNode {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.nodes[uid]
	if n == nil {
		return nil
	}
	g.unlinkLocked(n)
	delete(g.nodes, uid)
	return n
}

func (g *dependencyGraph) unlinkLocked(n *objectNode) {
	for _, ref := range n.owners {
		if deps := g.dependents[ref.UID]; deps != nil {
			delete(deps, n.uid)
			if len(deps) == 0 {
				delete(g.dependents, ref.UID)
			}
		}
	}
}

func (g *dependencyGraph) get(uid types.UID) *objectNode {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.nodes[uid]
}

// dependentsOf returns the known objects referring to owner uid.
func (g *dependencyGraph) dependentsOf(owner types.UID) []*objectNode {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*objectNode, 0, len(g.dependents[owner]))
	for uid := range g.dependents[owner] {
		if n := g.nodes[uid]; n != nil {
			out = append(out, n)
		}
	}
	return out
}

// blockingDependents returns the dependents of owner whose reference to it
// has blockOwnerDeletion set: foreground deletion waits for them.
func (g *dependencyGraph) blockingDependents(owner types.UID) []*objectNode {
	var out []*objectNode
	for _, d := range g.dependentsOf(owner) {
		for _, ref := range d.owners {
			if ref.UID == owner && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// nodesOf returns the known objects of one resource (when a resource
// disappears from discovery, its objects leave the graph).
func (g *dependencyGraph) nodesOf(gvr schema.GroupVersionResource) []*objectNode {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*objectNode
	for _, n := range g.nodes {
		if n.gvr == gvr {
			out = append(out, n)
		}
	}
	return out
}

// withOwners returns every known object that has owner references.
func (g *dependencyGraph) withOwners() []*objectNode {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*objectNode
	for _, n := range g.nodes {
		if len(n.owners) > 0 {
			out = append(out, n)
		}
	}
	return out
}
