package cloudapi

import (
	"encoding/json"
)

// jsonFrame is one open object or array while scanning JSON.
type jsonFrame struct {
	object       bool
	sensitive    bool // inside the value of a sensitive key
	expectKey    bool // the next string in this object is a key
	keySensitive bool // the current key is sensitive
}

// json redacts every string value under a sensitive key, at any depth,
// copying everything else byte for byte. It scans tokens rather than
// decoding, so truncated or slightly invalid JSON is redacted as far as it
// goes instead of being rejected.
func (r *redactor) json(in []byte) []byte {
	out := make([]byte, 0, len(in))
	var stack []jsonFrame
	top := func() *jsonFrame {
		if len(stack) == 0 {
			return nil
		}
		return &stack[len(stack)-1]
	}
	valueSensitive := func() bool {
		f := top()
		return f != nil && (f.sensitive || (f.object && f.keySensitive))
	}
	for i := 0; i < len(in); {
		c := in[i]
		switch c {
		case '{', '[':
			stack = append(stack, jsonFrame{object: c == '{', sensitive: valueSensitive(), expectKey: c == '{'})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if f := top(); f != nil && f.object {
				f.expectKey, f.keySensitive = true, false
			}
		case '"':
			end := endOfString(in, i)
			literal := in[i:end]
			switch f := top(); {
			case f != nil && f.object && f.expectKey:
				f.expectKey = false
				f.keySensitive = r.sensitive(jsonKey(literal))
				out = append(out, literal...)
			case valueSensitive():
				out = append(out, '"')
				out = append(out, Redacted...)
				out = append(out, '"')
			default:
				out = append(out, literal...)
			}
			i = end
			continue
		}
		out = append(out, c)
		i++
	}
	return out
}

// endOfString returns the index just past the string literal starting at
// in[start] == '"', or len(in) if it is unterminated.
func endOfString(in []byte, start int) int {
	for i := start + 1; i < len(in); i++ {
		switch in[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(in)
}

// jsonKey decodes a key literal, escapes included; an unterminated or
// invalid one is returned without its quotes.
func jsonKey(literal []byte) string {
	var key string
	if err := json.Unmarshal(literal, &key); err == nil {
		return key
	}
	s := string(literal[1:])
	if n := len(s); n > 0 && s[n-1] == '"' {
		s = s[:n-1]
	}
	return s
}
