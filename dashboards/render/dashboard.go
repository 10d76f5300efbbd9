// Package render draws a Grafana dashboard as one SVG picture from the
// answers of a Prometheus server, without Grafana: panels are laid out on
// Grafana's grid and drawn from their queries, units, thresholds and
// mappings. It reads the classic dashboard JSON that out/dashboards holds.
package render

import (
	"encoding/json"
	"fmt"
)

// Dashboard is the part of Grafana's dashboard JSON the renderer reads.
type Dashboard struct {
	UID         string `json:"uid"`
	Title       string `json:"title"`
	Panels      []Panel
	Templating  struct{ List []Variable }
	Annotations struct{ List []Annotation }
}

// Panel is one panel or row of a dashboard.
type Panel struct {
	Type            string
	Title           string
	GridPos         GridPos `json:"gridPos"`
	Targets         []Target
	FieldConfig     FieldConfig `json:"fieldConfig"`
	Options         PanelOptions
	Transformations []Transformation
	// Collapsed rows carry their panels inside them.
	Collapsed bool
	Panels    []Panel
}

// GridPos places a panel on Grafana's grid of 24 columns.
type GridPos struct{ X, Y, W, H int }

// Target is one query of a panel.
type Target struct {
	RefID        string `json:"refId"`
	Expr         string
	LegendFormat string `json:"legendFormat"`
	Format       string
	Hide         bool
}

// PanelOptions gathers the options of the panel types that are drawn.
type PanelOptions struct {
	Legend *struct {
		ShowLegend bool `json:"showLegend"`
		Calcs      []string
	}
	TextMode  string `json:"textMode"`
	ColorMode string `json:"colorMode"`
	SortBy    []struct {
		DisplayName string `json:"displayName"`
		Desc        bool
	} `json:"sortBy"`
	// YAxis of a heatmap: the unit of its buckets' bounds.
	YAxis *struct{ Unit string } `json:"yAxis"`
}

// Transformation is a table transformation (merge, organize).
type Transformation struct {
	ID      string `json:"id"`
	Options struct {
		ExcludeByName map[string]bool   `json:"excludeByName"`
		IndexByName   map[string]int    `json:"indexByName"`
		RenameByName  map[string]string `json:"renameByName"`
	}
}

// FieldConfig holds a panel's field defaults and per-field overrides.
type FieldConfig struct {
	Defaults  FieldDefaults
	Overrides []Override
}

// FieldDefaults are the display settings of a field.
type FieldDefaults struct {
	Unit        string
	DisplayName string `json:"displayName"`
	Min, Max    *float64
	Thresholds  *Thresholds
	Mappings    []Mapping
	Custom      Custom
}

// Custom holds the panel-type specific field settings.
type Custom struct {
	DrawStyle       string `json:"drawStyle"`
	FillOpacity     *float64
	Stacking        *struct{ Mode string }
	ThresholdsStyle *struct{ Mode string } `json:"thresholdsStyle"`
	CellOptions     *CellOptions           `json:"cellOptions"`
}

// CellOptions says how a table cell is coloured.
type CellOptions struct{ Type string }

// Thresholds colour a value by the last step it reaches.
type Thresholds struct {
	Mode  string
	Steps []struct {
		// Value is nil for the base step.
		Value *float64
		Color string
	}
}

// Mapping turns a value into a text and colour.
type Mapping struct {
	Type    string
	Options json.RawMessage
}

// Override changes field settings for the fields a matcher picks.
type Override struct {
	Matcher struct {
		ID      string `json:"id"`
		Options any
	}
	Properties []struct {
		ID    string `json:"id"`
		Value json.RawMessage
	}
}

// Variable is a templating variable.
type Variable struct {
	Name       string
	Type       string
	Query      any
	AllValue   string `json:"allValue"`
	IncludeAll bool   `json:"includeAll"`
	Current    struct{ Value any }
}

// Annotation is an annotation query drawn over the time series panels.
type Annotation struct {
	Name      string
	Enable    bool
	IconColor string `json:"iconColor"`
	Expr      string
	Step      string
}

// Parse reads a dashboard's JSON.
func Parse(data []byte) (*Dashboard, error) {
	var d Dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("dashboard JSON: %w", err)
	}
	if d.UID == "" {
		return nil, fmt.Errorf("dashboard %q has no uid", d.Title)
	}
	return &d, nil
}
