package workspace

import (
	"bytes"
	"encoding"
	"errors"
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/hone-perf/hone/internal/errs"
)

// decode fills cfg from data with go-toml in strict mode, and turns its
// errors into "file:line: key: problem": the decoder gives the position and
// the key; what a key wants comes from Config's own types and what the file
// wrote from pos, so no message of the library is taken apart.
func (p *parser) decode(cfg *Config) error {
	err := toml.NewDecoder(bytes.NewReader(p.data)).DisallowUnknownFields().Decode(cfg)
	if err == nil {
		return nil
	}
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := &strict.Errors[0]
		line, col := e.Position()
		k := p.keyAt(line, col, e.Key())
		// The decoder also skips a known key whose value it cannot store
		// at all (a date for a string).
		if msg, ok := p.wrongType(k, line); ok {
			return lineError(p.file, line, k, msg)
		}
		return errs.Invalidf("%s:%d: unknown key %q; see the hone.toml reference in hone's docs/hone-toml.md", p.file, line, k.String())
	}
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return errs.Invalidf("%s: %v", p.file, err)
	}
	line, col := de.Position()
	k := p.keyAt(line, col, de.Key())
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	if len(k) == 0 {
		return errs.Invalidf("%s:%d: %s", p.file, line, msg)
	}
	if wt, ok := p.wrongType(k, line); ok {
		msg = wt
	}
	// Otherwise the value has the right kind and its own UnmarshalText
	// refused it (a duration that is not one): its message says why.
	return lineError(p.file, line, k, msg)
}

// keyAt is the key whose name or value starts at line and col, where the
// decoder points; reported is the key the decoder names, which inside an
// inline table can lose a part.
func (p *parser) keyAt(line, col int, reported []string) keyPath {
	at := position{line, col}
	for _, kp := range p.pos {
		if kp.at == at || kp.value == at {
			return kp.key
		}
	}
	return keyPath(reported)
}

// wrongType says what key, assigned at line, wants and what the file gave
// it, when the two differ. For an array, the first element of the wrong
// kind is what differs.
func (p *parser) wrongType(key keyPath, line int) (string, bool) {
	t, ok := fieldType(reflect.TypeFor[Config](), key)
	if !ok {
		return "", false
	}
	var at *keyPos
	for i := range p.pos {
		kp := &p.pos[i]
		if kp.key.String() == key.String() && kp.line <= line {
			at = kp
		}
	}
	if at == nil {
		return "", false
	}
	want := kindOf(t)
	if at.kind == kindArray && t.Kind() == reflect.Slice {
		ew := kindOf(t.Elem())
		for _, got := range at.elems {
			if got != ew {
				return "wrong type: want " + ew + ", got " + got, true
			}
		}
	}
	if at.kind == want || want == kindTableArray && at.kind == kindArray {
		return "", false
	}
	return "wrong type: want " + want + ", got " + at.kind, true
}

// fieldType is the Go type key decodes into, from t: a struct's field by
// its toml tag, a map's value, an array of tables' element.
func fieldType(t reflect.Type, key keyPath) (reflect.Type, bool) {
	for _, part := range key {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return nil, false
			}
			t = f.Type
		default:
			return nil, false
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t, true
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("toml"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// kindOf names the kind of TOML value a Go type takes.
func kindOf(t reflect.Type) string {
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return kindString
	}
	switch t.Kind() {
	case reflect.String:
		return kindString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kindInteger
	case reflect.Float32, reflect.Float64:
		return kindFloat
	case reflect.Bool:
		return kindBool
	case reflect.Slice, reflect.Array:
		if e := t.Elem(); e.Kind() == reflect.Struct || e.Kind() == reflect.Pointer && e.Elem().Kind() == reflect.Struct {
			return kindTableArray
		}
		return kindArray
	}
	return kindTable
}
