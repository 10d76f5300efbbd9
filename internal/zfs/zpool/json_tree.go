package zpool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// jsonObject is a decoded JSON object that keeps its members in order:
// vdev children must stay in the order zpool printed them.
type jsonObject struct {
	members []jsonMember
}

type jsonMember struct {
	key   string
	value any // *jsonObject, []any, string, json.Number, bool or nil
	line  int
}

// get returns the last member named key, as encoding/json would.
func (o *jsonObject) get(key string) (jsonMember, bool) {
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			return o.members[i], true
		}
	}
	return jsonMember{}, false
}

// object returns the member key when it is an object, nil when it is
// absent or null.
func (o *jsonObject) object(key string) (*jsonObject, error) {
	m, ok := o.get(key)
	if !ok || m.value == nil {
		return nil, nil
	}
	obj, ok := m.value.(*jsonObject)
	if !ok {
		return nil, fmt.Errorf("line %d: %s is not an object", m.line, key)
	}
	return obj, nil
}

// decodeOrderedJSON decodes one JSON document whose top level is an
// object. Errors name the line.
func decodeOrderedJSON(data []byte) (*jsonObject, error) {
	lines := newLineIndex(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	d := orderedDecoder{dec: dec, lines: lines}
	v, err := d.value()
	if err != nil {
		return nil, d.wrap(err)
	}
	obj, ok := v.(*jsonObject)
	if !ok {
		return nil, fmt.Errorf("line 1: JSON output is not an object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("line %d: unexpected data after the JSON document", lines.line(dec.InputOffset()))
	}
	return obj, nil
}

type orderedDecoder struct {
	dec   *json.Decoder
	lines lineIndex
}

func (d orderedDecoder) wrap(err error) error {
	var syntax *json.SyntaxError
	offset := d.dec.InputOffset()
	if errors.As(err, &syntax) {
		offset = syntax.Offset
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New("unexpected end of JSON input")
	}
	return fmt.Errorf("line %d: %w", d.lines.line(offset), err)
}

func (d orderedDecoder) value() (any, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		return d.object()
	case json.Delim('['):
		return d.array()
	}
	return tok, nil
}

func (d orderedDecoder) object() (*jsonObject, error) {
	obj := &jsonObject{}
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", tok)
		}
		line := d.lines.line(d.dec.InputOffset())
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		obj.members = append(obj.members, jsonMember{key: key, value: v, line: line})
	}
	_, err := d.dec.Token() // '}'
	return obj, err
}

func (d orderedDecoder) array() ([]any, error) {
	var arr []any
	for d.dec.More() {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
	_, err := d.dec.Token() // ']'
	return arr, err
}

// lineIndex maps byte offsets to 1-based line numbers.
type lineIndex []int64 // offsets of the newlines

func newLineIndex(data []byte) lineIndex {
	var idx lineIndex
	for i, c := range data {
		if c == '\n' {
			idx = append(idx, int64(i))
		}
	}
	return idx
}

func (idx lineIndex) line(offset int64) int {
	return sort.Search(len(idx), func(i int) bool { return idx[i] >= offset }) + 1
}
