package render

import (
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"strconv"
)

// fieldStyle is how one field (a series or a table column) is shown:
// the panel's defaults with the overrides that match the field.
type fieldStyle struct {
	unit        string
	displayName string
	mappings    []Mapping
	thresholds  *Thresholds
	cell        string
	min, max    *float64
}

// style returns the style of the field named field.
func (p *Panel) style(field string) fieldStyle {
	d := p.FieldConfig.Defaults
	s := fieldStyle{unit: d.Unit, displayName: d.DisplayName, mappings: d.Mappings, thresholds: d.Thresholds, min: d.Min, max: d.Max}
	if d.Custom.CellOptions != nil {
		s.cell = d.Custom.CellOptions.Type
	}
	for _, o := range p.FieldConfig.Overrides {
		if name, _ := o.Matcher.Options.(string); o.Matcher.ID != "byName" || name != field {
			continue
		}
		for _, prop := range o.Properties {
			s.apply(prop.ID, prop.Value)
		}
	}
	return s
}

// apply sets one override property; properties the renderer does not
// draw and malformed values are ignored, as Grafana ignores them.
func (s *fieldStyle) apply(id string, value json.RawMessage) {
	switch id {
	case "unit":
		_ = json.Unmarshal(value, &s.unit)
	case "displayName":
		_ = json.Unmarshal(value, &s.displayName)
	case "mappings":
		_ = json.Unmarshal(value, &s.mappings)
	case "thresholds":
		var t Thresholds
		if json.Unmarshal(value, &t) == nil {
			s.thresholds = &t
		}
	case "custom.cellOptions":
		var c CellOptions
		if json.Unmarshal(value, &c) == nil {
			s.cell = c.Type
		}
	case "min", "max":
		var f float64
		if json.Unmarshal(value, &f) == nil {
			if id == "min" {
				s.min = &f
			} else {
				s.max = &f
			}
		}
	}
}

// value is a cell or sample: a number, or a label's text.
type value struct {
	num     float64
	str     string
	isNum   bool
	present bool
}

func numValue(f float64) value { return value{num: f, isNum: true, present: true} }
func textValue(s string) value { return value{str: s, present: true} }
func (v value) key() string {
	if v.isNum {
		return strconv.FormatFloat(v.num, 'f', -1, 64)
	}
	return v.str
}

// display returns the text of v and its colour name ("" for none): a
// matching value mapping wins over the unit and the thresholds.
func (s fieldStyle) display(v value) (text, color string) {
	if !v.present {
		return "", ""
	}
	text = v.str
	if v.isNum {
		text = formatValue(s.unit, v.num)
	}
	if r, ok := mapValue(s.mappings, v, text); ok {
		if r.Text != nil {
			text = *r.Text
		}
		color = r.Color
	}
	if color == "" && v.isNum {
		color = thresholdColor(s.thresholds, v.num)
	}
	return text, color
}

type mappingResult struct {
	Text  *string
	Color string
}

// mapValue finds the first mapping that matches v.
func mapValue(maps []Mapping, v value, text string) (mappingResult, bool) {
	for _, m := range maps {
		if r, ok := m.match(v, text); ok {
			return r, true
		}
	}
	return mappingResult{}, false
}

func (m Mapping) match(v value, text string) (mappingResult, bool) {
	switch m.Type {
	case "value":
		var opts map[string]mappingResult
		if json.Unmarshal(m.Options, &opts) != nil {
			return mappingResult{}, false
		}
		r, ok := opts[v.key()]
		return r, ok
	case "range":
		var o struct {
			From, To *float64
			Result   mappingResult
		}
		if json.Unmarshal(m.Options, &o) != nil || !v.isNum || math.IsNaN(v.num) {
			return mappingResult{}, false
		}
		return o.Result, (o.From == nil || v.num >= *o.From) && (o.To == nil || v.num <= *o.To)
	case "special":
		var o struct {
			Match  string
			Result mappingResult
		}
		if json.Unmarshal(m.Options, &o) != nil {
			return mappingResult{}, false
		}
		nan := v.isNum && math.IsNaN(v.num)
		switch o.Match {
		case "nan", "null+nan":
			return o.Result, nan
		case "empty":
			return o.Result, !v.isNum && v.str == ""
		}
	case "regex":
		var o struct {
			Pattern string
			Result  mappingResult
		}
		if json.Unmarshal(m.Options, &o) != nil {
			return mappingResult{}, false
		}
		re, err := regexp.Compile(o.Pattern)
		if err != nil || !re.MatchString(text) {
			return mappingResult{}, false
		}
		if o.Result.Text != nil {
			t := re.ReplaceAllString(text, *o.Result.Text)
			o.Result.Text = &t
		}
		return o.Result, true
	}
	return mappingResult{}, false
}

// thresholdColor is the colour of the highest step v reaches. Steps are
// read as absolute values: the dashboards have no percentage steps.
func thresholdColor(t *Thresholds, v float64) string {
	if t == nil || len(t.Steps) == 0 || math.IsNaN(v) {
		return ""
	}
	steps := append(t.Steps[:0:0], t.Steps...)
	sort.SliceStable(steps, func(i, j int) bool {
		return steps[i].Value == nil && steps[j].Value != nil ||
			steps[i].Value != nil && steps[j].Value != nil && *steps[i].Value < *steps[j].Value
	})
	color := steps[0].Color
	for _, s := range steps {
		if s.Value == nil || v >= *s.Value {
			color = s.Color
		}
	}
	return color
}
