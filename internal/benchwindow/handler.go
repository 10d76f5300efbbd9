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
	h := &handler{store: store, logger: logger, origin: http.NewCrossOriginProtection(), mux: http.NewServeMux()}
	// The mux matches the method (a GET pattern takes HEAD too), takes the
	// id out of the path and knows which methods a path has: what the
	// handler once did by splitting the path and listing Allow by hand.
	for _, p := range []string{Path, Path + "/{$}"} {
		h.mux.HandleFunc("GET "+p, h.list)
		h.mux.HandleFunc("POST "+p, h.start)
	}
	h.mux.HandleFunc("GET "+Path+"/{id}", h.get)
	h.mux.HandleFunc("POST "+Path+"/{id}/end", h.end)
	return h
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
	mux    *http.ServeMux
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.origin.Check(r); err != nil {
		writeError(w, http.StatusForbidden, "refused a cross-origin request ("+err.Error()+"): the benchmark window API takes writes from clients that send no Origin, like zpool_bench and curl, and from this exporter's own pages, not from other web sites")
		return
	}
	// No pattern means the mux would answer itself, in plain text: a 404,
	// or a 405 with the Allow header it worked out. The API promises JSON
	// errors, so its answer is caught and said again as one.
	fallback, pattern := h.mux.Handler(r)
	if pattern != "" {
		h.mux.ServeHTTP(w, r)
		return
	}
	caught := &muxAnswer{header: http.Header{}}
	fallback.ServeHTTP(caught, r)
	if allow := caught.header.Get("Allow"); caught.code == http.StatusMethodNotAllowed && allow != "" {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s; use %s", r.Method, r.URL.Path, allow))
		return
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("no such API path %q; see %s, %s/{id} and %s/{id}/end", r.URL.Path, Path, Path, Path))
}

// muxAnswer keeps the status and headers of the mux's own answer and
// drops its plain-text body.
type muxAnswer struct {
	header http.Header
	code   int
}

func (a *muxAnswer) Header() http.Header         { return a.header }
func (a *muxAnswer) WriteHeader(code int)        { a.code = code }
func (a *muxAnswer) Write(p []byte) (int, error) { return len(p), nil }

func (h *handler) list(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, ListResponse{Windows: h.store.List()})
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	win, err := h.store.Get(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, win)
}

func (h *handler) end(w http.ResponseWriter, r *http.Request) {
	if !jsonBody(w, r) {
		return
	}
	win, err := h.store.End(r.PathValue("id"))
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
