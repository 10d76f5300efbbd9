package zpool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// jsonObject is a decoded JSON object that keeps its members in order:
// vdev children must stay in the order zpool printed them.
type jsonObject struct {
	members []jsonMember
}

type jsonMember struct {
	key string
	// value is *jsonObject, []any (of the values the token decoder
	// gives), bool or nil; or jsonString or jsonNumber, whose text is in
	// text. Most values are strings or numbers: boxing each in an
	// interface was most of the allocations of a large status.
	value any
	text  string
	line  int
}

// The values of the members whose value is their text.
type (
	jsonString struct{}
	jsonNumber struct{} // as printed
)

// newMember returns a member of a value as the token decoder gives it.
func newMember(key string, v any, line int) jsonMember {
	m := jsonMember{key: key, value: v, line: line}
	switch v := v.(type) {
	case string:
		m.value, m.text = jsonString{}, v
	case json.Number:
		m.value, m.text = jsonNumber{}, string(v)
	}
	return m
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
		return nil, parse.Errorf(m.line, "%s is not an object", key)
	}
	return obj, nil
}

// decodeJSON decodes one JSON document whose top level is an object.
// Errors name the line.
func decodeJSON(text string) (*jsonObject, error) {
	r := jsonReader{text: text, line: 1}
	if obj, ok := r.document(); ok {
		return obj, nil
	}
	// The fast reader stops at whatever it does not read exactly as
	// encoding/json does: its decoder reads the document again, and says
	// what is wrong.
	return decodeOrderedJSON(text)
}

// decodeOrderedJSON is decodeJSON through encoding/json's tokens: several
// times slower, as it allocates for every token, but its errors say what
// encoding/json says.
func decodeOrderedJSON(text string) (*jsonObject, error) {
	lines := newLineIndex(text)
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	d := orderedDecoder{dec: dec, lines: lines}
	v, err := d.value()
	if err != nil {
		return nil, d.wrap(err)
	}
	obj, ok := v.(*jsonObject)
	if !ok {
		return nil, parse.Errorf(1, "JSON output is not an object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, parse.Errorf(lines.line(dec.InputOffset()), "unexpected data after the JSON document")
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
	return parse.AtLine(d.lines.line(offset), err)
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
		obj.members = append(obj.members, newMember(key, v, line))
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

func newLineIndex(text string) lineIndex {
	var idx lineIndex
	for i := range len(text) {
		if text[i] == '\n' {
			idx = append(idx, int64(i))
		}
	}
	return idx
}

func (idx lineIndex) line(offset int64) int {
	return sort.Search(len(idx), func(i int) bool { return idx[i] >= offset }) + 1
}

// jsonReader reads a JSON document in one pass into the values that the
// token decoder gives, with the line of each member, and without a
// json.Decoder's allocation per token: strings are substrings of the
// text. It is strict: where encoding/json could say anything but what
// the reader would return, it stops (ok false), and never says why.
type jsonReader struct {
	text  string
	pos   int
	line  int          // of pos, from 1
	depth int          // of objects and arrays around pos
	stack []jsonMember // members of the objects being read, innermost last

	// Objects and their members are cut from blocks, an allocation for
	// many objects rather than two each: the tree is dropped as a whole.
	objects []jsonObject
	members []jsonMember
}

// jsonBlock is how many objects or members a block holds.
const jsonBlock = 256

// maxJSONDepth bounds the reader's recursion; deeper documents are left
// to the token decoder.
const maxJSONDepth = 1000

// document reads the whole text as one object.
func (r *jsonReader) document() (*jsonObject, bool) {
	r.space()
	if r.peek() != '{' {
		return nil, false
	}
	obj, ok := r.object()
	r.space()
	return obj, ok && r.pos == len(r.text)
}

// peek returns the byte at pos, or 0 at the end.
func (r *jsonReader) peek() byte {
	if r.pos < len(r.text) {
		return r.text[r.pos]
	}
	return 0
}

// space skips white space, counting lines.
func (r *jsonReader) space() {
	for ; r.pos < len(r.text); r.pos++ {
		switch r.text[r.pos] {
		case '\n':
			r.line++
		case ' ', '\t', '\r':
		default:
			return
		}
	}
}

// value reads the value at pos as the token decoder gives it:
// *jsonObject, []any, string, json.Number, bool or nil.
func (r *jsonReader) value() (any, bool) {
	switch c := r.peek(); {
	case c == '{':
		return r.object()
	case c == '[':
		return r.array()
	case c == '"':
		return r.string()
	case c == '-' || '0' <= c && c <= '9':
		n, ok := r.number()
		return json.Number(n), ok
	}
	for _, lit := range jsonLiterals {
		if strings.HasPrefix(r.text[r.pos:], lit.text) {
			r.pos += len(lit.text)
			return lit.value, true
		}
	}
	return nil, false
}

// member reads the value of a member.
func (r *jsonReader) member(key string, line int) (jsonMember, bool) {
	m := jsonMember{key: key, line: line}
	ok := false
	switch c := r.peek(); {
	case c == '"':
		m.value = jsonString{}
		m.text, ok = r.string()
	case c == '-' || '0' <= c && c <= '9':
		m.value = jsonNumber{}
		m.text, ok = r.number()
	default:
		m.value, ok = r.value()
	}
	return m, ok
}

var jsonLiterals = []struct {
	text  string
	value any
}{{"true", true}, {"false", false}, {"null", nil}}

// object reads an object from its "{". Its members gather on the stack,
// above those of the objects around it, and are copied into a block at
// its "}", when their number is known.
func (r *jsonReader) object() (*jsonObject, bool) {
	if r.depth++; r.depth > maxJSONDepth {
		return nil, false
	}
	r.pos++
	r.space()
	base := len(r.stack)
	if r.peek() != '}' {
		for {
			if r.peek() != '"' {
				return nil, false
			}
			key, ok := r.string()
			line := r.line
			r.space()
			if !ok || r.peek() != ':' {
				return nil, false
			}
			r.pos++
			r.space()
			m, ok := r.member(key, line)
			if !ok {
				return nil, false
			}
			r.stack = append(r.stack, m)
			if !r.more() {
				break
			}
			r.space()
		}
	}
	if r.peek() != '}' {
		return nil, false
	}
	r.pos++
	r.depth--
	obj := r.newObject(r.stack[base:])
	r.stack = r.stack[:base]
	return obj, true
}

// newObject returns an object of a copy of members, from the blocks.
func (r *jsonReader) newObject(members []jsonMember) *jsonObject {
	if len(r.objects) == 0 {
		r.objects = make([]jsonObject, jsonBlock)
	}
	obj := &r.objects[0]
	r.objects = r.objects[1:]
	if n := len(members); n > 0 {
		if len(r.members) < n {
			r.members = make([]jsonMember, max(n, jsonBlock))
		}
		obj.members = r.members[:n:n]
		copy(obj.members, members)
		r.members = r.members[n:]
	}
	return obj
}

// more skips the space after a member or an element and a comma, and
// tells whether there was one.
func (r *jsonReader) more() bool {
	r.space()
	if r.peek() == ',' {
		r.pos++
		return true
	}
	return false
}

// array reads an array from its "[": nil when empty, as the token decoder
// has it.
func (r *jsonReader) array() (any, bool) {
	if r.depth++; r.depth > maxJSONDepth {
		return nil, false
	}
	r.pos++
	r.space()
	var arr []any
	if r.peek() != ']' {
		for {
			v, ok := r.value()
			if !ok {
				return nil, false
			}
			arr = append(arr, v)
			if !r.more() {
				break
			}
			r.space()
		}
	}
	if r.peek() != ']' {
		return nil, false
	}
	r.pos++
	r.depth--
	return arr, true
}

// string reads a string from its opening quote. One with escapes, or with
// bytes that are not UTF-8 (which encoding/json replaces), is unquoted by
// encoding/json itself.
func (r *jsonReader) string() (string, bool) {
	start := r.pos + 1
	if end := strings.IndexByte(r.text[start:], '"'); end >= 0 && isPlainASCII(r.text[start:start+end]) {
		r.pos = start + end + 1
		return r.text[start : start+end], true
	}
	for i := start; i < len(r.text); i++ {
		switch c := r.text[i]; {
		case c == '"':
			r.pos = i + 1
			if s := r.text[start:i]; utf8.ValidString(s) && !strings.Contains(s, "\\") {
				return s, true
			}
			return unquote(r.text[start-1 : r.pos])
		case c == '\\':
			i++ // the escaped byte, which may be a quote
		case c < ' ':
			return "", false
		}
	}
	return "", false
}

// isPlainASCII tells whether s is printable ASCII without a backslash:
// the text of a JSON string as is.
func isPlainASCII(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < ' ' || c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func unquote(quoted string) (string, bool) {
	var s string
	err := json.Unmarshal([]byte(quoted), &s)
	return s, err == nil
}

// number reads a number, which must follow JSON's grammar, as printed.
func (r *jsonReader) number() (string, bool) {
	start := r.pos
	if r.peek() == '-' {
		r.pos++
	}
	switch c := r.peek(); {
	case c == '0':
		r.pos++
	case '1' <= c && c <= '9':
		r.digits()
	default:
		return "", false
	}
	if r.peek() == '.' {
		r.pos++
		if !r.digits() {
			return "", false
		}
	}
	if c := r.peek(); c == 'e' || c == 'E' {
		r.pos++
		if c := r.peek(); c == '+' || c == '-' {
			r.pos++
		}
		if !r.digits() {
			return "", false
		}
	}
	return r.text[start:r.pos], true
}

// digits skips decimal digits and tells whether there was one.
func (r *jsonReader) digits() bool {
	start := r.pos
	for r.pos < len(r.text) && '0' <= r.text[r.pos] && r.text[r.pos] <= '9' {
		r.pos++
	}
	return r.pos > start
}
