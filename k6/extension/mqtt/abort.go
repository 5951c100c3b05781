package mqtt

import (
	"github.com/grafana/sobek"
	"go.k6.io/k6/errext"
)

// abortTest stops the whole test for a mistake in the script: invalid
// options to a constructor or a method. A plain exception in an iteration
// is only logged by k6 (in an async function it becomes a rejected
// promise), and the run would go on, and exit 0, without the load it was
// written to make. This is what exec.test.abort() does: the runtime is
// interrupted at its next instruction, which no try/catch can stop, and k6
// exits with code 108 (ScriptAborted). The caller returns at once, with a
// value nothing will use.
func abortTest(rt *sobek.Runtime, err error) {
	rt.Interrupt(&errext.InterruptError{Reason: errext.AbortTest + ": " + err.Error()})
}

// abortWithPromise is abortTest for a method that returns a promise: it is
// rejected already and registered with no event loop, so nothing waits
// for it while the test stops.
func abortWithPromise(rt *sobek.Runtime, err error) *sobek.Promise {
	abortTest(rt, err)
	p, _, reject := rt.NewPromise()
	_ = reject(err)
	return p
}
