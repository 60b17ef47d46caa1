package snapshot

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
)

// The file format: a magic line, a JSON header line, then each key and
// value as a uvarint length and its bytes, and last the CRC-32C of
// everything before it (big-endian), so a truncated or damaged file is
// refused rather than half restored.
const magic = "devplane-snapshot/v1\n"

// header is the file's second line.
type header struct {
	Revision int64  `json:"revision"`
	Keys     int    `json:"keys"`
	Prefix   string `json:"prefix"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxKeys bounds a header's key count before anything is allocated for it.
const maxKeys = 50_000_000

// WriteTo writes s in the snapshot file format.
func (s *Snapshot) WriteTo(w io.Writer) (int64, error) {
	crc := crc32.New(castagnoli)
	cw := &countingWriter{w: io.MultiWriter(w, crc)}
	bw := bufio.NewWriterSize(cw, 64<<10)
	head, _ := json.Marshal(header{Revision: s.Revision, Keys: len(s.KVs), Prefix: Prefix})
	bw.WriteString(magic)
	bw.Write(head)
	bw.WriteByte('\n')
	var lenBuf [binary.MaxVarintLen64]byte
	for _, kv := range s.KVs {
		bw.Write(lenBuf[:binary.PutUvarint(lenBuf[:], uint64(len(kv.Key)))])
		bw.WriteString(kv.Key)
		bw.Write(lenBuf[:binary.PutUvarint(lenBuf[:], uint64(len(kv.Value)))])
		bw.Write(kv.Value)
	}
	if err := bw.Flush(); err != nil {
		return cw.n, err
	}
	n, err := w.Write(crc.Sum(nil))
	return cw.n + int64(n), err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ErrFormat is returned (wrapped) for input that is not a whole snapshot
// file.
var ErrFormat = errors.New("not a devplane snapshot")

// Read reads a snapshot written by WriteTo.
func Read(r io.Reader) (*Snapshot, error) {
	crc := crc32.New(castagnoli)
	br := bufio.NewReaderSize(r, 64<<10)
	tr := &teeByteReader{r: br, crc: crc}
	line, err := tr.readLine(len(magic))
	if err != nil || line+"\n" != magic {
		return nil, fmt.Errorf("%w: the file does not start with %q", ErrFormat, strings.TrimSpace(magic))
	}
	line, err = tr.readLine(4096)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the header: %v", ErrFormat, err)
	}
	var h header
	if err := json.Unmarshal([]byte(line), &h); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	if h.Prefix != Prefix || h.Keys < 0 || h.Keys > maxKeys {
		return nil, fmt.Errorf("%w: header %s", ErrFormat, line)
	}
	s := &Snapshot{Revision: h.Revision, KVs: make([]KV, 0, min(h.Keys, 1<<16))}
	for i := range h.Keys {
		key, err := tr.readBytes()
		if err != nil {
			return nil, fmt.Errorf("%w: key %d of %d: %v", ErrFormat, i+1, h.Keys, err)
		}
		value, err := tr.readBytes()
		if err != nil {
			return nil, fmt.Errorf("%w: value of %s: %v", ErrFormat, key, err)
		}
		k := string(key)
		if !strings.HasPrefix(k, Prefix) || (len(s.KVs) > 0 && s.KVs[len(s.KVs)-1].Key >= k) {
			return nil, fmt.Errorf("%w: key %q out of place", ErrFormat, k)
		}
		s.KVs = append(s.KVs, KV{Key: k, Value: value})
	}
	want := crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(br, sum[:]); err != nil {
		return nil, fmt.Errorf("%w: the checksum is missing (a truncated file?)", ErrFormat)
	}
	if binary.BigEndian.Uint32(sum[:]) != want {
		return nil, fmt.Errorf("%w: checksum mismatch (a damaged file?)", ErrFormat)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the checksum", ErrFormat)
	}
	s.KVs = slices.Clip(s.KVs)
	return s, nil
}

// teeByteReader reads the file's parts and feeds them to the checksum.
type teeByteReader struct {
	r   *bufio.Reader
	crc io.Writer
}

func (t *teeByteReader) readLine(limit int) (string, error) {
	var b []byte
	for len(b) <= limit {
		c, err := t.r.ReadByte()
		if err != nil {
			return "", err
		}
		t.crc.Write([]byte{c})
		if c == '\n' {
			return string(b), nil
		}
		b = append(b, c)
	}
	return "", errors.New("line too long")
}

// maxValue bounds one key or value; etcd's own request limit is far below.
const maxValue = 1 << 30

func (t *teeByteReader) readBytes() ([]byte, error) {
	n, err := binary.ReadUvarint(t.r)
	if err != nil {
		return nil, unexpected(err)
	}
	if n > maxValue {
		return nil, fmt.Errorf("length %d too large", n)
	}
	var lenBuf [binary.MaxVarintLen64]byte
	t.crc.Write(lenBuf[:binary.PutUvarint(lenBuf[:], n)])
	b := make([]byte, n)
	if _, err := io.ReadFull(t.r, b); err != nil {
		return nil, unexpected(err)
	}
	t.crc.Write(b)
	return b, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
