package model

import "slices"

// qpView is the per-QP part of a View as last computed, with what it was
// computed from: every candidate's QP leaves and QP count. A leaf that no
// candidate has written since (the same pointer with the same count of
// writes in place, qpLeaf.ver) gives the same entries, so View recomputes only
// the QPs of leaves a step wrote. The Views share its arrays, each up to
// the QPs it saw: an entry that changes is written to a copy, and a new QP
// is appended past what the Views saw. A long trace's many quiet QPs so
// cost a View nothing (issue 20, bug 7).
type qpView struct {
	leaves [][]leafRef // per candidate
	lens   []int       // per candidate
	// shared says Views hold the arrays: copy them before changing an
	// entry.
	shared bool

	types                                       []QPType
	states                                      []QPState
	gone, filling, sure, fillingAny, fillingAll []bool
}

// leafRef is a QP leaf as a View saw it: the leaf, and how many writes
// in place it had had (qpLeaf.ver).
type leafRef struct {
	l   *qpLeaf
	ver uint64
}

// qpEntry is one QP's entries.
type qpEntry struct {
	typ                                         QPType
	state                                       QPState
	gone, filling, sure, fillingAny, fillingAll bool
}

// set makes QP i's entries e; i is at most the number of QPs held.
func (w *qpView) set(i int, e qpEntry) {
	if i == len(w.types) {
		w.types, w.states = append(w.types, e.typ), append(w.states, e.state)
		w.gone, w.filling, w.sure = append(w.gone, e.gone), append(w.filling, e.filling), append(w.sure, e.sure)
		w.fillingAny, w.fillingAll = append(w.fillingAny, e.fillingAny), append(w.fillingAll, e.fillingAll)
		return
	}
	old := qpEntry{w.types[i], w.states[i], w.gone[i], w.filling[i], w.sure[i], w.fillingAny[i], w.fillingAll[i]}
	if old == e {
		return
	}
	if w.shared {
		w.types, w.states = slices.Clone(w.types), slices.Clone(w.states)
		w.gone, w.filling, w.sure = slices.Clone(w.gone), slices.Clone(w.filling), slices.Clone(w.sure)
		w.fillingAny, w.fillingAll = slices.Clone(w.fillingAny), slices.Clone(w.fillingAll)
		w.shared = false
	}
	w.types[i], w.states[i] = e.typ, e.state
	w.gone[i], w.filling[i], w.sure[i], w.fillingAny[i], w.fillingAll[i] = e.gone, e.filling, e.sure, e.fillingAny, e.fillingAll
}

// reusable reports whether leaf k's entries, for the QPs up to hi, hold
// for the candidates now: every candidate has the same leaf there as when
// they were computed, and as many of its QPs.
func (w *qpView) reusable(cands []*machine, k, hi int) bool {
	if len(w.leaves) != len(cands) || hi > len(w.types) {
		return false
	}
	for j, o := range cands {
		ls, ols := o.qps.leaves, w.leaves[j]
		if k >= len(ls) || k >= len(ols) || ls[k] != ols[k].l || ls[k].ver != ols[k].ver || min(o.qps.len(), hi) != min(w.lens[j], hi) {
			return false
		}
	}
	return true
}

// record notes the candidates' leaves and QP counts as the entries now
// are, in the arrays of the last record.
func (w *qpView) record(cands []*machine) {
	w.leaves = slices.Grow(w.leaves[:0], len(cands))[:len(cands)]
	w.lens = slices.Grow(w.lens[:0], len(cands))[:len(cands)]
	for j, o := range cands {
		refs := w.leaves[j][:0]
		for _, l := range o.qps.leaves {
			refs = append(refs, leafRef{l, l.ver})
		}
		w.leaves[j], w.lens[j] = refs, o.qps.len()
	}
}

// qpView fills v's per-QP fields, recomputing only the QPs of leaves some
// candidate wrote since the last View.
func (m *Model) qpView(v *View) {
	c := m.cands[0]
	n := c.qps.len()
	w := m.qpv
	if w == nil || n < len(w.types) {
		w = &qpView{} // a first View, or fewer QPs: start afresh
	}
	w.shared = true
	for lo := 0; lo < n; lo += qpLeafSize {
		hi := min(n, lo+qpLeafSize)
		if w.reusable(m.cands, lo/qpLeafSize, hi) {
			continue
		}
		for i := lo; i < hi; i++ {
			q := c.qps.at(i)
			e := qpEntry{typ: q.typ, state: q.state, gone: q.gone, filling: q.owesRest(), sure: true, fillingAll: true}
			for _, o := range m.cands {
				if i >= o.qps.len() {
					continue
				}
				oq := o.qps.at(i)
				f := oq.owesRest()
				e.sure = e.sure && oq.state == q.state
				e.fillingAny, e.fillingAll = e.fillingAny || f, e.fillingAll && f
			}
			w.set(i, e)
		}
	}
	w.record(m.cands)
	m.qpv = w
	if n == 0 {
		return
	}
	// Clipped: an append to a View's slice must not reach the arrays.
	v.QPTypes, v.QPStates = clip(w.types[:n]), clip(w.states[:n])
	v.QPGone, v.Filling, v.QPStateSure = clip(w.gone[:n]), clip(w.filling[:n]), clip(w.sure[:n])
	v.FillingAny, v.FillingAll = clip(w.fillingAny[:n]), clip(w.fillingAll[:n])
}
