// Package safetext makes text a candidate wrote safe to show on a terminal:
// a gate's output, a hypothesis, anything an agent may have pushed. Control
// characters (C0, DEL, C1, and bytes that are not UTF-8, which a terminal in
// eight-bit mode reads as C1) become visible escapes, so cursor movement,
// erasing and concealing sequences cannot make a view say something the
// ledger does not: what is shown is what was recorded.
package safetext

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Line escapes every control character in s, tab and newline included: for
// one-line fields (summaries, notes, names).
func Line(s string) string { return escape(s, false) }

// Log escapes every control character in s but tab and newline: for logs
// and multi-line details, whose layout is worth keeping.
func Log(s string) string { return escape(s, true) }

func escape(s string, keepLayout bool) string {
	if !needs(s, keepLayout) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLayout && (r == '\t' || r == '\n'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needs reports whether s holds anything escape would change.
func needs(s string, keepLayout bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return true
		case keepLayout && (r == '\t' || r == '\n'):
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return true
		}
		i += size
	}
	return false
}

// Strings escapes, as Log does, every string reachable from v (a pointer):
// struct fields, slice, array and map elements, through pointers. A record
// is escaped whole before it is stored, so a field added later cannot be
// forgotten.
func Strings(v any) { walk(reflect.ValueOf(v)) }

func walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem())
		}
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); needs(s, true) {
				v.SetString(Log(s))
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walk(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walk(v.Index(i))
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			// Map elements are not addressable: escape a copy and store it.
			e := reflect.New(iter.Value().Type()).Elem()
			e.Set(iter.Value())
			walk(e)
			v.SetMapIndex(iter.Key(), e)
		}
	}
}
