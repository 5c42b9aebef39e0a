package chatbody

// Conversation is a chat resent the way chat clients send one: each
// request is the previous one's messages, then the answer to its last
// question and the next question. The messages are Material's, in order:
// every answer follows its own question.
//
// It starts with ChatSystem and as many turns as make about lo bytes, and
// grows by one question and answer a request. A request that would pass hi
// bytes is sent with its oldest turns dropped (ChatSystem stays) until it
// is at most lo, as a client trims a history that outgrew its context,
// and the conversation grows again from there: the bodies cycle between lo
// and hi, about (lo+hi)/2 on average, and every request's new text is one
// question and one answer.
type Conversation struct {
	m       *Material
	lo, hi  int
	sys     []byte
	msgs    [][]byte // encoded, after sys: from a question to a question
	size    int      // of the body
	next    int      // the next corpus message, an answer
	trims   int
	started bool // the opening request was made
}

// Resent returns a Conversation that starts at the question of pair seed
// (modulo their number) of Material's messages and cycles through them.
func (m *Material) Resent(lo, hi int, seed uint64) *Conversation {
	c := &Conversation{m: m, lo: lo, hi: hi, sys: msg("system", ChatSystem)}
	c.next = int(seed%uint64(len(m.Messages)/2)) * 2
	c.size = bodyOverhead + len(c.sys)
	c.push() // a question
	for c.size < lo {
		c.push()
		c.push()
	}
	return c
}

// push adds the next corpus message.
func (c *Conversation) push() {
	mm := c.m.Messages[c.next]
	e := msg(mm.Role, mm.Content)
	c.msgs = append(c.msgs, e)
	c.size += 1 + len(e)
	c.next = (c.next + 1) % len(c.m.Messages)
}

// Next appends the conversation's next request body to dst[:0] and
// returns it. The first call returns the opening request.
func (c *Conversation) Next(dst []byte) []byte {
	if c.started {
		c.push() // the answer
		c.push() // the next question
		if c.size > c.hi {
			drop, size := 0, c.size
			for size > c.lo && drop+2 < len(c.msgs) {
				size -= 2 + len(c.msgs[drop]) + len(c.msgs[drop+1])
				drop += 2
			}
			c.msgs, c.size = append(c.msgs[:0:0], c.msgs[drop:]...), size
			c.trims++
		}
	}
	c.started = true
	return assemble(dst[:0], append([][]byte{c.sys}, c.msgs...), nil)
}

// Trims returns how many requests so far had their history trimmed.
func (c *Conversation) Trims() int { return c.trims }
