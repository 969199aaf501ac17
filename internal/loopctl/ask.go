package loopctl

import "errors"

// request is the task Ask sends through the door: Control recognises it
// and answers it at once, rather than queueing it.
type request struct{ answer any }

// Run is never called: Control answers a request at once.
func (r *request) Run() {}

// Answer is package engine's side of Ask: if t is Ask's request, it
// answers it with v and reports true.
func Answer(t Task, v any) bool {
	r, ok := t.t.(*request)
	if ok {
		r.answer = v
	}
	return ok
}

// Ask asks loop l, through the door, for its inside: package loopapi's
// Open says what it is. This package keeps to a bare value, so that its
// importers (package tasks) do not import the driver contract.
func Ask(l Loop) (any, error) {
	r := &request{}
	if err := l.Control(Task{r}); err != nil {
		return nil, err
	}
	if r.answer == nil {
		return nil, errNoAnswer
	}
	return r.answer, nil
}

var errNoAnswer = errors.New("loopctl: the loop did not answer (not a ringloop engine.Loop)")
