package perfstat

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	out := []byte(`# started on Sun Nov 29 19:00:00 2026

<not supported>,,instructions:u,0,100.00,,
<not counted>,,cycles,0,0.00,,
66.85,msec,task-clock,66850000,100.00,0.935,CPUs utilized
3,,context-switches,66850000,100.00,44.877,/sec
short,line
`)
	want := []Reading{
		{Event: "instructions:u", Raw: "<not supported>"},
		{Event: "cycles", Raw: "<not counted>"},
		{Event: "task-clock", Unit: "msec", Raw: "66.85", Value: 66.85, Counted: true},
		{Event: "context-switches", Raw: "3", Value: 3, Counted: true},
	}
	if got := Parse(out); !reflect.DeepEqual(got, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", got, want)
	}
}
