package firewall

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/promptwall/promptwall/filetext"
	"github.com/promptwall/promptwall/llmreq"
)

// What the firewall cannot read. A request may carry files of a type it
// has no reader for (an office document, an archive), files the provider
// fetches by URL, and prompts given as token ids. The first two pass,
// counted in the Prompt-Firewall-Unscanned header, unless
// unscannable_files is refuse; token ids are refused unless token_ids is
// pass. Files that should be readable but are not (invalid base64, a
// charset the scan cannot decode, a PDF that does not open) are always
// refused: a lenient provider might read what the scan could not.

// Values of UnscannableFiles and TokenIDs.
const (
	UnscannedPass   = "pass"
	UnscannedRefuse = "refuse"
)

// HeaderUnscanned counts, on a forwarded request, the files and token-id
// prompts that went upstream unscanned by an operator's choice.
const HeaderUnscanned = "Prompt-Firewall-Unscanned"

// documentIndex is the index of a flagged document text: it is no JSON
// string of the body, and cannot be rewritten.
const documentIndex = -2

// extractLimits bounds the text extraction of one file.
func (f *Firewall) extractLimits() filetext.Limits {
	return filetext.Limits{MaxText: int(min(f.MaxBody, 1<<30))}
}

var (
	errTokenIDs = &failure{http.StatusBadRequest, "token_ids_not_scanned",
		"Request blocked by prompt firewall: a prompt given as token ids cannot be scanned"}
	// errUnscannableFile: a file the firewall cannot read, refused because
	// unscannable_files says so or because its reading failed.
	errUnscannableFile = &failure{http.StatusUnsupportedMediaType, "unscannable_file",
		"Request blocked by prompt firewall: the request carries a file whose text cannot be read for scanning"}
	errUnreadableFile = &failure{http.StatusBadRequest, "unreadable_file",
		"Request blocked by prompt firewall: a file in the request does not decode (invalid base64 or percent-encoding)"}
)

// scanUnreadable handles what llmreq could not read as text: token-id
// prompts, and the documents, whose text is extracted and scanned (and
// cannot be rewritten). It sets o.refusal when the request must be
// refused, and counts in o.unscanned what passes unread.
func (f *Firewall) scanUnreadable(req *llmreq.Request, o *outcome, client uint64) {
	if len(req.TokenIDs) > 0 {
		if f.TokenIDs != UnscannedPass {
			o.refusal = errTokenIDs
			return
		}
		o.unscanned += len(req.TokenIDs)
	}
	for i := range req.Documents {
		d := &req.Documents[i]
		if !f.scans(d.Role) {
			continue
		}
		text, state, fe := f.documentText(d)
		switch {
		case fe != nil:
			o.refusal = fe
			return
		case state == docUnscanned:
			if f.UnscannableFiles == UnscannedRefuse {
				o.refusal = errUnscannableFile
				return
			}
			o.unscanned++
			continue
		case state == docNone:
			continue
		}
		if res, hit := f.scanCached(text, client, o); !hit && len(res.Matches) > 0 {
			f.record(o, flagged{index: documentIndex, path: d.Path, role: d.Role, res: res})
		}
	}
}

// What a document holds for the scan.
type docState uint8

const (
	docNone      docState = iota // media, or no text at all: nothing to scan
	docText                      // text, scanned
	docUnscanned                 // text the firewall cannot read: fetched by the provider, or of a type no reader knows
)

// documentText returns the text of a document, or a failure for one that
// should be readable and is not.
func (f *Firewall) documentText(d *llmreq.Document) (string, docState, *failure) {
	switch {
	case strings.HasPrefix(d.Unreadable, "remote"):
		return "", docUnscanned, nil
	case d.Data == nil || (d.Unreadable != "" && !strings.HasPrefix(d.Unreadable, "charset ")):
		return "", 0, errUnreadableFile
	case d.Unreadable != "":
		// A charset llmreq does not decode; "charset utf-16 (byte order
		// mark)" leaves it to the mark.
		cs := strings.TrimPrefix(d.Unreadable, "charset ")
		if strings.IndexByte(cs, ' ') >= 0 {
			cs = ""
		}
		s, err := filetext.DecodeText(d.Data, cs)
		if err != nil {
			return "", 0, errUnsupportedCharset
		}
		return s, docText, nil
	}
	kind, text, err := filetext.ExtractFile(context.Background(), d.MediaType, "", d.Data, f.extractLimits())
	switch {
	case kind == filetext.Media:
		return "", docNone, nil
	case kind == filetext.Other:
		return "", docUnscanned, nil
	case errors.Is(err, filetext.ErrCharset):
		return "", 0, errUnsupportedCharset
	case err != nil:
		return "", 0, errUnscannableFile
	case text == "":
		return "", docNone, nil
	}
	return text, docText, nil
}
