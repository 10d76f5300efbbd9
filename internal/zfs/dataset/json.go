package dataset

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ParseJSON reads `zfs list -j --json-int -o PROPERTIES` (OpenZFS 2.3+)
// into the List that ParseList gives for `zfs list -Hp -o PROPERTIES` of
// the same moment; properties start with "name", as for ParseList.
//
// The datasets come out in the order zfs printed them, which is its
// hierarchical order ("tank@snap" before "tank/a"), not that of their
// names. A value is the text zfs printed: a number as its digits (byte
// counts pass 2^53, so they never go through a float), a string as is,
// and "" when zfs printed no such property or null. A value that is an
// object, an array or a boolean is refused: zfs prints none, so it is
// output this parser does not know. Members it does not know are skipped.
//
// Without --json-int the values are those of `zfs list -j`: human
// strings ("1.5M"), which Number refuses, as it refuses those of `zfs
// list -H` without -p.
func ParseJSON(r io.Reader, properties []string) (*List, error) {
	if len(properties) == 0 || properties[0] != "name" {
		return nil, errNameFirst(properties)
	}
	text, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("after byte %d: %w", len(text), err)
	}
	p := jsonList{
		text:   text,
		list:   &List{Properties: properties[1:]},
		column: make(map[string]int, len(properties)-1),
	}
	for i, name := range p.list.Properties {
		if _, ok := p.column[name]; !ok {
			p.column[name] = i
		}
	}
	if err := p.document(); err != nil {
		return nil, err
	}
	return p.list, nil
}

// jsonList walks the JSON text once, straight into the List, without a
// json.Decoder, which allocates for every token, or a map of the
// datasets, which would lose zfs's order.
type jsonList struct {
	text   string
	pos    int
	depth  int // of the objects and arrays skip is in
	list   *List
	column map[string]int

	command   string
	commandAt int // -1 until output_version.command is read

	// Where the walk is, for errors.
	dataset, property string

	// The values of the datasets are cut from blocks, an allocation for
	// many datasets rather than one each.
	values []string
}

// valueBlock is how many datasets' values a block holds.
const valueBlock = 256

// maxSkipDepth bounds the recursion of skip, in members nobody asked
// for, as encoding/json bounds its own.
const maxSkipDepth = 1000

// document reads the whole text as one object, of which it reads
// "output_version" and "datasets", and checks that zfs list printed it.
func (p *jsonList) document() error {
	p.commandAt = -1
	p.space()
	if err := p.open(); err != nil {
		return err
	}
	for first := true; ; first = false {
		key, ok, err := p.member(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch key {
		case "output_version":
			err = p.outputVersion()
		case "datasets":
			err = p.datasets()
		default:
			err = p.skip()
		}
		if err != nil {
			return err
		}
	}
	p.space()
	if p.pos < len(p.text) {
		return p.errorf("%s after the JSON document", p.found())
	}
	switch {
	case p.commandAt < 0:
		return parse.Errorf(0, "no output_version.command: not the output of zfs list -j")
	case p.command != "zfs list":
		return parse.Errorf(p.lineAt(p.commandAt), "at byte %d: output_version.command is %q, not \"zfs list\"", p.commandAt, p.command)
	}
	return nil
}

// outputVersion reads the object that says which command printed the
// output: `zfs get -j` prints datasets and properties too, but not the
// same ones.
func (p *jsonList) outputVersion() error {
	if p.null() {
		return nil
	}
	if err := p.open(); err != nil {
		return err
	}
	for first := true; ; first = false {
		key, ok, err := p.member(first)
		if err != nil || !ok {
			return err
		}
		if key != "command" {
			err = p.skip()
		} else if p.peek() != '"' {
			err = p.errorf("output_version.command is %s, not a string", p.found())
		} else {
			p.commandAt = p.pos
			p.command, err = p.string()
		}
		if err != nil {
			return err
		}
	}
}

// datasets reads the object of the datasets, keyed by name.
func (p *jsonList) datasets() error {
	if p.null() {
		return nil
	}
	if err := p.open(); err != nil {
		return err
	}
	for first := true; ; first = false {
		name, ok, err := p.member(first)
		if err != nil || !ok {
			return err
		}
		if err := p.readDataset(name); err != nil {
			return err
		}
	}
}

// readDataset reads the object of the dataset named name: its
// "properties", and its "name" again, which must agree.
func (p *jsonList) readDataset(name string) error {
	p.dataset = name
	if name == "" {
		return p.errorf("no dataset name")
	}
	if err := p.open(); err != nil {
		return err
	}
	n := len(p.list.Properties)
	if len(p.values) < n || n == 0 { // empty, as ParseList's, not nil
		p.values = make([]string, n*valueBlock)
	}
	values := p.values[:n:n]
	p.values = p.values[n:]
	for first := true; ; first = false {
		key, ok, err := p.member(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch key {
		case "properties":
			err = p.properties(values)
		case "name":
			at := p.pos
			var s string
			if s, err = p.value(); err == nil && s != name {
				p.pos = at
				err = p.errorf("the dataset is named %q too", s)
			}
		default:
			err = p.skip()
		}
		if err != nil {
			return err
		}
	}
	p.list.Datasets = append(p.list.Datasets, Dataset{Name: name, Values: values})
	p.dataset = ""
	return nil
}

// properties reads the properties of a dataset into values. zfs prints
// them in the order they were asked for, so the next column is tried
// before the map.
func (p *jsonList) properties(values []string) error {
	if p.null() {
		return nil
	}
	if err := p.open(); err != nil {
		return err
	}
	next := 0
	for first := true; ; first = false {
		property, ok, err := p.member(first)
		if err != nil || !ok {
			return err
		}
		i := -1
		if next < len(values) && p.list.Properties[next] == property {
			i = next
		} else if c, ok := p.column[property]; ok {
			i = c
		}
		if i < 0 {
			if err := p.skip(); err != nil {
				return err
			}
			continue
		}
		next = i + 1
		p.property = property
		if values[i], err = p.propertyValue(); err != nil {
			return err
		}
		p.property = ""
	}
}

// propertyValue reads the object of one property: its "value", and its
// "source", which is skipped. zfs prints some 300,000 of them for 10,000
// datasets, each as {"value":V,"source":{"type":"T","data":"D"}}: that
// layout is read in a few steps, and anything else member by member, from
// the start again.
func (p *jsonList) propertyValue() (string, error) {
	start := p.pos
	if p.literal(`{"value":`) {
		v, err := p.value()
		if err != nil {
			return "", err
		}
		if p.literal(`,"source":{"type":`) && p.skipString() && p.literal(`,"data":`) && p.skipString() && p.literal("}}") {
			return v, nil
		}
		p.pos = start
	}
	if p.null() {
		return "", nil
	}
	if err := p.open(); err != nil {
		return "", err
	}
	value := ""
	for first := true; ; first = false {
		key, ok, err := p.member(first)
		if err != nil || !ok {
			return value, err
		}
		if key == "value" {
			value, err = p.value()
		} else {
			err = p.skip()
		}
		if err != nil {
			return "", err
		}
	}
}

// value reads a value as text: a string, a number as printed, or ""
// for null.
func (p *jsonList) value() (string, error) {
	p.space()
	switch c := p.peek(); {
	case c == '"':
		return p.string()
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	case p.null():
		return "", nil
	case c == '{', c == '[', c == 't', c == 'f':
		return "", p.errorf("the value is %s, not a string or a number", p.found())
	}
	return "", p.errorf("want a value, found %s", p.found())
}

// open reads the opening brace of an object.
func (p *jsonList) open() error {
	if p.peek() != '{' {
		return p.errorf("want an object, found %s", p.found())
	}
	p.pos++
	return nil
}

// member reads an object up to the value of its next member: the ","
// before it unless it is the first, its key and the ":" after, and the
// space around them. It returns false, past the "}", at the object's
// end.
func (p *jsonList) member(first bool) (key string, ok bool, err error) {
	p.space()
	if p.peek() == '}' {
		p.pos++
		return "", false, nil
	}
	if !first {
		if p.peek() != ',' {
			return "", false, p.errorf("want ',' or '}' after a member, found %s", p.found())
		}
		p.pos++
		p.space()
	}
	if p.peek() != '"' {
		return "", false, p.errorf("want a member name, found %s", p.found())
	}
	if key, err = p.string(); err != nil {
		return "", false, err
	}
	p.space()
	if p.peek() != ':' {
		return "", false, p.errorf("want ':' after member name %q, found %s", key, p.found())
	}
	p.pos++
	p.space()
	return key, true, nil
}

// skip reads a value nobody asked for, as strictly as the others.
func (p *jsonList) skip() error {
	switch c := p.peek(); {
	case c == '"':
		_, err := p.string()
		return err
	case c == '-' || '0' <= c && c <= '9':
		_, err := p.number()
		return err
	case c == '{' || c == '[':
		if p.depth++; p.depth > maxSkipDepth {
			return p.errorf("values nested more than %d deep", maxSkipDepth)
		}
		p.pos++
		var err error
		if c == '{' {
			err = p.skipMembers()
		} else {
			err = p.skipElements()
		}
		p.depth--
		return err
	case p.null() || p.literal("true") || p.literal("false"):
		return nil
	}
	return p.errorf("want a value, found %s", p.found())
}

// skipMembers skips the members of an object after its "{", and the "}".
func (p *jsonList) skipMembers() error {
	for first := true; ; first = false {
		_, ok, err := p.member(first)
		if err != nil || !ok {
			return err
		}
		if err := p.skip(); err != nil {
			return err
		}
	}
}

// skipElements skips the elements of an array after its "[", and the
// "]".
func (p *jsonList) skipElements() error {
	p.space()
	if p.peek() == ']' {
		p.pos++
		return nil
	}
	for {
		p.space()
		if err := p.skip(); err != nil {
			return err
		}
		p.space()
		switch p.peek() {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return nil
		default:
			return p.errorf("want ',' or ']' after an element, found %s", p.found())
		}
	}
}

// literal reads text when it is at pos, and tells whether it was.
func (p *jsonList) literal(text string) bool {
	if strings.HasPrefix(p.text[p.pos:], text) {
		p.pos += len(text)
		return true
	}
	return false
}

// skipString reads a string, and tells whether there was one.
func (p *jsonList) skipString() bool {
	if p.peek() != '"' {
		return false
	}
	_, err := p.string()
	return err == nil
}

// null reads a null, and tells whether there was one.
func (p *jsonList) null() bool {
	return p.literal("null")
}

// string reads a string from its opening quote. One of printable ASCII
// without escapes, as zfs prints nearly all, is a substring of the text,
// found in one pass over a table: the strings are short, and most of the
// walk.
func (p *jsonList) string() (string, error) {
	start := p.pos + 1
	for i := start; i < len(p.text); i++ {
		if c := p.text[i]; !plainASCII[c] {
			if c != '"' {
				break
			}
			p.pos = i + 1
			return p.text[start:i], nil
		}
	}
	return p.unquote(start)
}

// plainASCII is the bytes that stand for themselves in a JSON string
// that needs no unquoting: printable ASCII but the quote and backslash.
var plainASCII = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// unquote reads a string from after its opening quote at start, when it
// has escapes or bytes that are not ASCII: encoding/json unquotes it, and
// replaces bytes that are not UTF-8, as it would.
func (p *jsonList) unquote(start int) (string, error) {
	for i := start; i < len(p.text); i++ {
		switch c := p.text[i]; {
		case c == '"':
			s := p.text[start:i]
			if utf8.ValidString(s) && !strings.Contains(s, `\`) {
				p.pos = i + 1
				return s, nil
			}
			if err := json.Unmarshal([]byte(p.text[start-1:i+1]), &s); err != nil {
				return "", p.errorf("a string that is not JSON: %v", err)
			}
			p.pos = i + 1
			return s, nil
		case c == '\\':
			i++ // the escaped byte, which may be a quote
		case c < ' ':
			p.pos = i
			return "", p.errorf("a control character in a string: %q", c)
		}
	}
	p.pos = len(p.text)
	return "", p.errorf("the end of the output in a string")
}

// number reads a number, which must follow JSON's grammar, as printed.
func (p *jsonList) number() (string, error) {
	start := p.pos
	if p.peek() == '-' {
		p.pos++
	}
	switch c := p.peek(); {
	case c == '0':
		p.pos++
	case '1' <= c && c <= '9':
		p.digits()
	default:
		return "", p.errorf("want a digit in a number, found %s", p.found())
	}
	if p.peek() == '.' {
		p.pos++
		if !p.digits() {
			return "", p.errorf("want a digit after a decimal point, found %s", p.found())
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.pos++
		if c := p.peek(); c == '+' || c == '-' {
			p.pos++
		}
		if !p.digits() {
			return "", p.errorf("want a digit in an exponent, found %s", p.found())
		}
	}
	return p.text[start:p.pos], nil
}

// digits skips decimal digits and tells whether there was one.
func (p *jsonList) digits() bool {
	start := p.pos
	for p.pos < len(p.text) && '0' <= p.text[p.pos] && p.text[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > start
}

// space skips white space, of which zfs prints none.
func (p *jsonList) space() {
	if p.pos < len(p.text) && p.text[p.pos] > ' ' {
		return
	}
	for p.pos < len(p.text) {
		switch p.text[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the byte at pos, or 0 at the end.
func (p *jsonList) peek() byte {
	if p.pos < len(p.text) {
		return p.text[p.pos]
	}
	return 0
}

// found says what is at pos, for errors: the end, or a few bytes.
func (p *jsonList) found() string {
	rest := p.text[p.pos:]
	switch {
	case rest == "":
		return "the end of the output"
	case len(rest) > 16:
		rest = rest[:16] + "..."
	}
	return fmt.Sprintf("%q", rest)
}

// errorf returns a parse error that says where the walk is: the line and
// the byte (zfs prints its JSON on one line), and the dataset and property
// it is in.
func (p *jsonList) errorf(format string, args ...any) error {
	where := fmt.Sprintf("at byte %d", p.pos)
	if p.dataset != "" {
		where += fmt.Sprintf(", dataset %q", p.dataset)
	}
	if p.property != "" {
		where += fmt.Sprintf(", property %q", p.property)
	}
	return parse.Errorf(p.lineAt(p.pos), "%s: %s", where, fmt.Sprintf(format, args...))
}

// lineAt is the number of the line of the byte at offset, from 1.
func (p *jsonList) lineAt(offset int) int {
	return 1 + strings.Count(p.text[:min(offset, len(p.text))], "\n")
}
