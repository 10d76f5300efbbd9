package collector

// allDigits tells a non-empty string of ASCII digits: a number in a name
// (sda1, z_wr_int_0, md3) or a field that must be one.
func allDigits(s string) bool {
	for i := range len(s) {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
