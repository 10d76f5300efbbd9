package benchwindow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client starts and ends windows through an exporter's API.
type Client struct {
	// BaseURL is the exporter's, e.g. http://localhost:9134; user
	// information in it is sent as basic authentication.
	BaseURL string
	HTTP    *http.Client // http.DefaultClient when nil
}

// Start opens a window and returns it as the exporter stored it.
func (c *Client) Start(ctx context.Context, req StartRequest) (Window, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Window{}, err
	}
	return c.do(ctx, Path, body, http.StatusCreated)
}

// End closes window id.
func (c *Client) End(ctx context.Context, id string) (Window, error) {
	return c.do(ctx, Path+"/"+url.PathEscape(id)+"/end", nil, http.StatusOK)
}

func (c *Client) do(ctx context.Context, path string, body []byte, want int) (Window, error) {
	base, err := url.Parse(strings.TrimSuffix(c.BaseURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return Window{}, fmt.Errorf("exporter URL %q is not an http(s) URL like http://localhost:9134", c.BaseURL)
	}
	target := base.JoinPath(path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return Window{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if u := base.User; u != nil {
		password, _ := u.Password()
		req.SetBasicAuth(u.Username(), password)
	}
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Window{}, fmt.Errorf("cannot reach the exporter's benchmark API: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Window{}, fmt.Errorf("reading the answer of POST %s: %w", target.Redacted(), err)
	}
	if resp.StatusCode != want {
		var e ErrorResponse
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return Window{}, fmt.Errorf("POST %s: %s: %s", target.Redacted(), resp.Status, e.Error)
		}
		return Window{}, fmt.Errorf("POST %s: %s (is this a zpool_exporter?)", target.Redacted(), resp.Status)
	}
	var w Window
	if err := json.Unmarshal(data, &w); err != nil {
		return Window{}, fmt.Errorf("POST %s answered a window that cannot be read: %w", target.Redacted(), err)
	}
	if w.ID == "" {
		return Window{}, errors.New("POST " + target.Redacted() + " answered a window without an id")
	}
	return w, nil
}
