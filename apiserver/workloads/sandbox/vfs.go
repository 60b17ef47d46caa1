package sandbox

import (
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/utils/clock"
)

// nodeOverhead is what each file or directory costs a budget besides its
// contents, so that a loop creating empty files also reaches the limit.
const nodeOverhead = 256

// Budget bounds the bytes that a set of writable trees may hold (a pod's
// container filesystems and emptyDirs share one), as a disk would.
type Budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Used reports the bytes held.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func (b *Budget) reserve(n int64) bool {
	if b == nil || n <= 0 {
		b.release(-n)
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

func (b *Budget) release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.used = max(0, b.used-n)
	b.mu.Unlock()
}

// device is what a special file does when read or written.
type device uint8

const (
	notDevice device = iota
	devNull
	devZero
	devRandom
)

type node struct {
	mode     fs.FileMode
	modTime  time.Time
	data     []byte
	children map[string]*node
	dev      device
}

func (n *node) isDir() bool { return n.mode.IsDir() }

func newDir(now time.Time) *node {
	return &node{mode: fs.ModeDir | 0o755, modTime: now, children: map[string]*node{}}
}

// Tree is an in-memory directory tree: a container's root filesystem, an
// emptyDir, a node's hostPath tree, or the read-only files of a
// configMap/secret/downwardAPI/projected volume.
type Tree struct {
	mu       sync.Mutex
	root     *node
	budget   *Budget
	readOnly bool
	clock    clock.PassiveClock
}

// NewTree returns an empty writable tree whose contents count against budget
// (nil: unbounded, for trees whose size the caller bounds).
func NewTree(budget *Budget, clk clock.PassiveClock) *Tree {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Tree{root: newDir(clk.Now()), budget: budget, clock: clk}
}

// ReadOnlyFiles returns a read-only tree holding files (relative path →
// contents, mode 0644), as a configMap, secret, downwardAPI or projected
// volume presents its items.
func ReadOnlyFiles(files map[string][]byte) *Tree {
	t := NewTree(nil, nil)
	t.readOnly = true
	t.SetFiles(files)
	return t
}

// SetFiles replaces a read-only tree's files, as the kubelet refreshes a
// mounted configMap or secret that changed.
func (t *Tree) SetFiles(files map[string][]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.root = newDir(t.clock.Now())
	for name, data := range files {
		rel := cleanRel(name)
		if rel == "" {
			continue
		}
		dir, err := t.mkdirAll(path.Dir(rel))
		if err != nil {
			continue
		}
		dir.children[path.Base(rel)] = &node{mode: 0o644, data: slices.Clone(data), modTime: t.clock.Now()}
	}
}

// cleanRel turns any path into a tree-relative one ("" is the tree's root);
// ".." cannot climb above the root.
func cleanRel(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

func pathErr(op, p string, err error) error { return &fs.PathError{Op: op, Path: p, Err: err} }

// walk finds the node at rel; it returns the parent directory and the last
// name too, so that callers can create or remove the entry.
func (t *Tree) walk(rel string) (parent *node, name string, n *node, err error) {
	if rel == "" {
		return nil, "", t.root, nil
	}
	cur := t.root
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		if !cur.isDir() {
			return nil, "", nil, syscall.ENOTDIR
		}
		next := cur.children[part]
		if i == len(parts)-1 {
			return cur, part, next, nil
		}
		if next == nil {
			return nil, "", nil, syscall.ENOENT
		}
		cur = next
	}
	return nil, "", nil, syscall.ENOENT
}

func (t *Tree) mkdirAll(rel string) (*node, error) {
	cur := t.root
	if rel == "" || rel == "." {
		return cur, nil
	}
	for _, part := range strings.Split(rel, "/") {
		if !cur.isDir() {
			return nil, syscall.ENOTDIR
		}
		next := cur.children[part]
		if next == nil {
			if !t.budget.reserve(nodeOverhead) {
				return nil, syscall.ENOSPC
			}
			next = newDir(t.clock.Now())
			cur.children[part] = next
		}
		cur = next
	}
	if !cur.isDir() {
		return nil, syscall.ENOTDIR
	}
	return cur, nil
}

// size is what a subtree costs its budget.
func (n *node) size() int64 {
	total := int64(nodeOverhead + len(n.data))
	for _, c := range n.children {
		total += c.size()
	}
	return total
}

func (t *Tree) writable() error {
	if t.readOnly {
		return syscall.EROFS
	}
	return nil
}

// fileInfo describes a node at the moment it was looked at.
type fileInfo struct {
	name    string
	size    int64
	mode    fs.FileMode
	modTime time.Time
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return i.mode }
func (i fileInfo) ModTime() time.Time { return i.modTime }
func (i fileInfo) IsDir() bool        { return i.mode.IsDir() }

// Sys is what the interpreter's own code expects of the platform's stat
// (sysStat, per platform).
func (i fileInfo) Sys() any { return sysStat() }

func infoOf(name string, n *node) fileInfo {
	return fileInfo{name: name, size: int64(len(n.data)), mode: n.mode, modTime: n.modTime}
}

// existing finds the node at rel, which must exist. t.mu is held.
func (t *Tree) existing(rel string) (*node, error) {
	_, _, n, err := t.walk(rel)
	if err == nil && n == nil {
		err = syscall.ENOENT
	}
	return n, err
}

func (t *Tree) stat(rel string) (fileInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, err := t.existing(rel)
	if err != nil {
		return fileInfo{}, err
	}
	name := path.Base("/" + rel)
	return infoOf(name, n), nil
}

func (t *Tree) readDir(rel string) ([]fs.DirEntry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, err := t.existing(rel)
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		return nil, syscall.ENOTDIR
	}
	entries := make([]fs.DirEntry, 0, len(n.children))
	for name, c := range n.children {
		entries = append(entries, fs.FileInfoToDirEntry(infoOf(name, c)))
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

func (t *Tree) mkdir(rel string, parents bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return err
	}
	if parents {
		_, err := t.mkdirAll(rel)
		return err
	}
	parent, name, n, err := t.walk(rel)
	if err != nil {
		return err
	}
	if n != nil || parent == nil {
		return syscall.EEXIST
	}
	if !t.budget.reserve(nodeOverhead) {
		return syscall.ENOSPC
	}
	parent.children[name] = newDir(t.clock.Now())
	return nil
}

func (t *Tree) remove(rel string, recursive bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return err
	}
	parent, name, n, err := t.walk(rel)
	if err != nil {
		return err
	}
	if n == nil {
		return syscall.ENOENT
	}
	if parent == nil {
		return syscall.EBUSY
	}
	if n.isDir() && len(n.children) > 0 && !recursive {
		return syscall.ENOTEMPTY
	}
	delete(parent.children, name)
	t.budget.release(n.size())
	return nil
}

// open opens or creates a file as os.OpenFile would.
func (t *Tree) open(rel string, flag int, perm fs.FileMode) (*node, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	writing := flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) != 0
	parent, name, n, err := t.walk(rel)
	if err != nil {
		return nil, err
	}
	if n == nil {
		if flag&os.O_CREATE == 0 {
			return nil, syscall.ENOENT
		}
		if err := t.writable(); err != nil {
			return nil, err
		}
		if !t.budget.reserve(nodeOverhead) {
			return nil, syscall.ENOSPC
		}
		n = &node{mode: perm.Perm(), modTime: t.clock.Now()}
		parent.children[name] = n
		return n, nil
	}
	if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		return nil, syscall.EEXIST
	}
	if n.isDir() {
		if writing {
			return nil, syscall.EISDIR
		}
		return n, nil
	}
	if writing && n.dev == notDevice {
		if err := t.writable(); err != nil {
			return nil, err
		}
	}
	if flag&os.O_TRUNC != 0 && n.dev == notDevice {
		t.budget.release(int64(len(n.data)))
		n.data = nil
		n.modTime = t.clock.Now()
	}
	return n, nil
}

// readAt copies the file's bytes from off on.
func (t *Tree) readAt(n *node, p []byte, off int64) (int, error) {
	switch n.dev {
	case devNull:
		return 0, io.EOF
	case devZero:
		clear(p)
		return len(p), nil
	case devRandom:
		return rand.Read(p)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if n.isDir() {
		return 0, syscall.EISDIR
	}
	if off >= int64(len(n.data)) {
		return 0, io.EOF
	}
	return copy(p, n.data[off:]), nil
}

// writeAt writes p at off (at the end when off < 0), within the budget.
func (t *Tree) writeAt(n *node, p []byte, off int64) (int64, error) {
	if n.dev != notDevice {
		return 0, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if off < 0 {
		off = int64(len(n.data))
	}
	end := off + int64(len(p))
	if grow := end - int64(len(n.data)); grow > 0 {
		if !t.budget.reserve(grow) {
			return off, syscall.ENOSPC
		}
		n.data = slices.Grow(n.data, int(grow))[:end]
	}
	copy(n.data[off:], p)
	n.modTime = t.clock.Now()
	return end, nil
}

// snapshot returns a copy of a file's contents.
func (t *Tree) snapshot(n *node) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(n.data)
}

// fileHandle is an open file of a tree, as the interpreter and the builtins
// read and write it.
type fileHandle struct {
	tree     *Tree
	node     *node
	name     string
	off      int64
	append   bool
	canRead  bool
	canWrite bool
}

func (h *fileHandle) Read(p []byte) (int, error) {
	if !h.canRead {
		return 0, pathErr("read", h.name, syscall.EBADF)
	}
	n, err := h.tree.readAt(h.node, p, h.off)
	h.off += int64(n)
	if err != nil && err != io.EOF {
		err = pathErr("read", h.name, err)
	}
	return n, err
}

func (h *fileHandle) Write(p []byte) (int, error) {
	if !h.canWrite {
		return 0, pathErr("write", h.name, syscall.EBADF)
	}
	off := h.off
	if h.append {
		off = -1
	}
	end, err := h.tree.writeAt(h.node, p, off)
	if err != nil {
		return 0, pathErr("write", h.name, err)
	}
	h.off = end
	return len(p), nil
}

func (h *fileHandle) Close() error { return nil }

// FS is one container's view: its own root tree with the pod's volumes
// mounted on it.
type FS struct {
	root   *Tree
	mounts []Mount // longest path first
	// uid and gid are who the container's processes run as (its
	// securityContext's runAsUser and runAsGroup; root by default), as
	// id and whoami report them.
	uid, gid int64
}

// Mount places a tree at a path of a container's filesystem, as a
// volumeMount does.
type Mount struct {
	Path     string
	Tree     *Tree
	SubPath  string
	ReadOnly bool
}

// resolve finds the tree holding an absolute path and the path within it.
func (f *FS) resolve(p string) (tree *Tree, rel string, readOnly bool) {
	p = path.Clean("/" + p)
	for _, m := range f.mounts {
		if p == m.Path || strings.HasPrefix(p, m.Path+"/") {
			rest := strings.TrimPrefix(p, m.Path)
			return m.Tree, cleanRel(m.SubPath + "/" + rest), m.ReadOnly || m.Tree.readOnly
		}
	}
	return f.root, cleanRel(p), f.root.readOnly
}

// Stat describes the file or directory at an absolute path.
func (f *FS) Stat(p string) (fs.FileInfo, error) {
	t, rel, _ := f.resolve(p)
	info, err := t.stat(rel)
	if err != nil {
		return nil, pathErr("stat", p, err)
	}
	return info, nil
}

// ReadDir lists a directory, sorted by name.
func (f *FS) ReadDir(p string) ([]fs.DirEntry, error) {
	t, rel, _ := f.resolve(p)
	entries, err := t.readDir(rel)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return entries, nil
}

// OpenFile opens a file as os.OpenFile does, within the sandbox.
func (f *FS) OpenFile(p string, flag int, perm fs.FileMode) (io.ReadWriteCloser, error) {
	t, rel, ro := f.resolve(p)
	writing := flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) != 0
	if ro && writing {
		// Only devices (/dev/null on a read-only root) take writes there.
		if info, err := t.stat(rel); err != nil || info.mode&fs.ModeDevice == 0 {
			return nil, pathErr("open", p, syscall.EROFS)
		}
	}
	n, err := t.open(rel, flag, perm)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return &fileHandle{
		tree: t, node: n, name: p,
		append:   flag&os.O_APPEND != 0,
		canRead:  flag&(os.O_WRONLY) == 0,
		canWrite: flag&(os.O_WRONLY|os.O_RDWR) != 0,
	}, nil
}

// ReadFile returns a file's contents.
func (f *FS) ReadFile(p string) ([]byte, error) {
	t, rel, _ := f.resolve(p)
	n, err := t.open(rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	if n.isDir() {
		return nil, pathErr("read", p, syscall.EISDIR)
	}
	if n.dev != notDevice {
		return nil, nil
	}
	return t.snapshot(n), nil
}

// WriteFile creates or replaces a file.
func (f *FS) WriteFile(p string, data []byte, perm fs.FileMode) error {
	w, err := f.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// Mkdir makes a directory (and its parents with parents set).
func (f *FS) Mkdir(p string, parents bool) error {
	return f.write("mkdir", p, func(t *Tree, rel string) error { return t.mkdir(rel, parents) })
}

// Remove removes a file or directory (with its contents if recursive).
func (f *FS) Remove(p string, recursive bool) error {
	clean := path.Clean("/" + p)
	for _, m := range f.mounts {
		if m.Path == clean || strings.HasPrefix(m.Path, clean+"/") {
			return pathErr("remove", p, syscall.EBUSY)
		}
	}
	return f.write("remove", p, func(t *Tree, rel string) error { return t.remove(rel, recursive) })
}

// write runs a change of the tree holding p, unless it is mounted
// read-only.
func (f *FS) write(op, p string, change func(t *Tree, rel string) error) error {
	t, rel, ro := f.resolve(p)
	if ro {
		return pathErr(op, p, syscall.EROFS)
	}
	if err := change(t, rel); err != nil {
		return pathErr(op, p, err)
	}
	return nil
}

// Release gives the container's own files' bytes back to the pod's budget,
// when the container is gone (a restarted container starts afresh).
func (f *FS) Release() {
	f.root.mu.Lock()
	defer f.root.mu.Unlock()
	f.root.budget.release(f.root.root.size() - nodeOverhead)
	f.root.root = newDir(f.root.clock.Now())
}

func (f *FS) addDevice(p string, dev device) {
	dir, _ := f.root.mkdirAll(cleanRel(path.Dir(p)))
	dir.children[path.Base(p)] = &node{mode: fs.ModeDevice | fs.ModeCharDevice | 0o666, dev: dev}
}

// change applies edit to the existing node at p, under its tree's lock,
// unless the mount is read-only (devices are not files of the mount).
func (f *FS) change(op, p string, edit func(t *Tree, n *node)) error {
	t, rel, ro := f.resolve(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	n, err := t.existing(rel)
	switch {
	case err != nil:
	case ro && n.dev == notDevice:
		err = syscall.EROFS
	default:
		edit(t, n)
		return nil
	}
	return pathErr(op, p, err)
}

// Touch sets a file's modification time to now, creating it unless
// create is false.
func (f *FS) Touch(p string, create bool) error {
	err := f.change("touch", p, func(t *Tree, n *node) { n.modTime = t.clock.Now() })
	if !create || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	w, err := f.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	return w.Close()
}

// Chmod sets a file's permission bits.
func (f *FS) Chmod(p string, perm fs.FileMode) error {
	return f.change("chmod", p, func(_ *Tree, n *node) { n.mode = n.mode&^fs.ModePerm | perm.Perm() })
}
