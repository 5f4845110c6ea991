package patch

import (
	"fmt"
	"strings"
)

// unquoteGit reads a C-quoted name the way git's unquote_c_style does: only
// \a \b \t \n \v \f \r \" \\ and three-digit octal escapes. s starts with the
// opening quote; the result is the name and the bytes consumed. Go's
// strconv.Unquote also takes \x, \u and \U, which git would not read the same,
// so a name using them is refused rather than guessed at.
func unquoteGit(s string) (string, int, error) {
	if len(s) == 0 || s[0] != '"' {
		return "", 0, fmt.Errorf("not a quoted name")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			i++
			if i >= len(s) {
				return "", 0, fmt.Errorf("unterminated escape")
			}
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(e)
			case '0', '1', '2', '3':
				if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
					return "", 0, fmt.Errorf("bad octal escape")
				}
				b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
				i += 2
			default:
				return "", 0, fmt.Errorf(`escape \%c is not one git reads`, e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated quoted name")
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
