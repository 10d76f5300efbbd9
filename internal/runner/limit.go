package runner

import "context"

type (
	outputLimitKey    struct{}
	outputSizeHintKey struct{}
)

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

// WithOutputSizeHint returns a context under which Exec.Run expects a
// command to print about n bytes on stdout, as it did last time: the
// buffer that takes them is made that large at once, rather than grown
// and copied, as a listing of 10,000 datasets (20 MB of JSON) would be
// two dozen times.
func WithOutputSizeHint(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, outputSizeHintKey{}, n)
}

// outputSizeHint is the expected size of stdout under ctx, at most limit;
// 0 when nothing is expected.
func outputSizeHint(ctx context.Context, limit int) int {
	n, _ := ctx.Value(outputSizeHintKey{}).(int)
	return max(0, min(n, limit))
}
