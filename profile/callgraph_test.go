package profile

import "testing"

// TestStacksWithoutFramePointersAreTruncated: stacks that stop at the leaf,
// or reach only [unknown], fail; stacks with a named caller pass; samples
// wholly in the kernel do not vote.
func TestStacksWithoutFramePointersAreTruncated(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stacks    []fakeStack
		truncated bool
	}{
		{"leaf only, as -O2 code gives", []fakeStack{
			{weight: 90, locs: [][]string{{"heavy:7"}}},
			{weight: 10, locs: [][]string{{"heavy:7"}, {"main:20"}}},
		}, true},
		{"leaf then [unknown]", []fakeStack{
			{weight: 80, locs: [][]string{{"add:31"}, {"[unknown]:0"}}},
			{weight: 20, locs: [][]string{{"add:31"}, {"main:20"}}},
		}, true},
		{"frame pointers reach a caller", []fakeStack{
			{weight: 90, locs: [][]string{{"heavy:7"}, {"__libc_start_call_main:0"}}},
			{weight: 10, locs: [][]string{{"heavy:7"}}},
		}, false},
		{"an interrupted leaf still votes by its user frames", []fakeStack{
			{weight: 60, locs: [][]string{{"k.irq:1"}, {"heavy:7"}, {"main:20"}}},
			{weight: 40, locs: [][]string{{"heavy:7"}}},
		}, false},
		{"kernel-only samples do not vote", []fakeStack{
			{weight: 95, locs: [][]string{{"k.clear_page:1"}, {"k.do_fault:2"}}},
			{weight: 5, locs: [][]string{{"heavy:7"}, {"main:20"}}},
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := checkStacks(synthetic(t, tc.stacks))
			if h.truncated() != tc.truncated {
				t.Errorf("truncated = %v (%s named a caller), want %v", h.truncated(), h, tc.truncated)
			}
		})
	}
}

// TestLongWorkloadsBoundTheDWARFRecording: a workload long enough to give
// more than maxDWARFSamples frame-pointer samples is recorded again at a
// lower rate, so its stack copies cannot fill the disk.
func TestLongWorkloadsBoundTheDWARFRecording(t *testing.T) {
	for _, tc := range []struct {
		freq    int
		samples int64
		want    int
	}{
		{1999, 5000, 1999},
		{1999, maxDWARFSamples, 1999},
		{1999, 10 * maxDWARFSamples, 199},
		{99, 1000 * maxDWARFSamples, 1},
	} {
		got := dwarfFrequency(tc.freq, tc.samples)
		if got != tc.want {
			t.Errorf("dwarfFrequency(%d, %d) = %d, want %d", tc.freq, tc.samples, got, tc.want)
		}
		if tc.samples*int64(got)/int64(tc.freq) > maxDWARFSamples && got > 1 {
			t.Errorf("%d Hz over %d samples' time still records more than %d", got, tc.samples, maxDWARFSamples)
		}
	}
}
