package runner

import "context"

type outputLimitKey struct{}

// WithOutputLimit returns a context under which Exec.Run lets a command
// write up to n bytes on stdout, when n is more than the Exec's own limit.
// A caller that knows its command prints much (the status of a pool of
// many thousands of vdevs) raises the limit for those runs alone. A run
// shared by several callers takes the limit of the one that started it.
func WithOutputLimit(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, outputLimitKey{}, n)
}

// outputLimit is the stdout limit of a run under ctx, at least def.
func outputLimit(ctx context.Context, def int) int {
	if n, ok := ctx.Value(outputLimitKey{}).(int); ok && n > def {
		return n
	}
	return def
}
