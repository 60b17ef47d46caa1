package openapi

// Compressing a /openapi/v2 of tens of megabytes on every request (what a
// gzip middleware does, and what clients ask for by default) costs more
// than assembling it. A deflate stream may be made of blocks compressed
// independently, as long as each but the last ends byte-aligned and is not
// marked final (what a sync flush produces). So each fragment's sections
// are deflated once and kept, and a gzip response is a header, the pieces'
// deflated forms in order, an empty final block and the checksum.

import (
	"bytes"
	"encoding/binary"
	"github.com/klauspost/compress/flate"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// deflateLevel: the pieces are built on the first gzip request after a
// change, so speed matters more than the last bytes of ratio.
const deflateLevel = flate.BestSpeed

var (
	gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff} // deflate, no name or time, unknown OS
	finalBlock = []byte{1, 0, 0, 0xff, 0xff}                   // empty stored block marked final

	deflaters = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, deflateLevel) // the level is valid
		return w
	}}
)

// deflate compresses data into non-final blocks ending byte-aligned; small
// pieces (framing) are stored as they are.
func deflate(data []byte) ([]byte, error) {
	if len(data) < 512 {
		return storedBlocks(data), nil
	}
	// Compressed into a reused buffer and copied once, at its size: a
	// bytes.Buffer per piece grew by doubling into fresh memory.
	buf := deflateBuffers.Get().(*bytes.Buffer)
	defer deflateBuffers.Put(buf)
	buf.Reset()
	w := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(w)
	w.Reset(buf)
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil { // sync flush: aligned, not final
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

var deflateBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// storedBlocks is data as uncompressed non-final deflate blocks.
func storedBlocks(data []byte) []byte {
	var out []byte
	for {
		n := min(len(data), 0xffff)
		out = append(out, 0)
		out = binary.LittleEndian.AppendUint16(out, uint16(n))
		out = binary.LittleEndian.AppendUint16(out, ^uint16(n))
		out = append(out, data[:n]...)
		data = data[n:]
		if len(data) == 0 {
			return out
		}
	}
}

// deflatedSection is a fragment's whole section in format, deflated once.
func (f *v2Fragment) deflatedSection(format, section int) ([]byte, error) {
	f.deflateOnce[format][section].Do(func() {
		n := len(f.sections[section].names)
		run := f.jsonRun
		if format == protoForm {
			run = f.protoRun
		}
		f.deflated[format][section], f.deflateErr[format][section] = deflate(run(section, 0, n))
	})
	return f.deflated[format][section], f.deflateErr[format][section]
}

// gzip is the form gzip-encoded: the fragments' kept deflated sections
// where a piece is a whole section, the rest deflated now.
func (form *v2Encoding) gzip() (v2Bytes, error) {
	form.gzipOnce.Do(func() {
		deflated := make(v2Bytes, len(form.pieces))
		form.gzipErr = parallel(len(form.pieces), func(i int) error {
			var err error
			source := form.sources[i]
			if source.fragment != nil && source.from == 0 && source.to == len(source.fragment.sections[source.section].names) {
				deflated[i], err = source.fragment.deflatedSection(form.format, source.section)
			} else {
				deflated[i], err = deflate(form.pieces[i])
			}
			return err
		})
		if form.gzipErr != nil {
			return
		}
		crc := uint32(0)
		for _, piece := range form.pieces {
			crc = crc32.Update(crc, crc32.IEEETable, piece)
		}
		trailer := binary.LittleEndian.AppendUint32(nil, crc)
		trailer = binary.LittleEndian.AppendUint32(trailer, uint32(form.pieces.size()))
		form.gzipped = append(append(append(v2Bytes{gzipHeader}, deflated...), finalBlock), trailer)
	})
	return form.gzipped, form.gzipErr
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, coding := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(coding, ";")
		if name = strings.TrimSpace(name); name != "gzip" && name != "*" {
			continue
		}
		q := 1.0
		if value, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if parsed, err := strconv.ParseFloat(value, 64); err == nil {
				q = parsed
			}
		}
		return q > 0
	}
	return false
}
