package firewall

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/promptwall/promptwall/llmresp"
)

// A response's events: each channel's text through its engine.Stream, and
// the events held until the text in them is final, then forwarded or
// rewritten.

// event takes one framed event.
func (rw *respWriter) event(ev *llmresp.Event) error {
	if rw.done {
		return errDone
	}
	ps, info, err := llmresp.Pieces(rw.api, ev, nil)
	if err != nil {
		rw.refuse(err)
		return errDone
	}
	he := &heldEvent{ev: ev, pieces: ps, refs: make([]pieceRef, len(ps)), seq: info.Seq}
	for i := range ps {
		p := &ps[i]
		ch := rw.chans[p.Channel]
		if p.Whole {
			// A whole text equal to all its channel's deltas ends the channel: nothing
			// will add to it, so its held tail is final.
			if ch != nil && !ch.closed && p.Text != "" && string(ch.fed) == p.Text {
				rw.closeChan(ch)
			}
			continue
		}
		if ch == nil || ch.closed {
			ch = &respChan{name: p.Channel, s: rw.f.engine.NewStream()}
			if rw.chans == nil {
				rw.chans = map[string]*respChan{}
			}
			rw.chans[p.Channel] = ch
		}
		if rw.text += int64(len(p.Text)); rw.text > rw.f.MaxBody {
			rw.refuse(fmt.Errorf("the answer's text is over max_body (%d bytes)", rw.f.MaxBody))
			return errDone
		}
		start := len(ch.fed)
		ch.fed = append(ch.fed, p.Text...)
		ch.s.Write([]byte(p.Text))
		he.refs[i] = pieceRef{ch, start, len(ch.fed)}
		rw.collect(ch)
	}
	if rw.done {
		return errDone
	}
	rw.queue = append(rw.queue, he)
	rw.drain()
	if n := len(rw.queue); n > 0 && rw.queue[n-1] == he {
		he.ev = ev.Clone() // held past this call
	}
	if rw.done {
		return errDone
	}
	return nil
}

// errDone ends the framing of a response once it is answered, and the upstream's copy:
// reverse_proxy logs it ("aborting with incomplete response").
var errDone = errors.New("prompt_firewall: the response was blocked or refused; the rest of the upstream's answer is not read")

func (rw *respWriter) closeChan(ch *respChan) {
	if ch.closed {
		return
	}
	ch.closed = true
	ch.s.Close()
	rw.collect(ch)
}

// collect takes a channel's new final matches and groups, giving each group the strongest
// action of the matches in it, and blocks on a match whose action is block.
func (rw *respWriter) collect(ch *respChan) {
	block := false
	for _, m := range ch.s.Final() {
		rw.saw(&m)
		act := rw.pol.of(&m)
		for ch.cu < m.Start && ch.cb < len(ch.fed) {
			r, n := utf8.DecodeRune(ch.fed[ch.cb:])
			ch.cb += n
			ch.cu++
			if r >= 0x10000 {
				ch.cu++
			}
		}
		ch.starts = append(ch.starts, markStart{ch.cb, act})
		if act >= doLog {
			rw.found = append(rw.found, respMatch{ch.name, m})
		}
		block = block || act == doBlock
	}
	for _, g := range ch.s.Replacements() {
		act := doNothing
		k := 0
		for ; k < len(ch.starts) && ch.starts[k].at < g.End; k++ {
			if ch.starts[k].at >= g.Start {
				act = max(act, ch.starts[k].act)
			}
		}
		ch.starts = ch.starts[k:]
		if act >= doSanitize {
			ch.repl = append(ch.repl, respRepl{g.Start, g.End, "[removed: " + g.Category + "]", act})
		}
	}
	if block {
		rw.block()
	}
}

// drain forwards the held events whose text is final, in order.
func (rw *respWriter) drain() {
	for len(rw.queue) > 0 && !rw.done {
		he := rw.queue[0]
		if rw.pol.hold {
			for _, ref := range he.refs {
				if ref.ch != nil && !ref.ch.closed && ref.ch.s.Released() < ref.end {
					return
				}
			}
		}
		rw.queue = rw.queue[1:]
		rw.forward(he)
	}
}

// forward writes one event, its pieces rewritten where the policy sanitizes.
func (rw *respWriter) forward(he *heldEvent) {
	var edits []llmresp.Edit
	for i := range he.pieces {
		p := &he.pieces[i]
		ref := he.refs[i]
		var sent string
		if ref.ch != nil {
			var changed bool
			sent, changed = rewritePiece(ref, p.Text)
			if changed && (p.JSON || p.Kind == llmresp.KindToolArgs) {
				rw.block() // a sanitized argument would no longer be the JSON its tool reads
				return
			}
			rw.texts.Delta(p.Channel, p.Text, sent)
		} else {
			var ok bool
			if sent, ok = rw.texts.Whole(p.Channel, p.Text); !ok {
				if sent, ok = rw.scanWhole(p); !ok {
					return
				}
			}
		}
		if sent != p.Text {
			edits = append(edits, llmresp.Edit{Piece: p, Text: sent})
		}
	}
	out, err := llmresp.Rewrite(he.ev, edits)
	if err != nil {
		rw.refuse(err)
		return
	}
	rw.writeOut(out)
	if he.seq >= 0 {
		// An error event follows the last event the client got: held events
		// dropped by a block leave no gap in the numbers.
		rw.lastSeq = he.seq
	}
}

// scanWhole scans a whole text that is not its channel's deltas; ok is false when it blocked.
func (rw *respWriter) scanWhole(p *llmresp.Piece) (string, bool) {
	res := rw.f.engine.ScanString(p.Text)
	rw.wholeN += int64(len(p.Text))
	if len(res.Matches) == 0 {
		return p.Text, true
	}
	act := doNothing
	for i := range res.Matches {
		rw.saw(&res.Matches[i])
		a := rw.pol.of(&res.Matches[i])
		if a >= doLog {
			rw.found = append(rw.found, respMatch{p.Channel, res.Matches[i]})
		}
		act = max(act, a)
	}
	if act == doBlock || act == doSanitize && (p.JSON || p.Kind == llmresp.KindToolArgs) {
		rw.block()
		return "", false
	}
	if act == doSanitize {
		return rw.pol.sanitized(rw.f.engine, p.Text, &res), true
	}
	return p.Text, true
}
