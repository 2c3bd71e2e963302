package model

import (
	"fmt"
	"strings"
	"testing"
)

// TestPostTextIsTheFormattedText checks Post's and WR's appended text
// against the formatted text they replaced, on WRs with and without SGEs,
// with num_sge that disagrees, keys of either sign and wr_ids past 2^32.
func TestPostTextIsTheFormattedText(t *testing.T) {
	formatted := func(w WR) string {
		parts := make([]string, len(w.SGEs))
		for i, s := range w.SGEs {
			parts[i] = fmt.Sprintf("%d@key%d", s.Length, s.Key)
		}
		ns := ""
		if w.NumSGE != len(w.SGEs) {
			ns = fmt.Sprintf(" num_sge=%d", w.NumSGE)
		}
		return fmt.Sprintf("wr%s%s{%s}", WRIDText(w.ID), ns, strings.Join(parts, " "))
	}
	wrs := []WR{
		{ID: 7},
		{ID: 1 << 40, NumSGE: -3, SGEs: []SGE{{Length: 0, Key: -1}}},
		{ID: 12, NumSGE: 2, SGEs: []SGE{{Length: 64, Key: 0}, {Length: 1 << 31, Key: 1}}},
		{ID: ^uint64(0), NumSGE: 5, SGEs: []SGE{{Length: 4096, Key: 3}}},
	}
	var parts []string
	for _, w := range wrs {
		if got, want := w.String(), formatted(w); got != want {
			t.Errorf("WR.String() = %q, want %q", got, want)
		}
		parts = append(parts, formatted(w))
	}
	want := "post_srq_recv [" + strings.Join(parts, ", ") + "]"
	if got := (Post{WRs: wrs}).String(); got != want {
		t.Errorf("Post.String() = %q, want %q", got, want)
	}
	if got := (Post{}).String(); got != "post_srq_recv []" {
		t.Errorf("empty Post.String() = %q, want %q", got, "post_srq_recv []")
	}
}
