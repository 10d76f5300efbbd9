package runner

import "testing"

// A hinted buffer takes the output in the room made for it, without a
// copy; what Bytes returns cannot be appended to over the buffer.
func TestLimitedBufferHint(t *testing.T) {
	b := newLimitedBuffer(1<<20, false)
	b.grow(Command{SizeHint: 8192}.outputSizeHint(1 << 20))
	room := cap(b.buf)
	if room < 8192 {
		t.Fatalf("room for %d bytes, want 8192", room)
	}
	for range 64 {
		b.Write(make([]byte, 64))
	}
	if cap(b.buf) != room {
		t.Errorf("the buffer grew from %d to %d bytes for 4096 bytes of output", room, cap(b.buf))
	}
	out := b.Bytes()
	_ = append(out, 'x')
	if got := b.buf[:len(out)+1][len(out)]; got == 'x' {
		t.Error("an append to Bytes wrote into the buffer")
	}
	if n := (Command{SizeHint: 1 << 30}.outputSizeHint(1 << 20)); n != 1<<20 {
		t.Errorf("hint %d past the limit", n)
	}
	if n := (Command{}.outputSizeHint(1 << 20)); n != 0 {
		t.Errorf("hint %d without one", n)
	}
}
