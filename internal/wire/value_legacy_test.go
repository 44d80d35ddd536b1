package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// legacyValue is the reader a Conn's Value replaced (the loss watch's own, in
// quorum), kept as FuzzConnValue's reference: whatever Value reads, it read the
// same. Value is stricter where it refuses: a length below -1, a bulk string
// not ended by CRLF, a nil attribute, aggregates nested deeper than maxDepth or
// longer than maxArrayLen, lengths that ParseInt does not take.
func legacyValue(rd *bufio.Reader, limit int64) (Value, error) {
	l, err := rd.ReadSlice('\n')
	if err != nil {
		return Value{}, err
	}
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return Value{}, errors.New("a short line")
	}
	typ, body := l[0], string(l[1:len(l)-2])
	v := Value{Type: typ}
	switch typ {
	case '+', '-', ':', ',', '(', '#':
		v.Str = strings.Clone(body)
		return v, nil
	case '_':
		v.Null = true
		return v, nil
	case '$', '!', '=':
		n, err := strconv.ParseInt(body, 10, 64)
		switch {
		case err != nil:
			return v, fmt.Errorf("length %q", body)
		case n < 0:
			v.Null = true
			return v, nil
		case n > limit:
			v.Long = true
			_, err = io.CopyN(io.Discard, rd, n+2)
			return v, err
		}
		b := make([]byte, n+2)
		if _, err = io.ReadFull(rd, b); err != nil {
			return v, err
		}
		v.Str = string(b[:n])
		return v, nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return v, fmt.Errorf("length %q", body)
		}
		if n < 0 {
			v.Null = true
			return v, nil
		}
		if typ == '%' || typ == '|' {
			n *= 2
		}
		for range n {
			e, err := legacyValue(rd, limit)
			if err != nil {
				return v, err
			}
			if typ != '|' {
				v.Elems = append(v.Elems, e)
			}
		}
		if typ == '|' {
			return legacyValue(rd, limit)
		}
		return v, nil
	}
	return v, fmt.Errorf("type %q", typ)
}
