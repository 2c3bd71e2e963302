package conformance

// Unpredictable reports whether the trace stopped because the model could
// not predict a step: the operations are not a trace the model accepts in
// that state (a replay file's fault), not a failure of the harness or the
// device. Err then says which step.
func (t Trace) Unpredictable() bool { return t.unpredictable }
