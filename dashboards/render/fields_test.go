package render

import (
	"encoding/json"
	"testing"
)

func TestFieldDisplay(t *testing.T) {
	var p Panel
	err := json.Unmarshal([]byte(`{
		"fieldConfig": {
			"defaults": {
				"unit": "percentunit",
				"thresholds": {"mode": "absolute", "steps": [{"value": 0.9, "color": "red"}, {"value": null, "color": "green"}, {"value": 0.8, "color": "orange"}]},
				"mappings": [
					{"type": "value", "options": {"2": {"text": "two", "color": "purple"}}},
					{"type": "range", "options": {"from": 5, "to": 10, "result": {"text": "many"}}},
					{"type": "special", "options": {"match": "nan", "result": {"text": "n/a", "color": "blue"}}},
					{"type": "regex", "options": {"pattern": "^(\\w+)-x$", "result": {"text": "$1!"}}}
				]
			},
			"overrides": [{"matcher": {"id": "byName", "options": "state"}, "properties": [
				{"id": "unit", "value": "bytes"},
				{"id": "displayName", "value": "State"},
				{"id": "custom.cellOptions", "value": {"type": "color-text"}}
			]}]
		}
	}`), &p)
	if err != nil {
		t.Fatal(err)
	}
	def := p.style("anything")
	for _, c := range []struct {
		v           value
		text, color string
	}{
		{numValue(0.5), "50%", "green"},
		{numValue(0.85), "85%", "orange"},
		{numValue(0.95), "95%", "red"},
		{numValue(2), "two", "purple"},
		{numValue(7), "many", "red"},
		{numValue(nanValue()), "n/a", "blue"},
		{textValue("tank-x"), "tank!", ""},
		{textValue("tank"), "tank", ""},
		{value{}, "", ""},
	} {
		text, color := def.display(c.v)
		if text != c.text || color != c.color {
			t.Errorf("%+v: %q in %q, want %q in %q", c.v, text, color, c.text, c.color)
		}
	}
	s := p.style("state")
	if s.unit != "bytes" || s.displayName != "State" || s.cell != "color-text" {
		t.Errorf("override not applied: %+v", s)
	}
}

func nanValue() float64 {
	v := 0.0
	return v / v
}
