package benchwindow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
)

// Path is where the API lives. Under it:
//
//	GET  /api/v1/benchmark/windows           {"windows": [window...]}, newest first
//	POST /api/v1/benchmark/windows           {"name": ..., "pool": ..., "command": ...} starts one: 201, the window
//	GET  /api/v1/benchmark/windows/{id}      the window
//	POST /api/v1/benchmark/windows/{id}/end  ends it: 200, the window
//
// A window is {"id", "name", "pool", "command", "start", "end", "active",
// "duration_seconds"}, times in RFC 3339 (UTC), "end" null while running.
// Errors are {"error": "..."} with 400 (bad JSON, missing or over-long
// name), 403 (a cross-origin request), 404 (unknown window), 405 (wrong
// method), 409 (already ended), 413 (body over 64 KiB) or 415 (a body that
// is not sent as application/json).
//
// A web page the operator has open must not be able to write windows
// through the operator's browser, which sends the basic authentication it
// knows along. So a POST from another origin (by Sec-Fetch-Site or Origin,
// as http.CrossOriginProtection tells) is refused, and so is a body of any
// type but application/json: the form types are those a page can send
// without a CORS preflight, which this API never grants. Clients outside a
// browser (zpool_bench, curl) send no Origin and pass.
const Path = "/api/v1/benchmark/windows"

// maxBody bounds a request body.
const maxBody = 64 << 10

// StartRequest is the body of a POST to Path.
type StartRequest struct {
	Name    string `json:"name"`
	Pool    string `json:"pool,omitempty"`
	Command string `json:"command,omitempty"`
}

// ListResponse is the body of a GET of Path.
type ListResponse struct {
	Windows []Window `json:"windows"`
}

// ErrorResponse is the body of every error.
type ErrorResponse struct {
	Error string `json:"error"`
}

// Handler serves the API at Path over store. Mount it at Path and at
// Path+"/"; other paths get a JSON 404.
func Handler(store *Store, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &handler{store: store, logger: logger, origin: http.NewCrossOriginProtection()}
}

// NotEnabled answers every request with a JSON 404 saying msg: what a
// client sees when the API is turned off.
func NotEnabled(msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, msg)
	})
}

type handler struct {
	store  *Store
	logger *slog.Logger
	origin *http.CrossOriginProtection
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.origin.Check(r); err != nil {
		writeError(w, http.StatusForbidden, "refused a cross-origin request ("+err.Error()+"): the benchmark window API takes writes from clients that send no Origin, like zpool_bench and curl, and from this exporter's own pages, not from other web sites")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, Path)
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such API path %q; benchmark windows are at %s", r.URL.Path, Path))
		return
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	switch {
	case rest == "" || rest == "/":
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			writeJSON(w, http.StatusOK, ListResponse{Windows: h.store.List()})
		case http.MethodPost:
			h.start(w, r)
		default:
			methodNotAllowed(w, r, "GET, HEAD, POST")
		}
	case len(parts) == 1:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, r, "GET, HEAD")
			return
		}
		win, err := h.store.Get(parts[0])
		if err != nil {
			writeError(w, http.StatusNotFound, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, win)
	case len(parts) == 2 && parts[1] == "end":
		if r.Method != http.MethodPost {
			methodNotAllowed(w, r, "POST")
			return
		}
		if !jsonBody(w, r) {
			return
		}
		win, err := h.store.End(parts[0])
		switch {
		case errors.Is(err, ErrNotFound):
			writeError(w, http.StatusNotFound, err.Error())
		case errors.Is(err, ErrEnded):
			writeError(w, http.StatusConflict, err.Error())
		case err != nil:
			writeError(w, http.StatusInternalServerError, err.Error())
		default:
			h.logger.Info("benchmark window ended", "id", win.ID, "name", win.Name, "pool", win.Pool,
				"duration_seconds", win.DurationSeconds)
			writeJSON(w, http.StatusOK, win)
		}
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such API path %q; see %s, %s/{id} and %s/{id}/end", r.URL.Path, Path, Path, Path))
	}
}

func (h *handler) start(w http.ResponseWriter, r *http.Request) {
	if !jsonBody(w, r) {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", maxBody))
			return
		}
		writeError(w, http.StatusBadRequest, "reading the request body: "+err.Error())
		return
	}
	var req StartRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, `the body must be a JSON object {"name": "...", "pool": "...", "command": "..."}: `+err.Error())
		return
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "the body holds more than one JSON value")
		return
	}
	win, err := h.store.Start(req.Name, req.Pool, req.Command)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	h.logger.Info("benchmark window started", "id", win.ID, "name", win.Name, "pool", win.Pool, "command", win.Command)
	w.Header().Set("Location", Path+"/"+win.ID)
	writeJSON(w, http.StatusCreated, win)
}

// jsonBody answers 415 and returns false unless r's body, if it has one, is
// declared application/json. A POST without a body and without a
// Content-Type (curl -X POST .../end) passes.
func jsonBody(w http.ResponseWriter, r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return true
	}
	const advice = `; send the body as JSON with "Content-Type: application/json" (curl: -H 'Content-Type: application/json')`
	if ct == "" {
		w.Header().Set("Accept-Post", "application/json")
		writeError(w, http.StatusUnsupportedMediaType, "the request has a body but no Content-Type"+advice)
		return false
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		w.Header().Set("Accept-Post", "application/json")
		writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q is not accepted", ct)+advice)
		return false
	}
	return true
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s; use %s", r.Method, r.URL.Path, allow))
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorResponse{Error: msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code = http.StatusInternalServerError
		data, _ = json.Marshal(ErrorResponse{Error: "encoding the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}
