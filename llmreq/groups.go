package llmreq

// Groups (see the package doc): the texts of one content list, and the content texts of a run of
// consecutive messages of one role, which providers and chat templates merge into one turn.

// groupText visits a text part's text member as part of the current group.
func (w *walker) groupText(k, v int, role string) {
	w.inText = true
	w.at(k, v, role, w.all)
	w.inText = false
}

// beginGroup starts the group of a content list; endGroup ends it, and takes the group back when
// fewer than two texts joined it.
func (w *walker) beginGroup() (g [3]int) {
	w.groups++
	g = [3]int{w.group, w.groups, len(w.texts)}
	w.group = w.groups
	return g
}

func (w *walker) endGroup(g [3]int) {
	w.group = g[0]
	in, last := 0, -1
	for i := g[2]; i < len(w.texts); i++ {
		if int(w.texts[i].Group) == g[1] {
			in, last = in+1, i
		}
	}
	if in == 1 {
		w.texts[last].Group = 0
	}
}

// runStep starts, for a message of a list whose role is role ("": an element that is no
// message), the run it belongs to: the run of the message before it when the role is the same,
// else a new one. The content texts of a run share its group.
func (w *walker) runStep(role string) {
	joins := w.runOn && role != "" && role == w.runRole
	if !w.stepped {
		w.stepped, w.joined, w.stepRole = true, joins, role
		if w.afterSkip != "" && role == w.afterSkip {
			w.misread = true // a whole walk joins this message to the run a range left unread
		}
	}
	if joins {
		w.group = w.runG[1]
		return
	}
	w.runEnd()
	if role != "" {
		w.runG, w.runRole, w.runOn = w.beginGroup(), role, true
	}
}

// runEnd ends the current run, if any; a list of messages ends with it.
func (w *walker) runEnd() {
	if w.runOn {
		w.runOn = false
		w.endGroup(w.runG)
	}
}

// inRun reports whether a message's own content is being visited inside a run (not a content
// list nested in it, such as a tool result's, which is a group of its own).
func (w *walker) inRun() bool { return w.runOn && w.group == w.runG[1] }

// beginContent starts the group of a message's content list, which is the run's inside a run;
// endContent ends it.
func (w *walker) beginContent() [3]int {
	if w.inRun() {
		return [3]int{-1}
	}
	return w.beginGroup()
}

func (w *walker) endContent(g [3]int) {
	if g[0] >= 0 {
		w.endGroup(g)
	}
}

// runText visits a message's content that is no list (a string: one part) as a text of the run.
func (w *walker) runText(c int, role string) {
	if w.kind(c) == kindString && w.inRun() {
		w.inText = true
		w.all(c, role)
		w.inText = false
		return
	}
	w.all(c, role)
}
