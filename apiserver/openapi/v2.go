package openapi

// /openapi/v2 is one document describing everything; with hundreds of CRDs
// it is tens of megabytes, and building it as one spec.Swagger (then its
// JSON, then protobuf through gnostic from that JSON) held several copies
// of it at once. Instead it is assembled from fragments kept as bytes:
//
//   - the base: the paths of resources described by generated definitions;
//   - one per custom resource, with its paths and its own definitions,
//     reused across Updates while the resource (and so its Revision) is
//     unchanged;
//   - the shared definitions: the generated ones all the others refer to
//     (ObjectMeta, Status...), each once;
//   - one per external (aggregated) document.
//
// A fragment is built on the first request that needs it, encoded to JSON
// members ("name":{...}) and its object form dropped. The served document
// is the fragments' members in sequence, each name once, read straight from
// the fragments' bytes. Protobuf is assembled the same way: an embedded
// message given several times merges, so each member's encoding as a
// one-member Document can follow the header's, and gnostic only ever
// converts one fragment at a time.

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/devplane/devplane/apiserver/request"
	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const (
	pathsSection = iota
	definitionsSection
)

type span struct{ start, end int }

// v2Section is one fragment's members of the paths or definitions object,
// in order, as spans of the fragment's bytes.
type v2Section struct {
	names []string
	json  []span
	proto []span // set once the fragment's protobuf is built
}

// v2Parts is a fragment in object form, only while it is being encoded.
type v2Parts struct {
	paths       map[string]spec.PathItem
	routes      map[string]route // paths written from their route (appendV2PathItem)
	definitions map[string]*spec.Schema
	encoded     map[string][]byte // definitions supplied as JSON (SuppliedDefinition.V2JSON)
	scratch     []*[]byte         // the buffers encoded is in, back to scratchBuffers once encoded
	refs        []string          // definitions referred to but left to the shared fragment
	supplied    bool              // whether any definition came from SuppliedDefinitions
}

// v2Fragment is a piece of /openapi/v2 kept as bytes.
type v2Fragment struct {
	key    string        // what it is built from, for reuse across Updates; "" when not reusable
	source *spec.Swagger // external fragments: the document it was built from
	build  func() (v2Parts, error)

	// derived: the fragment's bytes follow from key (and the binary), so
	// its hash is taken of those rather than of its tens of kilobytes.
	derived bool

	once     sync.Once
	json     []byte
	sections [2]v2Section
	refs     []string
	supplied bool
	hash     [sha256.Size]byte
	err      error

	protoOnce sync.Once
	proto     []byte
	protoErr  error

	// Each whole section deflated, by format (jsonForm, protoForm), made
	// on the first gzip request for that format.
	deflateOnce [2][2]sync.Once
	deflated    [2][2][]byte
	deflateErr  [2][2]error
}

func newV2Fragment(key string, build func() (v2Parts, error)) *v2Fragment {
	return &v2Fragment{key: key, build: build}
}

// scratchBuffers holds the buffers supplied definitions (and v3 documents'
// paths) are written into until their fragment or document has copied
// them: hundreds of large CRD schemas each written into fresh memory spent
// much of a first request faulting pages.
var scratchBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 256<<10)
	return &b
}}

func (f *v2Fragment) encode() error {
	f.once.Do(func() {
		parts, err := f.build()
		f.build = nil // the bytes are what is kept
		if err != nil {
			f.err = err
			return
		}
		// Written into a reused buffer and copied once, at its size: after
		// a burst of CRDs the heap has been given back to the OS, and every
		// byte of fresh memory is a page fault; a buffer sized by guess
		// either grew by doubling or was copied again when it overshot.
		scratch := scratchBuffers.Get().(*[]byte)
		out := slices.Grow((*scratch)[:0], parts.sizeHint()) // no doubling into a large fragment
		out, f.sections[pathsSection], err = appendMembers(out, parts.pathNames(), parts.appendPath)
		if err == nil {
			out, f.sections[definitionsSection], err = appendMembers(out, parts.definitionNames(), parts.appendDefinition)
		}
		*scratch = out[:0] // keeps what it grew to
		out = bytes.Clone(out)
		scratchBuffers.Put(scratch)
		for _, buf := range parts.scratch {
			scratchBuffers.Put(buf)
		}
		f.json, f.refs, f.supplied, f.err = out, parts.refs, parts.supplied, err
		if f.derived {
			f.hash = sha256.Sum256([]byte(buildIdentity() + "\n" + f.key))
		} else {
			f.hash = sha256.Sum256(f.json)
		}
	})
	return f.err
}

func (p v2Parts) pathNames() []string {
	names := make([]string, 0, len(p.paths)+len(p.routes))
	for name := range p.paths {
		names = append(names, name)
	}
	for name := range p.routes {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// appendPath writes a path item, from its route when it has one.
func (p v2Parts) appendPath(out []byte, name string) ([]byte, error) {
	item, ok := p.paths[name]
	if !ok {
		rt := p.routes[name]
		start := len(out)
		if out, ok = appendV2PathItem(out, rt); ok {
			return out, nil
		}
		out = out[:start]
		item = v2Paths([]route{rt})[name]
	}
	value, err := item.MarshalJSON()
	return append(out, value...), err
}

func (p v2Parts) definitionNames() []string {
	names := make([]string, 0, len(p.definitions)+len(p.encoded))
	for name := range p.definitions {
		names = append(names, name)
	}
	for name := range p.encoded {
		if _, ok := p.definitions[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// appendDefinition writes a definition; one given as JSON wins over a
// spec.Schema of the same name.
func (p v2Parts) appendDefinition(out []byte, name string) ([]byte, error) {
	if data, ok := p.encoded[name]; ok {
		return append(out, data...), nil
	}
	return appendSchemaJSON(out, p.definitions[name])
}

// sizeHint is about what the paths written from routes and the
// definitions given as JSON take as members: what a fragment's scratch
// buffer grows to at once.
func (p v2Parts) sizeHint() int {
	n := 0
	parameters := func(list []parameter) {
		for _, param := range list {
			n += len(param.description) + len(param.name) + 64
		}
	}
	for name, rt := range p.routes {
		n += len(name) + 16
		parameters(rt.parameters)
		for _, op := range rt.operations {
			n += 600 + 2*len(op.description) + 128*len(op.responses)
			parameters(op.parameters)
		}
	}
	for name, data := range p.encoded {
		n += len(name) + len(data) + 4
	}
	return n
}

// appendMembers writes each value as a JSON object member followed by a
// comma, in the order of names, and returns where each member is. The
// values are the spec types' own (compact) encoding, as spec.Swagger's
// MarshalJSON writes its members, without encoding/json compacting them
// again.
func appendMembers(out []byte, names []string, value func(out []byte, name string) ([]byte, error)) ([]byte, v2Section, error) {
	section := v2Section{names: names, json: make([]span, 0, len(names))}
	for _, name := range names {
		start := len(out)
		var err error
		if out, err = appendJSONString(out, name); err != nil {
			return out, section, err
		}
		out = append(out, ':')
		if out, err = value(out, name); err != nil {
			return out, section, fmt.Errorf("encoding %s: %w", name, err)
		}
		section.json = append(section.json, span{start, len(out)})
		out = append(out, ',')
	}
	return out, section, nil
}

// protobuf encodes each member as a one-member openapi_v2.Document, as
// gnostic's conversion (what kube-openapi's handler uses) makes it, but
// transcoded straight from the member's JSON (see v2transcode.go).
func (f *v2Fragment) protobuf() error {
	f.protoOnce.Do(func() {
		if f.protoErr = f.encode(); f.protoErr != nil {
			return
		}
		var spans [2][]span
		f.proto, spans, f.protoErr = f.protoMembers(transcodeV2Member)
		f.sections[pathsSection].proto, f.sections[definitionsSection].proto = spans[pathsSection], spans[definitionsSection]
	})
	return f.protoErr
}

// v2Member converts one member ("name":value) of a section to the
// one-member Document it is encoded as.
type v2Member func(section int, member []byte) (*openapi_v2.Document, error)

// protoMembers encodes each member of the (encoded) fragment with convert.
func (f *v2Fragment) protoMembers(convert v2Member) ([]byte, [2][]span, error) {
	// Encoded in a reused buffer and copied once at the end: growing one
	// buffer per fragment made as much garbage as the conversion itself.
	scratch := protoScratch.Get().(*[]byte)
	defer protoScratch.Put(scratch)
	out := (*scratch)[:0]
	defer func() { *scratch = out[:0] }()
	var spans [2][]span
	for section := range f.sections {
		members := f.sections[section].json
		spans[section] = make([]span, len(members))
		for i, member := range members {
			doc, err := convert(section, f.json[member.start:member.end])
			if err != nil {
				return nil, spans, err
			}
			start := len(out)
			if out, err = marshalAppend(out, doc); err != nil {
				return nil, spans, err
			}
			spans[section][i] = span{start, len(out)}
		}
	}
	return bytes.Clone(out), spans, nil
}

var protoScratch = sync.Pool{New: func() any { return new([]byte) }}

// gnosticV2Member converts a member through gnostic, on a small document
// holding just that member.
func gnosticV2Member(section int, member []byte) (*openapi_v2.Document, error) {
	mini := []byte(`{"swagger":"2.0","info":{"title":"","version":""},"paths":{`)
	if section == definitionsSection {
		mini = append(mini, `},"definitions":{`...)
	}
	mini = append(append(mini, member...), `}}`...)
	doc, err := parseV2Document(mini)
	if err != nil {
		return nil, err
	}
	paths, definitions := doc.GetPaths().GetPath(), doc.GetDefinitions().GetAdditionalProperties()
	if section == pathsSection && (len(paths) != 1 || len(definitions) != 0) || section == definitionsSection && (len(paths) != 0 || len(definitions) != 1) {
		return nil, errors.New("openapi v2: protobuf conversion changed the number of members")
	}
	if section == pathsSection {
		return &openapi_v2.Document{Paths: &openapi_v2.Paths{Path: paths}}, nil
	}
	return &openapi_v2.Document{Definitions: &openapi_v2.Definitions{AdditionalProperties: definitions}}, nil
}

func marshalAppend(out []byte, m proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.MarshalAppend(out, m)
}

// writeJSON writes members [from, to) of a section, comma separated.
func (f *v2Fragment) writeJSON(w *bytes.Buffer, section, from, to int) {
	if from < to {
		w.Write(f.jsonRun(section, from, to))
	}
}

func (f *v2Fragment) jsonRun(section, from, to int) []byte {
	spans := f.sections[section].json
	return f.json[spans[from].start:spans[to-1].end]
}

func (f *v2Fragment) protoRun(section, from, to int) []byte {
	spans := f.sections[section].proto
	return f.proto[spans[from].start:spans[to-1].end]
}

// encodeAll encodes the fragments not yet encoded, on all processors: with
// hundreds of custom resources most of the first request's time is here.
func encodeAll(fragments []*v2Fragment, encode func(*v2Fragment) error) error {
	return parallel(len(fragments), func(i int) error { return encode(fragments[i]) })
}

// parallel calls do(0..n-1) on all processors and joins the errors.
func parallel(n int, do func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				errs[i] = do(i)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// baseV2Fragment holds the paths of resources described by generated
// definitions only; it depends on nothing supplied, so it is reused as long
// as those resources are unchanged.
func baseV2Fragment(resources []Resource) *v2Fragment {
	f := newV2Fragment(fmt.Sprintf("%+v", resources), func() (v2Parts, error) {
		return localV2Parts(resources, nil), nil
	})
	f.derived = true
	return f
}

// customV2Fragment holds one resource with supplied definitions: its paths
// and its own definitions (own: the supplied ones it names). Anything else
// they refer to is left to the shared fragment.
func customV2Fragment(r Resource, own SuppliedDefinitions) *v2Fragment {
	key := ""
	if r.Revision != "" {
		key = fmt.Sprintf("%+v", r)
	}
	f := newV2Fragment(key, func() (v2Parts, error) {
		return localV2Parts([]Resource{r}, own), nil
	})
	f.derived = key != "" // the revision names the definitions (see Resource.Revision)
	return f
}

// ownDefinitions returns the supplied definitions naming r's kind or list.
func ownDefinitions(r Resource, extra SuppliedDefinitions) SuppliedDefinitions {
	var own SuppliedDefinitions
	for _, name := range []string{r.DefinitionName, listDefinitionName(r)} {
		if supply, ok := extra[name]; ok {
			if own == nil {
				own = SuppliedDefinitions{}
			}
			own[name] = supply
		}
	}
	return own
}

func localV2Parts(resources []Resource, own SuppliedDefinitions) v2Parts {
	resolver := newDefinitionResolver(v2RefPrefix, own)
	routes := routesForAll(resolveResources(resources, resolver))
	parts := v2Parts{definitions: map[string]*spec.Schema{}, encoded: map[string][]byte{}}
	var merged []route
	parts.routes, merged = routesByPath(routes)
	parts.paths = v2Paths(merged)
	// The closure of what the routes reference, as closure() walks it,
	// with supplied definitions taken as JSON when they come that way.
	_ = walkClosure(referencedByRoutes(routes), func(name string) ([]string, error) {
		supplied, ok := own[name]
		if !ok {
			parts.refs = append(parts.refs, name)
			return nil, nil
		}
		parts.supplied = true
		if supplied.V2JSON != nil {
			buf := scratchBuffers.Get().(*[]byte)
			data, refs, ok := supplied.V2JSON((*buf)[:0])
			*buf = data[:0] // keeps what it grew to
			if ok {
				parts.encoded[name] = data
				parts.scratch = append(parts.scratch, buf)
				return refs, nil
			}
			scratchBuffers.Put(buf)
		}
		if schema, dependencies := resolver.lookup(name); schema != nil {
			parts.definitions[name] = schema
			return dependencies, nil
		}
		return nil, nil
	})
	return parts
}

// sharedV2Fragment holds roots and every definition they reach; those in
// prefetched (generated ones, already encoded) are taken from there.
func sharedV2Fragment(roots []string, extra SuppliedDefinitions, prefetched map[string]encodedDefinition) *v2Fragment {
	return newV2Fragment(strings.Join(roots, "\n"), func() (v2Parts, error) {
		resolver := newDefinitionResolver(v2RefPrefix, extra)
		parts := v2Parts{definitions: map[string]*spec.Schema{}, encoded: map[string][]byte{}}
		_ = walkClosure(roots, func(name string) ([]string, error) {
			_, supplied := extra[name]
			parts.supplied = parts.supplied || supplied
			if prefetched, ok := prefetched[name]; ok && !supplied {
				parts.encoded[name] = prefetched.json
				return prefetched.dependencies, nil
			}
			schema, dependencies := resolver.lookup(name)
			if schema == nil {
				return nil, nil
			}
			parts.definitions[name] = schema
			return dependencies, nil
		})
		return parts, nil
	})
}

// encodedDefinition is a generated definition as a fragment holds it.
type encodedDefinition struct {
	json         []byte
	dependencies []string
}

// prefetchV2Definitions encodes the generated definitions roots reach
// (the supplied ones, and what only they reach, are left out), for the
// shared fragment: with no shared fragment built yet, rendering and
// encoding the ~600 generated definitions took a first request's last,
// single-threaded, stretch; done as soon as the base fragment (which
// refers to nearly all of them) is encoded, it runs beside the custom
// resources' fragments. They are written into one scratch buffer (about
// a megabyte), which the caller gives back to scratchBuffers once the
// shared fragment has copied them.
func prefetchV2Definitions(roots []string, extra SuppliedDefinitions) (map[string]encodedDefinition, *[]byte, error) {
	encoded := make(map[string]encodedDefinition, len(definitionGenerators()))
	scratch := scratchBuffers.Get().(*[]byte)
	out := slices.Grow((*scratch)[:0], prefetchedV2Size)
	err := walkClosure(roots, func(name string) ([]string, error) {
		if _, supplied := extra[name]; supplied {
			return nil, nil
		}
		schema, dependencies := generatedV2.lookup(name)
		if schema == nil {
			return nil, nil
		}
		start := len(out)
		var err error
		if out, err = appendSchemaJSON(out, schema); err != nil {
			return nil, err
		}
		// Full slice expressions: a definition's bytes stay its own if
		// out grows (then the earlier ones are in the old array).
		encoded[name] = encodedDefinition{json: out[start:len(out):len(out)], dependencies: dependencies}
		return dependencies, nil
	})
	*scratch = out[:0] // keeps what it grew to
	return encoded, scratch, err
}

// prefetchedV2Size is about what every generated definition takes in
// JSON, with room to spare (what is never written is never touched).
const prefetchedV2Size = 2 << 20

// reusableShared reports whether a shared fragment built earlier describes
// roots under extra too: same roots, and no definition that extra now
// supplies (or that an earlier one supplied).
func reusableShared(f *v2Fragment, key string, extra SuppliedDefinitions) bool {
	if f == nil || f.key != key || f.encode() != nil || f.supplied {
		return false
	}
	for _, name := range f.sections[definitionsSection].names {
		if _, ok := extra[name]; ok {
			return false
		}
	}
	return true
}

// externalV2Fragment holds an aggregated server's paths under its group
// version and all its definitions; local members of the same names win.
func externalV2Fragment(key string, doc *spec.Swagger) *v2Fragment {
	f := newV2Fragment("", func() (v2Parts, error) {
		parts := v2Parts{paths: map[string]spec.PathItem{}, definitions: map[string]*spec.Schema{}}
		prefix := "/" + key
		if doc.Paths != nil {
			for path, item := range doc.Paths.Paths {
				if path == prefix || strings.HasPrefix(path, prefix+"/") {
					parts.paths[path] = item
				}
			}
		}
		for name, schema := range doc.Definitions {
			parts.definitions[name] = &schema
		}
		return parts, nil
	})
	f.source = doc
	return f
}

// routesByPath maps each path that has one route to it, and returns the
// routes of paths shared by several, which v2Paths and v3Paths merge.
func routesByPath(routes []route) (single map[string]route, merged []route) {
	count := make(map[string]int, len(routes))
	for _, rt := range routes {
		count[rt.path]++
	}
	single = make(map[string]route, len(routes))
	for _, rt := range routes {
		if count[rt.path] == 1 {
			single[rt.path] = rt
		} else {
			merged = append(merged, rt)
		}
	}
	return single, merged
}

func v2Paths(routes []route) map[string]spec.PathItem {
	paths := map[string]spec.PathItem{}
	for _, rt := range routes {
		item := paths[rt.path]
		item.Parameters = v2Parameters(rt.parameters)
		for _, op := range rt.operations {
			setOperation(op.method, v2Operation(op), &item.Get, &item.Put, &item.Post, &item.Patch, &item.Delete)
		}
		paths[rt.path] = item
	}
	return paths
}

// v2Run is members [from, to) of one fragment's section.
type v2Run struct {
	fragment *v2Fragment
	from, to int
}

const (
	jsonForm = iota
	protoForm
)

// v2Encoding is the document in one format: the pieces it is read from and,
// for each, the run it is (nil fragment: framing bytes).
type v2Encoding struct {
	format  int
	pieces  v2Bytes
	sources []v2Source

	gzipOnce sync.Once
	gzipped  v2Bytes
	gzipErr  error
}

type v2Source struct {
	v2Run
	section int
}

func (e *v2Encoding) add(piece []byte, source v2Source) {
	e.pieces = append(e.pieces, piece)
	e.sources = append(e.sources, source)
}

// sharedV2Cache keeps the last shared fragment: its roots rarely change
// when custom resources come and go.
type sharedV2Cache struct {
	mu       sync.Mutex
	fragment *v2Fragment
}

// empty reports whether no shared fragment was built yet.
func (c *sharedV2Cache) empty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fragment == nil
}

// v2Document is one state's /openapi/v2, assembled on first request.
type v2Document struct {
	version   string
	fragments []*v2Fragment // base, custom resources, externals: earlier ones win a name
	extra     SuppliedDefinitions
	shared    *sharedV2Cache

	once     sync.Once
	runs     [2][]v2Run
	json     v2Encoding
	etag     string
	modified time.Time
	err      error

	protoOnce sync.Once
	proto     v2Encoding
	protoErr  error
}

func (d *v2Document) assemble() error {
	d.once.Do(func() {
		// The base fragment comes first: once it is encoded, the worker
		// that encoded it prefetches the shared definitions it refers to
		// while the other workers go on with the custom resources.
		var prefetched map[string]encodedDefinition
		var prefetchedBuffer *[]byte
		prefetch := d.shared.empty()
		d.err = parallel(len(d.fragments), func(i int) error {
			if err := d.fragments[i].encode(); err != nil || i > 0 || !prefetch {
				return err
			}
			var err error
			prefetched, prefetchedBuffer, err = prefetchV2Definitions(d.fragments[0].refs, d.extra)
			return err
		})
		if d.err != nil {
			if prefetchedBuffer != nil {
				scratchBuffers.Put(prefetchedBuffer)
			}
			return
		}
		shared, err := d.sharedFragment(prefetched)
		if prefetchedBuffer != nil { // the shared fragment, built or not, holds none of it
			scratchBuffers.Put(prefetchedBuffer)
		}
		if err != nil {
			d.err = err
			return
		}
		d.runs[pathsSection] = runsOf(d.fragments, pathsSection)
		d.runs[definitionsSection] = runsOf(append([]*v2Fragment{shared}, d.fragments...), definitionsSection)
		d.extra = nil

		head, middle, tail, err := v2Frame(d.version, len(d.runs[definitionsSection]) > 0)
		if err != nil {
			d.err = err
			return
		}
		hash := sha512.New()
		d.json.add(head, v2Source{})
		hash.Write(head)
		for section, separator := range [][]byte{middle, tail} {
			for i, run := range d.runs[section] {
				if i > 0 {
					d.json.add(comma, v2Source{})
				}
				d.json.add(run.fragment.jsonRun(section, run.from, run.to), v2Source{run, section})
				hash.Write(run.fragment.hash[:])
				hash.Write(binary.AppendUvarint(binary.AppendUvarint(nil, uint64(run.from)), uint64(run.to)))
			}
			d.json.add(separator, v2Source{})
			hash.Write(separator)
		}
		d.etag = fmt.Sprintf("%X", hash.Sum(nil))
		d.modified = time.Now()
	})
	return d.err
}

var comma = []byte(",")

// sharedFragment returns the definitions the fragments refer to but do not
// carry, reusing the last one built when it fits.
func (d *v2Document) sharedFragment(prefetched map[string]encodedDefinition) (*v2Fragment, error) {
	var roots []string
	for _, f := range d.fragments {
		roots = append(roots, f.refs...)
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	key := strings.Join(roots, "\n")
	d.shared.mu.Lock()
	defer d.shared.mu.Unlock()
	if !reusableShared(d.shared.fragment, key, d.extra) {
		d.shared.fragment = sharedV2Fragment(roots, d.extra, prefetched)
	}
	return d.shared.fragment, d.shared.fragment.encode()
}

// runsOf lists a section's members fragment by fragment, leaving out names
// an earlier member already has.
func runsOf(fragments []*v2Fragment, section int) []v2Run {
	seen := map[string]bool{}
	var runs []v2Run
	for _, f := range fragments {
		names := f.sections[section].names
		for from := 0; from < len(names); {
			to := from
			for to < len(names) && !seen[names[to]] {
				seen[names[to]] = true
				to++
			}
			if to > from {
				runs = append(runs, v2Run{f, from, to})
			}
			from = to + 1 // names[to], if any, was seen
		}
	}
	return runs
}

// v2Frame is the document's JSON around the paths and definitions members.
func v2Frame(version string, definitions bool) (head, middle, tail []byte, err error) {
	var info, securityDefinitions, security []byte
	info, err = json.Marshal(documentInfo(version))
	if err != nil {
		return nil, nil, nil, err
	}
	securityDefinitions, err = json.Marshal(v2SecurityDefinitions())
	if err != nil {
		return nil, nil, nil, err
	}
	security, err = json.Marshal(securityRequirement())
	if err != nil {
		return nil, nil, nil, err
	}
	head = fmt.Appendf(nil, `{"swagger":"2.0","info":%s,"paths":{`, info)
	trailer := fmt.Appendf(nil, `"securityDefinitions":%s,"security":%s}`, securityDefinitions, security)
	if !definitions { // omitted when empty, as spec.Swagger does
		return head, slices.Concat([]byte(`},`), trailer), nil, nil
	}
	return head, []byte(`},"definitions":{`), slices.Concat([]byte(`},`), trailer), nil
}

func v2SecurityDefinitions() spec.SecurityDefinitions {
	return spec.SecurityDefinitions{
		bearerToken: {SecuritySchemeProps: spec.SecuritySchemeProps{
			Type: "apiKey", Name: "authorization", In: "header",
			Description: "Bearer Token authentication",
		}},
	}
}

// protobuf assembles the protobuf form: the header's encoding, then each
// run's members' (see v2Fragment.protobuf).
func (d *v2Document) protobuf() (*v2Encoding, error) {
	d.protoOnce.Do(func() {
		if d.protoErr = d.assemble(); d.protoErr != nil {
			return
		}
		var fragments []*v2Fragment
		listed := map[*v2Fragment]bool{}
		for _, runs := range d.runs {
			for _, run := range runs {
				if !listed[run.fragment] {
					listed[run.fragment] = true
					fragments = append(fragments, run.fragment)
				}
			}
		}
		if d.protoErr = encodeAll(fragments, (*v2Fragment).protobuf); d.protoErr != nil {
			return
		}
		head, middle, tail, err := v2Frame(d.version, false)
		if err != nil {
			d.protoErr = err
			return
		}
		header, err := parseV2Document(slices.Concat(head, middle, tail))
		if err != nil {
			d.protoErr = err
			return
		}
		encodedHeader, err := marshalAppend(nil, header)
		if err != nil {
			d.protoErr = err
			return
		}
		d.proto.format = protoForm
		d.proto.add(encodedHeader, v2Source{})
		for section, runs := range d.runs {
			for _, run := range runs {
				d.proto.add(run.fragment.protoRun(section, run.from, run.to), v2Source{run, section})
			}
		}
	})
	return &d.proto, d.protoErr
}

// v2Bytes is a document as the pieces it is read from, never joined.
type v2Bytes [][]byte

func (b v2Bytes) size() int64 {
	var n int64
	for _, piece := range b {
		n += int64(len(piece))
	}
	return n
}

// reader reads the pieces in sequence, seekable for http.ServeContent.
func (b v2Bytes) reader() *v2Reader { return &v2Reader{pieces: b, size: b.size()} }

func (b v2Bytes) bytes() []byte { return slices.Concat(b...) }

type v2Reader struct {
	pieces v2Bytes
	size   int64
	offset int64
	// piece, within: where offset is, kept so sequential reads do not
	// search the pieces again
	piece  int
	within int64
}

func (r *v2Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.piece < len(r.pieces) {
		piece := r.pieces[r.piece]
		copied := copy(p[n:], piece[r.within:])
		n += copied
		r.within += int64(copied)
		r.offset += int64(copied)
		if r.within == int64(len(piece)) {
			r.piece, r.within = r.piece+1, 0
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *v2Reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += r.offset
	case io.SeekEnd:
		offset += r.size
	}
	if offset < 0 {
		return 0, errors.New("openapi v2: seek before the start")
	}
	r.offset, r.piece, r.within = offset, 0, offset
	for r.piece < len(r.pieces) && r.within >= int64(len(r.pieces[r.piece])) {
		r.within -= int64(len(r.pieces[r.piece]))
		r.piece++
	}
	return offset, nil
}

const (
	protoV2Deprecated = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
	protoV2           = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

// v2DocumentLocked lays out the document of resources and extra from
// fragments, reusing those of the last Update that still fit; nothing is
// built here.
func (s *Service) v2DocumentLocked(resources []Resource, extra SuppliedDefinitions) *v2Document {
	var base []Resource
	var custom []*v2Fragment
	kept := map[string]*v2Fragment{}
	for _, r := range resources {
		own := ownDefinitions(r, extra)
		if own == nil {
			base = append(base, r)
			continue
		}
		f := customV2Fragment(r, own)
		if f.key != "" {
			if previous, ok := s.v2Custom[f.key]; ok {
				f = previous // same revision: same definitions
			}
			kept[f.key] = f
		}
		custom = append(custom, f)
	}
	s.v2Custom = kept
	if baseFragment := baseV2Fragment(base); s.v2Base == nil || s.v2Base.key != baseFragment.key {
		s.v2Base = baseFragment
	}

	fragments := append([]*v2Fragment{s.v2Base}, custom...)
	external := map[string]*v2Fragment{}
	for _, key := range sortedKeys(s.external) {
		doc := s.external[key].V2
		if doc == nil {
			continue
		}
		f := s.v2External[key]
		if f == nil || f.source != doc {
			f = externalV2Fragment(key, doc)
		}
		external[key] = f
		fragments = append(fragments, f)
	}
	s.v2External = external
	return &v2Document{version: s.version, fragments: fragments, extra: extra, shared: &s.v2Shared}
}

// serveV2 answers /openapi/v2 in JSON or protobuf, as kube-openapi's
// handler does: one ETag for both (Vary: Accept), conditional requests.
func (s *Service) serveV2(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	doc := s.v2
	s.mu.Unlock()
	for _, clause := range acceptClauses(w, r) {
		if clause.Type != "application" && clause.Type != "*" {
			continue
		}
		var form *v2Encoding
		var contentType string
		var err error
		switch clause.SubType {
		case "json", "*":
			err = doc.assemble()
			form, contentType = &doc.json, "application/json"
		case protoV2, protoV2Deprecated:
			form, err = doc.protobuf()
			contentType = "application/" + protoV2
		default:
			continue
		}
		body := form.pieces
		// Clients that --disable-compression-for-client-ips names (loopback
		// by default) get the bytes as they are, as API responses: there
		// gzip only costs CPU on both ends (kubectl inflating 40 MB).
		if err == nil && acceptsGzip(r) && !request.CompressionDisabled(r.Context()) {
			body, err = form.gzip()
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Header().Add("Vary", "Accept-Encoding")
		if err != nil {
			w.Header().Del("Content-Encoding")
			slog.Error("building /openapi/v2", "err", err)
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Etag", strconv.Quote(doc.etag))
		http.ServeContent(w, r, pathV2, doc.modified, body.reader())
		return
	}
	w.WriteHeader(http.StatusNotAcceptable)
}
