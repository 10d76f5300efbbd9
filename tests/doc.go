// Package tests holds the end-to-end tests whose dependencies are too heavy
// for the exporter's own go.mod: the compose file and deployment configs
// loaded and checked by their real tools, and the exporter's web page in a
// headless browser. It has no code of its own.
package tests
