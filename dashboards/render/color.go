package render

import "strings"

// Theme holds the colours of the picture.
type Theme struct {
	Name       string
	Background string
	Panel      string
	Border     string
	Text       string
	Secondary  string
	Grid       string
	Error      string
}

// Dark and Light follow Grafana's two themes.
var (
	Dark = Theme{
		Name:       "dark",
		Background: "#111217",
		Panel:      "#181b1f",
		Border:     "#2c3235",
		Text:       "#ccccdc",
		Secondary:  "#8e8e99",
		Grid:       "#2a2d33",
		Error:      "#f2495c",
	}
	Light = Theme{
		Name:       "light",
		Background: "#f4f5f5",
		Panel:      "#ffffff",
		Border:     "#d8d9dc",
		Text:       "#24292e",
		Secondary:  "#6e7177",
		Grid:       "#e4e5e7",
		Error:      "#d10e5c",
	}
)

// ThemeByName returns Dark or Light.
func ThemeByName(name string) (Theme, bool) {
	switch name {
	case "dark":
		return Dark, true
	case "light":
		return Light, true
	}
	return Theme{}, false
}

// namedColors are Grafana's colour names as the dashboards use them.
var namedColors = map[string]string{
	"green":             "#73bf69",
	"dark-green":        "#37872d",
	"semi-dark-green":   "#56a64b",
	"red":               "#f2495c",
	"dark-red":          "#c4162a",
	"semi-dark-red":     "#e02f44",
	"orange":            "#ff9830",
	"dark-orange":       "#fa6400",
	"yellow":            "#fade2a",
	"dark-yellow":       "#e0b400",
	"blue":              "#5794f2",
	"dark-blue":         "#1f60c4",
	"purple":            "#b877d9",
	"dark-purple":       "#8f3bb8",
	"super-light-green": "#c8f2c2",
	"transparent":       "none",
}

// color resolves a Grafana colour name or a CSS colour; "text" is the
// theme's text colour.
func (t Theme) color(name string) string {
	if name == "text" || name == "" {
		return t.Text
	}
	if c, ok := namedColors[strings.ToLower(name)]; ok {
		return c
	}
	if strings.HasPrefix(name, "#") || strings.HasPrefix(name, "rgb") {
		return name
	}
	return t.Secondary
}

// palette is Grafana's classic series palette, used in series order.
var palette = []string{
	"#7eb26d", "#eab839", "#6ed0e0", "#ef843c", "#e24d42", "#1f78c1",
	"#ba43a9", "#705da0", "#508642", "#cca300", "#447ebc", "#c15c17",
	"#890f02", "#0a437c", "#6d1f62", "#584477", "#b7dbab", "#f4d598",
	"#70dbed", "#f9ba8f", "#f29191", "#82b5d8", "#e5a8e2", "#aea2e0",
}

func seriesColor(i int) string { return palette[i%len(palette)] }
