package conformance

// SetEagerWants sets whether every step asks the model for its canonical
// outcome before the device performs it (eagerWants), and returns a func
// that puts it back.
func SetEagerWants(on bool) (restore func()) {
	old := eagerWants
	eagerWants = on
	return func() { eagerWants = old }
}
