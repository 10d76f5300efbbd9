// Package grafana writes region annotations through Grafana's HTTP API, so
// that a benchmark run shows as a shaded span on every dashboard that shows
// annotations with its tags.
package grafana

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Annotation is a region: Time to TimeEnd.
type Annotation struct {
	Time, TimeEnd time.Time
	Tags          []string
	Text          string
	// DashboardUID limits the annotation to one dashboard; without it,
	// the annotation belongs to the organisation and dashboards find it by
	// its tags.
	DashboardUID string
}

// request is the body of POST /api/annotations; times are Unix
// milliseconds.
type request struct {
	DashboardUID string   `json:"dashboardUID,omitempty"`
	Time         int64    `json:"time"`
	TimeEnd      int64    `json:"timeEnd"`
	Tags         []string `json:"tags"`
	Text         string   `json:"text"`
}

// Client posts annotations to one Grafana.
type Client struct {
	URL   string // Grafana's root URL, e.g. https://grafana.example.com/ or http://host:3000/grafana
	Token string // a service account token, sent as a bearer token
	HTTP  *http.Client
}

// Create posts a and returns the ID Grafana gave it.
func (c *Client) Create(ctx context.Context, a Annotation) (int64, error) {
	if !a.TimeEnd.After(a.Time) {
		return 0, fmt.Errorf("annotation ends (%v) before it starts (%v)", a.TimeEnd, a.Time)
	}
	base, err := url.Parse(strings.TrimSuffix(c.URL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return 0, fmt.Errorf("grafana URL %q is not an http(s) URL like http://localhost:3000", c.URL)
	}
	target := base.JoinPath("api", "annotations")
	body, err := json.Marshal(request{DashboardUID: a.DashboardUID, Time: a.Time.UnixMilli(), TimeEnd: a.TimeEnd.UnixMilli(),
		Tags: a.Tags, Text: a.Text})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach Grafana: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var answer struct {
		ID      int64  `json:"id"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &answer)
	if resp.StatusCode != http.StatusOK {
		why := answer.Message
		if why == "" {
			why = strings.TrimSpace(string(data))
		}
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = " (the token needs the annotations:create permission, e.g. an Editor service account)"
		}
		return 0, fmt.Errorf("POST %s: %s: %s%s", target.Redacted(), resp.Status, why, hint)
	}
	return answer.ID, nil
}
