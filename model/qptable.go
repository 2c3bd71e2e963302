package model

import (
	"iter"
	"slices"
	"sync/atomic"
)

// qpLeafSize is how many QPs one leaf of a qpTable holds.
const qpLeafSize = 4

// qpTable holds a machine's QPs, indexed by QP number, copy-on-write: a
// clone shares every leaf with the machine it was cloned from, and copies a
// leaf only when it first writes to it. Cloning costs one slice header,
// and a step's writes one copy of the leaf index and one leaf each, where
// copying every QP made replay time grow with the square of the trace
// (issue 20, bug 7).
//
// Both sides of a clone copy before they write: machine.clone takes the
// source's ownership of its leaves too (tok). A table that nothing was
// cloned from since its last write writes its own leaves in place, and
// counts those writes (qpLeaf.ver) for the Views that saw them.
//
// The table also keeps the counts a post and destroy_srq ask for and the
// QPs a poll resets, so that no step reads every QP: set a QP's state,
// gone and repeatOK only through setState, setGone and setRepeat.
type qpTable struct {
	leaves []*qpLeaf
	n      int
	// tok marks the leaves this table may write in place (qpLeaf.owner);
	// 0 until the first write after a clone.
	tok uint64

	attached int   // QPs not destroyed
	unready  int   // QPs not destroyed and not in RTS
	repeats  []int // QPs whose repeatOK is set
}

type qpLeaf struct {
	owner uint64
	// ver counts the writes to the leaf in place, by the table that owns
	// it: what a View computed from it holds while ver does (qpView).
	ver uint64
	q   [qpLeafSize]qp
}

// qpTokens hands out the tokens of tables that write (qpTable.tok).
var qpTokens atomic.Uint64

// clone returns a table that shares t's QPs until either writes.
func (t *qpTable) clone() qpTable {
	n := *t
	n.leaves = clip(t.leaves)
	n.repeats = clip(t.repeats)
	n.tok = 0
	return n
}

// len returns the number of QPs created.
func (t *qpTable) len() int { return t.n }

// at returns QP i, to read.
func (t *qpTable) at(i int) *qp { return &t.leaves[i/qpLeafSize].q[i%qpLeafSize] }

// all iterates over the QPs in order, to read.
func (t *qpTable) all() iter.Seq2[int, *qp] {
	return func(yield func(int, *qp) bool) {
		for i := range t.n {
			if !yield(i, t.at(i)) {
				return
			}
		}
	}
}

// own makes t's leaf index its own, once after a clone.
func (t *qpTable) own() {
	if t.tok == 0 {
		t.tok = qpTokens.Add(1)
		t.leaves = slices.Clone(t.leaves)
	}
}

// mut returns QP i, to write: its leaf is copied first if a clone shares
// it. The pointer is valid until the table is cloned.
func (t *qpTable) mut(i int) *qp {
	t.own()
	k := i / qpLeafSize
	if l := t.leaves[k]; l.owner != t.tok {
		c := *l
		c.owner, c.ver = t.tok, 0
		for j := range c.q {
			// An append to a copied QP's buffer must not reach the
			// buffer the original shares.
			c.q[j].pending = clip(c.q[j].pending)
		}
		t.leaves[k] = &c
	}
	l := t.leaves[k]
	l.ver++
	return &l.q[i%qpLeafSize]
}

// add appends a QP and returns its number.
func (t *qpTable) add(q qp) int {
	t.own()
	if t.n%qpLeafSize == 0 {
		t.leaves = append(t.leaves, &qpLeaf{owner: t.tok})
	}
	i := t.n
	t.n++
	*t.mut(i) = q
	if !q.gone {
		t.attached++
		if q.state != RTS {
			t.unready++
		}
	}
	if q.repeatOK {
		t.repeats = append(t.repeats, i)
	}
	return i
}

// setState moves QP i to s.
func (t *qpTable) setState(i int, s QPState) {
	q := t.mut(i)
	if q.state == s {
		return
	}
	if !q.gone && q.state == RTS {
		t.unready++
	} else if !q.gone && s == RTS {
		t.unready--
	}
	q.state, q.stuck = s, false
}

// setGone marks QP i destroyed.
func (t *qpTable) setGone(i int) {
	q := t.mut(i)
	if q.gone {
		return
	}
	q.gone = true
	t.attached--
	if q.state != RTS {
		t.unready--
	}
}

// setRepeat sets QP i's repeatOK.
func (t *qpTable) setRepeat(i int) {
	q := t.mut(i)
	if !q.repeatOK {
		q.repeatOK = true
		t.repeats = append(t.repeats, i)
	}
}

// clearRepeats resets every QP's repeatOK.
func (t *qpTable) clearRepeats() {
	for _, i := range t.repeats {
		t.mut(i).repeatOK = false
	}
	t.repeats = nil
}
